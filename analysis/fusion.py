"""Fusion analysis: which graph ops of a block run as one kernel (TVM's FuseOps).

`plan_fusion(block)` decides, without changing the IR, a partition of the block's
graph compute ops (not weights and constants, which stay outside and become group
inputs) into groups, a name for each, and an order of the block's ops in which
every group is contiguous. The fuse-ops pass (transforms/fuse_ops.py) applies the
plan: a rewrite pattern forms one `graph.fused` per group.

Algorithm, on the block's dataflow graph (ops in program order are a topological
order; a value returned or used by a non-graph op flows to a sink):

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
   `max_depth` ops, or make a group non-convex (a path that leaves the group and
   comes back: the group could then not run as one kernel).
4. The order: groups and the block's other ops in a topological order of their
   dependences, earliest original position first (the terminator last). Groups
   are named `fused_<op names>` in that order, unique in the function.

With `enabled=False` every op is a group of its own (TVM's opt-level 0).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from xdsl.ir import Block, Operation

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
    """A group while the partition is built (union-find: `parent` once merged)."""

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


# -- the plan ------------------------------------------------------------------------------


@dataclass
class FusionGroup:
    """One kernel to be: its ops in program order and its unique name."""

    ops: list[Operation]
    name: str


@dataclass
class FusionPlan:
    """The groups of a block, and an order of all its ops (the terminator last) in
    which each group's ops are contiguous and every value is defined before use."""

    groups: list[FusionGroup]
    order: list[Operation]

    def group_starting_at(self) -> dict[Operation, FusionGroup]:
        return {grp.ops[0]: grp for grp in self.groups}


def _unique_name(ops: list[Operation], taken: set[str]) -> str:
    base = "fused_" + "_".join(op.name.removeprefix("graph.") for op in ops)
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def plan_fusion(block: Block, max_depth: int = 16, enabled: bool = True, taken: set[str] | None = None) -> FusionPlan:
    """The fusion plan of `block` (see the module docstring); `taken` holds group
    names already used in the function."""
    taken = set() if taken is None else set(taken)
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
    plan = FusionPlan([], [])
    for u in order:
        ops = units[u]
        plan.order.extend(ops)
        if len(ops) > 1 or is_node(ops[0]):
            plan.groups.append(FusionGroup(ops, _unique_name(ops, taken)))
    return plan


def _topological(units: list[list[Operation]], deps: list[set[int]], priority) -> list[int]:
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
