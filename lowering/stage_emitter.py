"""Emitting the loop nest of one te stage, as its schedule and bounds dictate.

`StageEmitter.emit` builds the loops of a stage (its leaf axes in loop order,
normalized to `0 <= v < extent`), the stages computed at those loops (each in a
buffer of the region bound inference gave it), guards where a split does not
divide or a region may run past the tensor's edge, and the body: the te.compute's
region cloned with `te.read`s turned into `memref.load`s of the producers' buffers.
A reduction is emitted as TVM does: its init nest sits just outside the first
reduce loop (repeating the spatial loops inside it), then the update nest.

Every decision it reads was made before: the stages and their relations by the
schedule replay (`dialects.sched_replay`), regions, extents and root index expressions
by bound inference (`analysis.bounds`), the buffers of root stages by
convert-te-to-loop. Index arithmetic is emitted with div/mod simplified by the loop
extents (`analysis.expr.simplify`) and hoisted by `lowering.loop_builder`; what no
load or store ends up using is left for dead-code elimination.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from tilecraft.analysis.bounds import (
    Bounds,
    Extent,
    Size,
    atom_range,
    axis_values,
    extent_of,
    index_expr,
    provably_below,
)
from tilecraft.analysis.expr import Expr, bounds, simplify
from tilecraft.analysis.tensorize import TensorizeMatch, check_tensorize
from tilecraft.dialects.sched_replay import (
    IterVar,
    ScheduleState,
    Split,
    Stage,
    read_producers,
)
from tilecraft.dialects import loop, te
from tilecraft.lowering.loop_builder import Cursor, emit_floor_mod, emit_index
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.names import name_hint

Env = dict[object, SSAValue]


@dataclass
class Buffer:
    """Where a stage's tensor lives: a memref, and the index of its first element
    in the whole tensor (nonzero for a region computed at a consumer's loop)."""

    value: SSAValue
    offsets: list[Expr]


@dataclass
class Guard:
    kind: str  # the axis kind it belongs to: "spatial" or "reduce"
    expr: Expr
    lo: int | None  # require expr >= lo
    hi: Extent | None  # require expr < hi


class _BeforeCursor(Cursor):
    """Inserts before a given op (used to rewrite reads nested in scf.if regions)."""

    def __init__(self, op: Operation, scope: Cursor):
        super().__init__(op.parent_block(), scope.parent, scope.owner, scope.binds)
        self.anchor = op

    def insert(self, op: Operation) -> Operation:
        self.block.insert_op_before(op, self.anchor)
        return op


class StageEmitter:
    """Emits loop nests of the stages of one replayed schedule. `buffers` holds the
    buffers of the root stages (and receives those of attached ones)."""

    def __init__(self, state: ScheduleState, bounds_: Bounds, buffers: dict[Stage, Buffer]):
        self.state = state
        self.bounds = bounds_
        self.buffers = buffers
        self.order = state.topological_order()
        self.reads = read_producers(state)
        self._sym: dict[SSAValue, Expr | None] = {}
        self.tensorized = self._match_tensorized()

    # -- one stage ------------------------------------------------------------

    def emit(self, s: Stage, cur: Cursor, env: Env):
        ext = self.bounds.leaf_extents[s]
        local = axis_values(s, ext)
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
        ext: dict[IterVar, Extent],
        cur: Cursor,
        env: Env,
        attach: bool,
        body: Callable[[Cursor, Env], None],
    ):
        if not leaves:
            body(cur, env)
            return
        v = leaves[0]
        if attach and v is s.tensorize_axis:
            self._emit_tensor_intrin(s, cur, env)
            return
        extent = ext[v]
        if not isinstance(extent, int):  # (serial or parallel: convert-te-to-loop checked)
            extent = self._index(extent, env, cur)
        for_op = loop.ForOp(0, extent, v.annotation, var_name=v.name)
        cur.insert(for_op)
        inner_env = {**env, v: for_op.var}
        inner = cur.child(for_op, binds=v)
        if attach:
            for p in self.order:
                if p.attach == "at" and p.attach_axis is v:
                    self._emit_attached(p, inner, inner_env)
        self._emit_loops(s, leaves[1:], ext, inner, inner_env, attach, body)

    def _emit_attached(self, p: Stage, cur: Cursor, env: Env):
        mins, sizes = self.bounds.regions[p]
        if all(isinstance(n, int) for n in sizes):
            alloc = loop.AllocOp(p.name, _attached_scope(p, sizes), MemRefType(p.element_type, sizes))
        else:  # sizes known when it runs: on the heap
            dims = [n if isinstance(n, int) else DYNAMIC_INDEX for n in sizes]
            operands = [self._index(n, env, cur) for n in sizes if not isinstance(n, int)]
            alloc = loop.AllocOp(p.name, "global", MemRefType(p.element_type, dims), operands)
        alloc.buffer.name_hint = name_hint(p.name)
        cur.insert(alloc)
        self.buffers[p] = Buffer(alloc.buffer, mins)
        self.emit(p, cur, env)

    def _guards(self, s: Stage, ext: dict[IterVar, Extent], local: dict[IterVar, Expr]) -> list[Guard]:
        extents = self.bounds.extents
        rng = atom_range(extents)
        guards: list[Guard] = []

        def add(g: Guard):
            if all((g.expr, g.lo, g.hi) != (h.expr, h.lo, h.hi) for h in guards):
                guards.append(g)

        for rel in s.relations:
            if isinstance(rel, Split):
                e = local[rel.parent]
                if not provably_below(e, ext[rel.parent], extents):
                    add(Guard(rel.parent.kind, e, None, ext[rel.parent]))
        for d, r in enumerate(s.spatial_root):
            g = self.bounds.root_values[s][r]
            size = extent_of(s.shape[d])
            need_lo = 0 if bounds(g, rng)[0] < 0 else None
            need_hi = None if provably_below(g, size, extents) else size
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
                hi = cur.index_const(g.hi) if isinstance(g.hi, int) else self._index(g.hi, env, cur)
                checks.append(cur.value(arith.CmpiOp(v, hi, "slt")))
            for c in checks:
                cond = c if cond is None else cur.value(arith.AndIOp(cond, c))
        if cond is None:
            return cur
        guard = loop.GuardOp(cond)
        cur.insert(guard)
        return cur.child(guard)

    def _index(self, expr: Expr, env: Env, cur: Cursor) -> SSAValue:
        """Emit index `expr`, its div/mod simplified with the loop extents."""
        return emit_index(simplify(expr, atom_range(self.bounds.extents)), env, cur)

    # -- bodies -----------------------------------------------------------------

    def _root_ssa(self, s: Stage, roots: list[IterVar], cur: Cursor, env: Env) -> list[SSAValue]:
        """SSA values of root axes, and the symbolic view of the body's index values."""
        self._sym = {v: Expr.var(a) for a, v in env.items()}
        out = []
        for r in roots:
            expr = self.bounds.root_values[s][r]
            v = self._index(expr, env, cur)
            if isinstance(v.owner, (arith.AddiOp, arith.MuliOp)):
                v.name_hint = name_hint(r.name)
            self._sym[v] = expr
            out.append(v)
        return out

    def _bind_args(self, args, roots: list[IterVar], s: Stage, mapping: dict, values: list[SSAValue]):
        for arg, r, v in zip(args, roots, values):
            mapping[arg] = v
            self._sym[arg] = self.bounds.root_values[s][r]

    def _own_indices(self, s: Stage, cur: Cursor, env: Env) -> list[SSAValue]:
        buf = self.buffers[s]
        return [
            self._index(self.bounds.root_values[s][r] - off, env, cur)
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
        init = cur.value(te.reduce_identity(s.compute.reduce.kind.data, s.element_type))
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
        new = cur.value(te.reduce_combine(reduce.kind.data, acc, term))
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
            mapping[op.result] = self._load(self.reads[op], list(op.indices), cur, env, mapping)
            return
        if isinstance(op, te.FloorModOp):
            lhs, rhs = (mapping.get(v, v) for v in op.operands)
            mapping[op.result] = emit_floor_mod(cur, lhs, rhs)
            return
        if isinstance(op, te.AssertOp):
            cur.insert(loop.AssertOp(mapping.get(op.cond, op.cond), op.message))
            return
        if isinstance(op, te.SizeOp):
            mapping[op.result] = env[Size(op.size_name.data)]
            return
        clone = op.clone(value_mapper=mapping)
        cur.insert(clone)
        originals = dict(zip(clone.walk(), op.walk()))
        for nested in list(clone.walk()):
            if isinstance(nested, te.ReadOp):
                before = _BeforeCursor(nested, cur)
                v = self._load(self.reads[originals[nested]], list(nested.indices), before, env)
                Rewriter.replace_op(nested, [], [v])
            elif isinstance(nested, te.FloorModOp):
                v = emit_floor_mod(_BeforeCursor(nested, cur), nested.lhs, nested.rhs)
                Rewriter.replace_op(nested, [], [v])
            elif isinstance(nested, te.AssertOp):
                Rewriter.replace_op(nested, [loop.AssertOp(nested.cond, nested.message)], [])
            elif isinstance(nested, te.SizeOp):
                Rewriter.replace_op(nested, [], [env[Size(nested.size_name.data)]])
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

    # -- tensorized regions -------------------------------------------------------

    def _match_tensorized(self) -> dict[Stage, TensorizeMatch]:
        """The match of every tensorized stage (`analysis.tensorize`, with the
        inferred bounds: a stage computed at a loop may cover less than its
        tensor), and the check that its region needs no guard. Runs before
        convert-te-to-loop changes anything, so a mismatch is reported at once."""
        out = {}
        for s in self.state.stages:
            if s.tensorize_op is None:
                continue
            ext = self.bounds.leaf_extents[s]
            m = check_tensorize(self.state, s, ext, self.bounds.root_values[s])
            inner = set(m.inner)
            for g in self._guards(s, ext, axis_values(s, ext)):
                loops = sorted(v.name for v in g.expr.atoms() & inner)
                if loops:
                    raise OpError(
                        s.tensorize_op,
                        f"convert-te-to-loop: the tensorized region of '{s.name}' runs past "
                        f"the edge of its tensor for some values of {', '.join(loops)}; "
                        "choose split factors that divide the axes",
                    )
            out[s] = m
        return out

    def _emit_tensor_intrin(self, s: Stage, cur: Cursor, env: Env):
        """The region under the tensorized axis as one `loop.tensor_intrin`, after
        the reduction's init nest when no reduce loop encloses it (the intrinsic
        updates its output)."""
        m = self.tensorized[s]
        ext = self.bounds.leaf_extents[s]
        guards = self._guards(s, ext, axis_values(s, ext))
        cur = self._guarded(cur, env, guards, ("spatial", "reduce"))
        order = s.loop_order
        outside = order[: order.index(m.axis)]
        if s.compute.reduce is not None and all(v.kind == "spatial" for v in outside + [m.axis]):
            spatial = [v for v in m.inner if v.kind == "spatial"]
            init = lambda c, e: self._emit_init(s, c, e, [])  # noqa: E731
            self._emit_loops(s, spatial, ext, cur, env, False, init)
        operands = []
        for region in [*m.inputs, m.output]:
            buf = self.buffers[region.stage]
            idx = [self._index(e - off, env, cur) for e, off in zip(region.base, buf.offsets)]
            operands.append((buf.value, idx))
        cur.insert(loop.TensorIntrinOp(m.intrin.name, operands[:-1], operands[-1:]))


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
