"""fuse-ops: partition each function's graph ops into fused groups (TVM's FuseOps).

Every graph op (not weights and constants, which stay outside and become group
inputs) ends up in exactly one `graph.fused` op, so code generation only sees
groups; a group is one kernel, and a value that stays inside one is never
written to memory.

Algorithm, on the function's dataflow graph (ops in program order are a
topological order; a value returned or used by a non-graph op flows to a sink):

1. Each op gets a kind from its fusion trait, refined as TVM refines it per edge:
   ELEMWISE (Broadcast with all operands of the result's shape, or a one-operand
   Injective op that keeps the type, like relu), BROADCAST, INJECTIVE (data
   movement), REDUCTION, OUT_FUSABLE (ComplexOutFusable), OPAQUE. A group's kind
   is the largest of its ops'.
2. The immediate post-dominator of each op: the least common ancestor of its
   consumers in the post-dominator tree (built in reverse program order); an op
   whose value reaches the sink has none, so nothing fuses past a function output.
3. Phase 0, in program order, for each op `src` with post-dominator `dom`:
   - a group with an OUT_FUSABLE anchor (conv2d, dense, matmul, pooling) takes
     `dom` when every op on every path from `src` to `dom`, and `dom`, is
     ELEMWISE/BROADCAST and reads the group's values at the result's shape
     (conv2d -> add bias -> relu);
   - an ELEMWISE/BROADCAST group fuses into `dom` when the ops between are at most
     INJECTIVE and `dom` is at most INJECTIVE or a REDUCTION (its group may
     already hold an anchor).
   Phase 1: an INJECTIVE group fuses into `dom` when the ops between are at most
   INJECTIVE and `dom` is at most INJECTIVE or a REDUCTION.
   Fusing `src` into `dom` merges every group on the paths between them. A merge
   is refused when it would put two anchors or an OPAQUE op in one group, exceed
   `max-depth` ops, or make a group non-convex (a path that leaves the group and
   comes back: the group could then not run as one kernel).
4. Dead ops (no result used) are dropped before step 1. Each group becomes a
   `graph.fused "fused_<op names>"` whose region takes the
   group's inputs (weights included) as block arguments and yields the values
   used outside it; ops are re-emitted in a topological order of the groups.

With `enabled=false` every op is a group of its own (to measure what fusion buys).

```mlir
%y = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
%z = graph.add %y, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
%r = graph.relu %z : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
```
becomes
```mlir
%r = graph.fused "fused_conv2d_add_relu" (%x, %w, %b) : (...) -> (tensor<1x4x6x6xf32>) {
^bb0(%a: tensor<1x3x8x8xf32>, %c: tensor<4x3x3x3xf32>, %d: tensor<4x1x1xf32>):
  %0 = graph.conv2d %a, %c : ...
  %1 = graph.add %0, %d : ...
  %2 = graph.relu %1 : ...
  graph.yield %2 : tensor<1x4x6x6xf32>
}
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from tilecraft.dialects import graph

ELEMWISE, BROADCAST, INJECTIVE, REDUCTION, OUT_FUSABLE, OPAQUE = 0, 1, 2, 3, 4, 8


def op_kind(op: Operation) -> int:
    """The op's fusion kind, ELEMWISE where its trait says more than it does."""
    shape = graph.shape_of(op.results[0].type) if len(op.results) == 1 else None
    if op.has_trait(graph.Broadcast):
        same = all(graph.shape_of(v.type) == shape for v in op.operands)
        return ELEMWISE if same else BROADCAST
    if op.has_trait(graph.Injective):
        elementwise = len(op.operands) == 1 and shape is not None and op.operands[0].type == op.results[0].type
        return ELEMWISE if elementwise and not isinstance(op, graph.TransposeOp) else INJECTIVE
    if op.has_trait(graph.Reduction):
        return REDUCTION
    if op.has_trait(graph.ComplexOutFusable):
        return OUT_FUSABLE
    return OPAQUE


def is_node(op: Operation) -> bool:
    """Ops that belong in groups: graph compute ops (not values, not fused groups)."""
    return isinstance(op, graph.GraphOp)


@dataclass(eq=False)
class Group:
    ops: list[Operation]
    kind: int
    anchors: int
    parent: Group | None = None

    def root(self) -> Group:
        g = self
        while g.parent is not None:
            g = g.parent
        return g


