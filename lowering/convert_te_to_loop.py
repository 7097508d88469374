"""convert-te-to-loop: apply a function's schedule and emit its loop program.

For each te function (a `func.func` with `te.compute`s) this pass

1. inlines the stages marked `compute_inline` (te-inline),
2. replays the `sched.schedule` into stages (`analysis.schedule`),
3. emits, in dependence order, the loop nest of every stage computed at the root;
   a stage computed at a consumer's loop is emitted inside that loop, over the
   region bound inference (`analysis.bounds`) finds the loop body reads, into a
   buffer of that region's size (`loop.alloc` in the stage's memory scope),
4. turns tensors into memrefs: inputs first, then one output memref per result.

A function that calls te functions (a model's graph function, after
convert-graph-to-te) is rewritten to the same memref calling convention by
`lowering/graph_function.py`, so the module stays one valid program. Index
arithmetic is emitted with div/mod simplified by the loop extents
(`analysis.expr.simplify`).

Each stage's loops follow its leaf axes in order, normalized to `0 <= v < extent`;
the root indices are rebuilt from the leaves (`outer * factor + inner` for a split,
div/mod for a fuse) plus the region's offset. A split that does not divide its
extent, or a region that may run past the tensor's edge, gets a `loop.guard`.
A reduction is emitted as TVM does: its init nest sits just outside the first
reduce loop (repeating the spatial loops inside it), then the update nest.

```mlir
%C = te.compute "C" (%i: "i") -> tensor<10xf32> {...}     // schedule: split %i by 4
```
becomes
```mlir
loop.for %i.outer = 0 to 3 {
  loop.for %i.inner = 0 to 4 {
    %i = (arith: i.outer * 4 + i.inner)
    %in = arith.cmpi slt, %i, %c10 : index
    loop.guard %in { ... memref.store %v, %C[%i] ... }
  }
}
```
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilecraft.analysis.bounds import index_expr, infer_region
from tilecraft.analysis.expr import Expr, bounds, simplify
from tilecraft.analysis.schedule import (
    MAX_UNROLL,
    Fuse,
    IterVar,
    ScheduleState,
    Split,
    Stage,
    find_schedule,
    leaf_extents,
)
from tilecraft.dialects import loop, te
from tilecraft.lowering.loop_builder import Cursor, emit_index
from tilecraft.transforms.te_inline import inline_function
from tilecraft.utils.diagnostics import OpError

Env = dict[object, SSAValue]


@dataclass
class Buffer:
    value: SSAValue
    offsets: list[Expr]


@dataclass
class Guard:
    kind: str  # the axis kind it belongs to: "spatial" or "reduce"
    expr: Expr
    lo: int | None  # require expr >= lo
    hi: int | None  # require expr < hi


class _BeforeCursor(Cursor):
    """Inserts before a given op (used to rewrite reads nested in scf.if regions)."""

    def __init__(self, op: Operation, scope: Cursor):
        super().__init__(op.parent_block(), scope.parent, scope.owner, scope.binds)
        self.anchor = op

    def insert(self, op: Operation) -> Operation:
        self.block.insert_op_before(op, self.anchor)
        return op


class FunctionLowering:
    def __init__(self, te_func: func.FuncOp):
        self.te_func = te_func
        inline_function(te_func)
        self.state = ScheduleState.replay(find_schedule(te_func), te_func)
        self.buffers: dict[Stage, Buffer] = {}
        self.extents: dict[object, int] = {}
        self.root_values: dict[Stage, dict[IterVar, Expr]] = {}
        self.regions: dict[Stage, tuple[list[Expr], list[int]]] = {}
        self.leaf_ext: dict[Stage, dict[IterVar, int]] = {}
        self._sym: dict[SSAValue, Expr | None] = {}
        self._infer_domains()

    # -- bound inference ----------------------------------------------------------

    def _infer_domains(self):
        """Region, loop extents and root index expressions of every stage, consumers
        first (TVM's InferBound): a stage's region depends on its readers' loops."""
        for s in reversed(self.state.topological_order()):
            if s.kind == "input" or s.attach == "inline":
                continue
            if s.attach == "at":
                mins, sizes = infer_region(s, self._requests(s), self.root_values, self.extents)
            else:
                mins, sizes = [Expr()] * len(s.shape), list(s.shape)
            self.regions[s] = (mins, sizes)
            root_mins = list(mins) + [Expr(const=lo) for lo, _ in s.root_bounds()[len(s.shape) :]]
            root_ext = list(sizes) + [hi - lo for lo, hi in s.root_bounds()[len(s.shape) :]]
            ext = leaf_extents(s, root_ext)
            for v in s.leaves:
                if v.annotation == "unrolled" and ext[v] > MAX_UNROLL:
                    raise OpError(
                        v.annotation_op,
                        f"convert-te-to-loop: axis '{v.name}' has extent {ext[v]}; unrolling more "
                        f"than {MAX_UNROLL} iterations is refused — split it first.",
                    )
            self.leaf_ext[s] = ext
            self.extents.update(ext)
            local = _local_values(s, ext)
            self.root_values[s] = {r: root_mins[k] + local[r] for k, r in enumerate(s.root)}

    def _requests(self, p: Stage) -> list[tuple[Stage, set]]:
        """Each reader of `p` with the loops that run inside `p`'s attach point."""
        consumer, axis = p.attach_stage, p.attach_axis
        order = consumer.loop_order
        after = set(order[order.index(axis) + 1 :])
        requests = []
        for reader in self.state.readers(p):
            free = set(after)
            s = reader
            while s is not consumer:
                free |= set(s.leaves)
                s = s.attach_stage
            requests.append((reader, free))
        return requests

    # -- the function ---------------------------------------------------------

    def lower(self) -> func.FuncOp:
        stages = self.state.stages
        inputs = [s for s in stages if s.kind == "input"]
        ret = self.te_func.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        outputs: list[Stage] = []
        for v in ret.arguments:
            stage = self.state.stage_of.get(v)
            if stage is None or stage.kind == "input" or stage in outputs:
                raise OpError(
                    ret,
                    "convert-te-to-loop: each result must be a distinct te.compute "
                    "(return a copy to return an input).",
                )
            outputs.append(stage)
        arg_stages = inputs + outputs
        types = [MemRefType(s.element_type, s.shape) for s in arg_stages]
        block = Block(arg_types=types)
        for arg, s in zip(block.args, arg_stages):
            arg.name_hint = s.name
            self.buffers[s] = Buffer(arg, [Expr()] * len(s.shape))
        cur = Cursor(block)
        order = self.state.topological_order()
        for s in order:
            if s.kind != "input" and s.attach == "root" and s not in outputs:
                alloc = loop.AllocOp(s.name, s.scope, MemRefType(s.element_type, s.shape))
                alloc.buffer.name_hint = s.name
                cur.insert(alloc)
                self.buffers[s] = Buffer(alloc.buffer, [Expr()] * len(s.shape))
        for s in order:
            if s.kind != "input" and s.attach == "root":
                self._emit_stage(s, cur, {})
        block.add_op(func.ReturnOp())
        _erase_unused_arith(block)
        arg_attrs = ArrayAttr(
            [DictionaryAttr({"tc.name": StringAttr(s.name)}) for s in arg_stages]
        )
        return func.FuncOp(
            self.te_func.sym_name.data, (types, []), Region(block), arg_attrs=arg_attrs
        )

    # -- one stage ------------------------------------------------------------

    def _emit_stage(self, s: Stage, cur: Cursor, env: Env):
        ext = self.leaf_ext[s]
        local = _local_values(s, ext)
        guards = self._guards(s, ext, local)
        order = s.loop_order
        reduce_pos = next((n for n, v in enumerate(order) if v.kind == "reduce"), None)
        if reduce_pos is None:
            body = lambda c, e: self._emit_assign(s, c, e, guards)  # noqa: E731
            self._emit_loops(s, order, ext, cur, env, True, body)
            return
        common, rest = order[:reduce_pos], order[reduce_pos:]
        init_leaves = [v for v in rest if v.kind == "spatial"]

        def init_and_update(c: Cursor, e: Env):
            init = lambda c2, e2: self._emit_init(s, c2, e2, guards)  # noqa: E731
            self._emit_loops(s, init_leaves, ext, c, e, False, init)
            update = lambda c2, e2: self._emit_update(s, c2, e2, guards)  # noqa: E731
            self._emit_loops(s, rest, ext, c, e, True, update)

        self._emit_loops(s, common, ext, cur, env, True, init_and_update)

    def _emit_loops(
        self,
        s: Stage,
        leaves: list[IterVar],
        ext: dict[IterVar, int],
        cur: Cursor,
        env: Env,
        attach: bool,
        body: Callable[[Cursor, Env], None],
    ):
        if not leaves:
            body(cur, env)
            return
        v = leaves[0]
        for_op = loop.ForOp(0, ext[v], v.annotation, var_name=v.name)
        cur.insert(for_op)
        inner_env = {**env, v: for_op.var}
        inner = cur.child(for_op, binds=v)
        if attach:
            for p in self.state.topological_order():
                if p.attach == "at" and p.attach_axis is v:
                    self._emit_attached(p, inner, inner_env)
        self._emit_loops(s, leaves[1:], ext, inner, inner_env, attach, body)

    def _emit_attached(self, p: Stage, cur: Cursor, env: Env):
        mins, sizes = self.regions[p]
        alloc = loop.AllocOp(p.name, _attached_scope(p, sizes), MemRefType(p.element_type, sizes))
        alloc.buffer.name_hint = p.name
        cur.insert(alloc)
        self.buffers[p] = Buffer(alloc.buffer, mins)
        self._emit_stage(p, cur, env)

    def _guards(self, s: Stage, ext: dict[IterVar, int], local: dict[IterVar, Expr]) -> list[Guard]:
        def rng(a):
            return (0, self.extents[a] - 1)

        guards: list[Guard] = []

        def add(g: Guard):
            if all((g.expr, g.lo, g.hi) != (h.expr, h.lo, h.hi) for h in guards):
                guards.append(g)

        for rel in s.relations:
            if isinstance(rel, Split):
                e = local[rel.parent]
                if bounds(e, rng)[1] >= ext[rel.parent]:
                    add(Guard(rel.parent.kind, e, None, ext[rel.parent]))
        for d, r in enumerate(s.spatial_root):
            g = self.root_values[s][r]
            lo, hi = bounds(g, rng)
            need_lo = 0 if lo < 0 else None
            need_hi = s.shape[d] if hi >= s.shape[d] else None
            if need_lo is not None or need_hi is not None:
                add(Guard("spatial", g, need_lo, need_hi))
        return guards

    def _guarded(self, cur: Cursor, env: Env, guards: list[Guard], kinds: tuple[str, ...]) -> Cursor:
        cond: SSAValue | None = None
        for g in guards:
            if g.kind not in kinds:
                continue
            v = self._index(g.expr, env, cur)
            checks = []
            if g.lo is not None:
                checks.append(cur.value(arith.CmpiOp(v, cur.index_const(g.lo), "sge")))
            if g.hi is not None:
                checks.append(cur.value(arith.CmpiOp(v, cur.index_const(g.hi), "slt")))
            for c in checks:
                cond = c if cond is None else cur.value(arith.AndIOp(cond, c))
        if cond is None:
            return cur
        guard = loop.GuardOp(cond)
        cur.insert(guard)
        return cur.child(guard)

    def _index(self, expr: Expr, env: Env, cur: Cursor) -> SSAValue:
        """Emit index `expr`, its div/mod simplified with the loop extents."""
        return emit_index(simplify(expr, lambda a: (0, self.extents[a] - 1)), env, cur)

    # -- bodies -----------------------------------------------------------------

    def _root_ssa(self, s: Stage, roots: list[IterVar], cur: Cursor, env: Env) -> list[SSAValue]:
        """SSA values of root axes, and the symbolic view of the body's index values."""
        self._sym = {v: Expr.var(a) for a, v in env.items()}
        out = []
        for r in roots:
            expr = self.root_values[s][r]
            v = self._index(expr, env, cur)
            if isinstance(v.owner, (arith.AddiOp, arith.MuliOp)):
                v.name_hint = r.name
            self._sym[v] = expr
            out.append(v)
        return out

    def _bind_args(self, args, roots: list[IterVar], s: Stage, mapping: dict, values: list[SSAValue]):
        for arg, r, v in zip(args, roots, values):
            mapping[arg] = v
            self._sym[arg] = self.root_values[s][r]

    def _own_indices(self, s: Stage, cur: Cursor, env: Env) -> list[SSAValue]:
        buf = self.buffers[s]
        return [
            self._index(self.root_values[s][r] - off, env, cur)
            for r, off in zip(s.spatial_root, buf.offsets)
        ]

    def _emit_assign(self, s: Stage, cur: Cursor, env: Env, guards: list[Guard]):
        cur = self._guarded(cur, env, guards, ("spatial", "reduce"))
        spatial = self._root_ssa(s, s.spatial_root, cur, env)
        if s.kind == "copy":
            value = self._load(s.source, spatial, cur, env)
        else:
            mapping: dict = {}
            self._bind_args(s.compute.body.block.args, s.spatial_root, s, mapping, spatial)
            value = self._clone_body(s, s.compute.body.block, mapping, cur, env)
        cur.insert(memref.StoreOp.get(value, self.buffers[s].value, self._own_indices(s, cur, env)))

    def _emit_init(self, s: Stage, cur: Cursor, env: Env, guards: list[Guard]):
        cur = self._guarded(cur, env, guards, ("spatial",))
        init = cur.value(_identity(s.compute.reduce.kind.data, s.element_type))
        cur.insert(memref.StoreOp.get(init, self.buffers[s].value, self._own_indices(s, cur, env)))

    def _emit_update(self, s: Stage, cur: Cursor, env: Env, guards: list[Guard]):
        cur = self._guarded(cur, env, guards, ("spatial", "reduce"))
        compute = s.compute
        reduce = compute.reduce
        roots = self._root_ssa(s, s.root, cur, env)
        n = len(s.spatial_root)
        mapping: dict = {}
        self._bind_args(compute.body.block.args, s.spatial_root, s, mapping, roots[:n])
        self._bind_args(reduce.body.block.args, s.reduce_root, s, mapping, roots[n:])
        for op in compute.body.block.ops:
            if op is reduce:
                break
            self._clone_op(s, op, mapping, cur, env)
        term = self._clone_body(s, reduce.body.block, mapping, cur, env)
        buf = self.buffers[s]
        idx = self._own_indices(s, cur, env)
        acc = cur.value(memref.LoadOp.get(buf.value, idx))
        new = cur.value(_combine(reduce.kind.data, acc, term))
        cur.insert(memref.StoreOp.get(new, buf.value, idx))

    def _clone_body(self, s: Stage, block: Block, mapping: dict, cur: Cursor, env: Env) -> SSAValue:
        for op in block.ops:
            if isinstance(op, te.YieldOp):
                return mapping.get(op.value, op.value)
            if isinstance(op, te.ReduceOp):
                raise OpError(op, "convert-te-to-loop: a te.reduce must be the yielded value.")
            self._clone_op(s, op, mapping, cur, env)
        raise AssertionError("te bodies end with te.yield")

    def _clone_op(self, s: Stage, op: Operation, mapping: dict, cur: Cursor, env: Env):
        if isinstance(op, te.ReadOp):
            mapping[op.result] = self._load(s.reads[op.tensor], list(op.indices), cur, env, mapping)
            return
        clone = op.clone(value_mapper=mapping)
        cur.insert(clone)
        for nested in list(clone.walk()):
            if isinstance(nested, te.ReadOp):
                before = _BeforeCursor(nested, cur)
                v = self._load(s.reads[nested.tensor], list(nested.indices), before, env)
                Rewriter.replace_op(nested, [], [v])
            elif isinstance(nested, te.YieldOp):
                raise OpError(op, "convert-te-to-loop: unexpected te.yield inside a nested region.")

    def _load(
        self, producer: Stage, idx: list[SSAValue], cur: Cursor, env: Env, mapping: dict | None = None
    ) -> SSAValue:
        """Load `producer[idx]` from its buffer, shifted by the buffer's offset.
        Indices the symbolic view can follow are rebuilt (and hoisted) from loop variables."""
        buf = self.buffers[producer]
        shifted = []
        for i, off in zip(idx, buf.offsets):
            expr = index_expr(i, self._sym)
            if expr is not None:
                shifted.append(self._index(expr - off, env, cur))
                continue
            i = mapping.get(i, i) if mapping is not None else i
            if off.is_const and off.const == 0:
                shifted.append(i)
            else:
                shifted.append(cur.value(arith.SubiOp(i, emit_index(off, env, cur))))
        return cur.value(memref.LoadOp.get(buf.value, shifted))


LOCAL_BYTES = 64 * 1024


def _attached_scope(p: Stage, sizes: list[int]) -> str:
    """A stage computed inside a loop lives for one iteration of it, on the thread
    that runs it: unless its schedule chose a scope, a small buffer is "local"
    (the stack, no heap allocation per iteration), a large one "global"."""
    if p.scope_explicit:
        return p.scope
    nbytes = math.prod(sizes) * _element_bytes(p.element_type)
    return "local" if nbytes <= LOCAL_BYTES else "global"


def _element_bytes(t: Attribute) -> int:
    return max(1, t.bitwidth // 8)


_INDEX_ARITH = (
    arith.AddiOp, arith.MuliOp, arith.ConstantOp, arith.SubiOp, arith.FloorDivSIOp, arith.RemSIOp
)  # fmt: skip


def _erase_unused_arith(block: Block):
    """Drop index arithmetic no load or store ended up using (innermost first)."""
    for op in reversed(list(block.walk())):
        if isinstance(op, _INDEX_ARITH) and not op.results[0].uses:
            op.detach()
            op.erase()


def _local_values(s: Stage, ext: dict[IterVar, int]) -> dict[IterVar, Expr]:
    """Every axis of `s` as an expression in its leaf axes (relations undone in reverse)."""
    value: dict[IterVar, Expr] = {v: Expr.var(v) for v in s.leaves}
    for rel in reversed(s.relations):
        if isinstance(rel, Split):
            value[rel.parent] = value[rel.outer] * ext[rel.inner] + value[rel.inner]
        elif isinstance(rel, Fuse):
            rest = value[rel.fused]
            for p in reversed(rel.parents[1:]):
                value[p] = rest.mod(ext[p])
                rest = rest.floordiv(ext[p])
            value[rel.parents[0]] = rest
    return value


def _identity(kind: str, t: Attribute) -> Operation:
    if isinstance(t, IntegerType):
        width = t.width.data
        lo, hi = -(2 ** (width - 1)), 2 ** (width - 1) - 1
        v = {"sum": 0, "prod": 1, "max": lo, "min": hi}[kind]
        return arith.ConstantOp(IntegerAttr(v, t))
    v = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}[kind]
    return arith.ConstantOp(FloatAttr(v, t))


def _combine(kind: str, acc: SSAValue, term: SSAValue) -> Operation:
    is_int = isinstance(acc.type, IntegerType)
    ops = {
        "sum": (arith.AddiOp, arith.AddfOp),
        "prod": (arith.MuliOp, arith.MulfOp),
        "max": (arith.MaxSIOp, arith.MaximumfOp),
        "min": (arith.MinSIOp, arith.MinimumfOp),
    }[kind]
    return (ops[0] if is_int else ops[1])(acc, term)


def te_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [
        f
        for f in module.body.block.ops
        if isinstance(f, func.FuncOp) and any(isinstance(o, te.ComputeOp) for o in f.walk())
    ]


@dataclass(frozen=True)
class ConvertTeToLoopPass(ModulePass):
    """Lower every te function (with its schedule) to the loop dialect, and the
    functions that call them (a model's graph function) to the same memref calling
    convention (`lowering/graph_function.py`)."""

    name = "convert-te-to-loop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from tilecraft.lowering.graph_function import bufferize, is_graph_function

        kernels = te_functions(op)
        names = {f.sym_name.data for f in kernels}
        callers = [
            f
            for f in op.body.block.ops
            if isinstance(f, func.FuncOp) and f not in kernels and is_graph_function(f, names)
        ]
        lowered: dict[str, func.FuncOp] = {}
        for f in kernels:
            new = FunctionLowering(f).lower()
            Rewriter.replace_op(f, new)
            lowered[new.sym_name.data] = new
        for f in callers:
            Rewriter.replace_op(f, bufferize(f, lowered))