@dataclass
class DataflowGraph:
    """Graph ops of one block, their consumers, post-dominators and groups."""

    nodes: list[Operation]
    index: dict[Operation, int] = field(default_factory=dict)
    consumers: list[list[int]] = field(default_factory=list)
    ipdom: list[int | None] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)

    @staticmethod
    def build(block: Block) -> DataflowGraph:
        g = DataflowGraph([op for op in block.ops if is_node(op)])
        g.index = {op: n for n, op in enumerate(g.nodes)}
        sinks: set[int] = set()
        for n, op in enumerate(g.nodes):
            users = {u.operation for r in op.results for u in r.uses}
            g.consumers.append(sorted(g.index[u] for u in users if u in g.index))
            if any(u not in g.index for u in users) or not users:
                sinks.add(n)
        g.ipdom = [None] * len(g.nodes)
        depth = [0] * len(g.nodes)
        for n in reversed(range(len(g.nodes))):
            if n in sinks:
                continue
            lca: int | None = g.consumers[n][0]
            for c in g.consumers[n][1:]:
                lca = _lca(lca, c, g.ipdom, depth)
            g.ipdom[n] = lca
            depth[n] = depth[lca] + 1 if lca is not None else 0
        g.groups = [Group([op], op_kind(op), int(op_kind(op) == OUT_FUSABLE)) for op in g.nodes]
        return g

    def group(self, n: int) -> Group:
        return self.groups[n].root()

    def path(self, src: int, dom: int) -> set[int]:
        """Nodes on the paths from `src` to `dom`, both excluded."""
        seen: set[int] = set()
        stack = [c for c in self.consumers[src] if c != dom]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            stack.extend(c for c in self.consumers[n] if c != dom)
        return seen

    def convex(self, members: set[int]) -> bool:
        """No path leaves `members` and comes back into it."""
        last = max(members)
        stack = [c for m in members for c in self.consumers[m] if c not in members]
        seen: set[int] = set()
        while stack:
            n = stack.pop()
            if n in seen or n > last:
                continue
            seen.add(n)
            for c in self.consumers[n]:
                if c in members:
                    return False
                stack.append(c)
        return True

    def merge(self, nodes: set[int], max_depth: int) -> bool:
        """One group of all groups of `nodes`, unless that breaks a rule."""
        groups = {self.group(n) for n in nodes}
        if len(groups) < 2:
            return False
        ops = [op for grp in groups for op in grp.ops]
        anchors = sum(grp.anchors for grp in groups)
        kind = max(grp.kind for grp in groups)
        if len(ops) > max_depth or anchors > 1 or kind == OPAQUE:
            return False
        if not self.convex({self.index[op] for op in ops}):
            return False
        into = Group(sorted(ops, key=self.index.__getitem__), kind, anchors)
        for grp in groups:
            grp.parent, grp.ops = into, []
        return True


def _lca(a: int | None, b: int | None, ipdom: list[int | None], depth: list[int]) -> int | None:
    while a is not None and b is not None and a != b:
        if depth[a] < depth[b]:
            b = ipdom[b]
        else:
            a = ipdom[a]
    return a if a == b else None


def _reads_at_result_shape(g: DataflowGraph, n: int, inside: set[int]) -> bool:
    """Whether op `n` reads every value from `inside` at its result's own shape."""
    op = g.nodes[n]
    shape = graph.shape_of(op.results[0].type)
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, Operation) and g.index.get(owner) in inside and graph.shape_of(v.type) != shape:
            return False
    return True


def _try_fuse(g: DataflowGraph, src: int, phase: int, max_depth: int) -> None:
    dom = g.ipdom[src]
    if dom is None or g.group(src) is g.group(dom):
        return
    kind = g.group(src).kind
    between = g.path(src, dom)
    between_kinds = [g.group(n).kind for n in between]
    dom_op_kind = op_kind(g.nodes[dom])
    if kind == OUT_FUSABLE and phase == 0:
        inside = {g.index[op] for op in g.group(src).ops} | between
        if max(between_kinds + [g.group(dom).kind]) > BROADCAST:
            return
        if not all(_reads_at_result_shape(g, n, inside) for n in between | {dom}):
            return
    elif kind <= BROADCAST and phase == 0:
        if max(between_kinds, default=ELEMWISE) > INJECTIVE:
            return
        if dom_op_kind > INJECTIVE and dom_op_kind != REDUCTION:
            return
    elif kind == INJECTIVE and phase == 1:
        if max(between_kinds, default=ELEMWISE) > INJECTIVE:
            return
        if dom_op_kind > INJECTIVE and dom_op_kind != REDUCTION:
            return
        if g.group(dom).kind > REDUCTION:
            return  # an anchor's epilogue takes only elementwise ops
    else:
        return
    g.merge(between | {src, dom}, max_depth)


def partition(block: Block, max_depth: int = 16, enabled: bool = True) -> list[list[Operation]]:
    """The groups of the block's graph ops, each in program order."""
    g = DataflowGraph.build(block)
    if enabled:
        for phase in (0, 1):
            for n in range(len(g.nodes)):
                _try_fuse(g, n, phase, max_depth)
    roots: dict[int, Group] = {}
    for n in range(len(g.nodes)):
        roots.setdefault(id(g.group(n)), g.group(n))
    return [grp.ops for grp in roots.values()]


# -- rewriting groups into graph.fused ---------------------------------------------------


def _unique_name(ops: list[Operation], taken: set[str]) -> str:
    base = "fused_" + "_".join(op.name.removeprefix("graph.") for op in ops)
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _make_fused(ops: list[Operation], name: str) -> graph.FusedOp:
    """Move `ops` (a convex group, in program order) into a new graph.fused."""
    members = set(ops)
    inputs: list[SSAValue] = []
    outputs: list[SSAValue] = []
    for op in ops:
        for v in op.operands:
            if v.owner not in members and v not in inputs:
                inputs.append(v)
        outputs.extend(r for r in op.results if any(u.operation not in members for u in r.uses))
    body = Block(arg_types=[v.type for v in inputs])
    fused = graph.FusedOp(name, inputs, [r.type for r in outputs], Region(body))
    for r, new in zip(outputs, fused.outputs):
        new.name_hint = r.name_hint
        r.replace_uses_with_if(new, lambda use: use.operation not in members)
    for v, arg in zip(inputs, body.args):
        v.replace_uses_with_if(arg, lambda use: use.operation in members)
    for op in ops:
        op.detach()
        body.add_op(op)
    body.add_op(graph.YieldOp(outputs))
    return fused


def fuse_block(block: Block, max_depth: int = 16, enabled: bool = True, taken: set[str] | None = None) -> None:
    """Put every graph op of `block` into a graph.fused, re-emitting the block in a
    topological order of groups and other ops (first original position first)."""
    taken = set() if taken is None else taken
    # Dead graph ops go first: they are Pure, but a graph.fused is not, so dce
    # could not remove them once grouped.
    for op in reversed(list(block.ops)):
        if is_node(op) and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)
    groups = partition(block, max_depth, enabled)
    position = {op: n for n, op in enumerate(block.ops)}
    unit_of: dict[Operation, int] = {}
    units: list[list[Operation]] = []
    for ops in groups:
        for op in ops:
            unit_of[op] = len(units)
        units.append(ops)
    for op in block.ops:
        if op not in unit_of:
            unit_of[op] = len(units)
            units.append([op])
    deps: list[set[int]] = [set() for _ in units]
    for u, ops in enumerate(units):
        for op in ops:
            for v in op.operands:
                owner = v.owner
                if isinstance(owner, Operation) and owner in unit_of and unit_of[owner] != u:
                    deps[u].add(unit_of[owner])
    terminator = block.last_op
    order = _topological(units, deps, lambda u: (units[u][0] is terminator, min(position[op] for op in units[u])))
    for u in order:
        ops = units[u]
        if len(ops) == 1 and not is_node(ops[0]):
            ops[0].detach()
            block.add_op(ops[0])
        else:
            block.add_op(_make_fused(ops, _unique_name(ops, taken)))


def _topological(units, deps: list[set[int]], priority) -> list[int]:
    import heapq

    users: list[list[int]] = [[] for _ in units]
    waiting = [len(d) for d in deps]
    for u, d in enumerate(deps):
        for p in d:
            users[p].append(u)
    ready = [(priority(u), u) for u in range(len(units)) if not waiting[u]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, u = heapq.heappop(ready)
        order.append(u)
        for c in users[u]:
            waiting[c] -= 1
            if not waiting[c]:
                heapq.heappush(ready, (priority(c), c))
    assert len(order) == len(units), "fused groups must form a DAG (groups are convex)"
    return order


@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Partition graph ops into fused groups by TVM's rules (see the module docstring)."""

    name = "fuse-ops"

    max_depth: int = 16
    """The most ops one group may hold."""

    enabled: bool = True
    """False puts every op in a group of its own (fusion off, for comparison)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_depth < 1:
            raise PassFailedException(f"fuse-ops: max-depth must be at least 1, not {self.max_depth}")
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                taken = {o.group_name.data for o in f.walk() if isinstance(o, graph.FusedOp)}
                fuse_block(f.body.block, self.max_depth, self.enabled, taken)
