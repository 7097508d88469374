"""`inject-dma`: a copy nest between a global buffer and an accelerator buffer
becomes one `loop.dma` (VTA's 2-D strided LOAD/STORE with padding).

`cache_read(A, "inp_buffer", ...)`, `cache_write(C, "acc_buffer")` and a stage
kept in an accelerator scope (`set_scope`) give loop nests that copy element by
element: a load from a global buffer stored into an `inp_buffer`, `wgt_buffer` or
`acc_buffer` buffer (possibly `scf.if(in_bounds, load, 0)` or under a
`loop.guard`: the padded form), or a load from an `acc_buffer` stored into a
global buffer (possibly narrowed by `arith.trunci`). The accelerator moves whole
elements (an input BATCH x BLOCK vector, a weight BLOCK x BLOCK tile: the spec
says how many scalars) in 2-D: `y` rows of `x` contiguous elements, rows
`x_stride` apart in DRAM, packed in the on-chip buffer.

The algorithm, on the nest's loops (outer to inner; loops of one iteration drop
out) and the two accesses' flat offsets as affine sums of loop variables
(`analysis.expr`; values defined outside the nest are atoms):

1. the innermost loops must walk one element contiguously on both sides (their
   strides 1, BLOCK, ... multiply up to the element size); a loop that covers
   several elements is split;
2. the outer loops, in elements, fold pairwise where both sides are contiguous
   across them (`o.stride == i.stride * i.extent` on each side) and neither is
   clipped by the bounds condition;
3. at most two are left: x (contiguous in DRAM, stride 1 element) and y (its
   DRAM stride is `x_stride`); the buffer side must be packed row-major,
   `y` stride = x extent: a transposing copy is refused. When more are left, the
   outermost loops stay loops around the DMA of the inner ones (one DMA per
   iteration, as VTA's runtime issues them);
4. the bounds condition (`arith.andi` of `cmpi`s, from the `scf.if` or guard) is a
   conjunction of `v >= lo` / `v < hi` on the y and x variables, where `lo` and
   `hi` are index expressions of the enclosing loops: the padding is
   `y_pad_0 = clamp(lo, 0, rows)`, `y_pad_1 = rows - clamp(hi, y_pad_0, rows)`,
   the size what is left, and the DMA reads from the first in-bounds element.

A nest that is a copy but fails a step is an error at its store: an accelerator
buffer has no other way in or out (elementwise access is the CPU's), so the
schedule must change; the message says which step failed. Compute nests (a
store of anything but a plain load) are left alone.

```mlir
%pad = loop.alloc "pad" inp_buffer : memref<5x8x16xi8>
loop.for %h = 0 to 5 {
  loop.for %w = 0 to 8 {
    loop.for %c = 0 to 16 {
      %in = ... (3*%ho + %h >= 1) and (3*%ho + %h < 7) and (%w >= 1) and (%w < 7)
      %v = scf.if %in -> (i8) { memref.load %data[3*%ho + %h - 1, %w - 1, %c] } else { 0 }
      memref.store %v, %pad[%h, %w, %c]
}}}
```
becomes (`%yp0 = clamp(1 - 3*%ho, 0, 5)`, ... computed before it)
```mlir
loop.dma %data[%row, %c0, %c0] -> %pad[%c0, %c0, %c0] size(%ys, %c6)
    pad(%yp0, %yp1, %c1, %c1) stride 6 tile 5 x 8 elem 16 : memref<6x6x16xi8> -> memref<5x8x16xi8>
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from tilecraft.analysis.bounds import index_expr
from tilecraft.analysis.expr import Div, Expr, Mod
from tilecraft.backends.accel.spec import AccelSpec, default_spec, load_spec
from tilecraft.dialects.loop import (
    ACCEL_SCOPES,
    DmaOp,
    ForOp,
    GuardOp,
    MemoryScope,
    YieldOp,
    buffer_scope,
)
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.traits import IsTerminator

PASS = "inject-dma"


def element_scalars(spec: AccelSpec, scope: MemoryScope) -> int:
    """Scalars in one element of an accelerator buffer (one DMA unit)."""
    if scope == MemoryScope.WGT_BUFFER:
        return spec.block * spec.block
    return spec.batch * spec.block


# -- recognizing a copy -------------------------------------------------------------


@dataclass
class Copy:
    """One element copy: `store(cast(load))`, possibly selected by `conditions`."""

    store: memref.StoreOp
    load: memref.LoadOp
    sram: SSAValue  # the accelerator buffer
    is_load: bool  # global -> accelerator buffer
    conditions: list[SSAValue] = field(default_factory=list)
    value_ops: list[Operation] = field(default_factory=list)  # load, scf.if, cast


def _is_zero(value: SSAValue) -> bool:
    op = value.owner
    return isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and op.value.value.data == 0


def _selected_load(value: SSAValue) -> tuple[memref.LoadOp, SSAValue | None, list[Operation]] | None:
    """`load`, `scf.if %c { load } else { 0 }` or `arith.select %c, load, 0`."""
    op = value.owner
    if isinstance(op, memref.LoadOp):
        return op, None, [op]
    if isinstance(op, arith.SelectOp) and isinstance(op.lhs.owner, memref.LoadOp) and _is_zero(op.rhs):
        return op.lhs.owner, op.cond, [op.lhs.owner, op]
    if isinstance(op, scf.IfOp) and len(op.results) == 1 and len(op.false_region.blocks) == 1:
        then_ops = list(op.true_region.block.ops)
        else_ops = list(op.false_region.block.ops)
        if (
            len(then_ops) == 2
            and isinstance(then_ops[0], memref.LoadOp)
            and tuple(then_ops[1].operands) == (then_ops[0].res,)
            and isinstance(else_ops[-1], scf.YieldOp)
            and _is_zero(else_ops[-1].operands[0])
        ):
            return then_ops[0], op.cond, [op]
    return None


def match_copy(store: memref.StoreOp) -> Copy | None:
    """The copy `store` performs between a global and an accelerator buffer, if it is one."""
    dst_scope = buffer_scope(store.memref)
    value, cast = store.value, None
    if isinstance(value.owner, arith.TruncIOp):
        cast = value.owner
        value = cast.input
    found = _selected_load(value)
    if found is None:
        return None
    load, cond, value_ops = found
    src_scope = buffer_scope(load.memref)
    if src_scope == MemoryScope.GLOBAL and dst_scope in ACCEL_SCOPES and cast is None:
        copy = Copy(store, load, store.memref, True)
    elif src_scope == MemoryScope.ACC_BUFFER and dst_scope == MemoryScope.GLOBAL and cond is None:
        copy = Copy(store, load, load.memref, False)
    else:
        return None
    if cond is not None:
        copy.conditions.append(cond)
    copy.value_ops = value_ops + ([cast] if cast is not None else [])
    return copy


def _only_index_math(block: Block, keep: set[Operation]) -> bool:
    return all(
        op in keep or isinstance(op, YieldOp) or (op.dialect_name() == "arith" and not op.regions)
        for op in block.ops
    )


def copy_nest(copy: Copy) -> tuple[list[ForOp], list[SSAValue]] | None:
    """The loops of the nest around `copy` (outer first) and the guard conditions,
    up to the block of the accelerator buffer's allocation or the first loop whose
    body does anything else. None if `copy.store` is not inside a loop."""
    keep: set[Operation] = {copy.store, *copy.value_ops}
    if not _only_index_math(copy.store.parent_block(), keep):
        return None
    alloc_block = copy.sram.owner.parent_block() if isinstance(copy.sram.owner, Operation) else None
    loops: list[ForOp] = []
    guards: list[SSAValue] = []
    op: Operation = copy.store
    while True:
        parent = op.parent_op()
        if not isinstance(parent, ForOp | GuardOp):
            break
        if parent.body.block is alloc_block:
            break
        if op is not copy.store and not _only_index_math(parent.body.block, {op}):
            break
        if isinstance(parent, ForOp):
            loops.append(parent)
        else:
            guards.append(parent.cond)
        op = parent
        if op.parent_block() is alloc_block:
            break
    if not loops or isinstance(op, GuardOp):
        return None
    return loops[::-1], guards


# -- affine views of the accesses ---------------------------------------------------


class NestExprs:
    """Index values of a nest as `Expr`s: its loop variables and every value
    defined outside it are atoms."""

    def __init__(self, top: ForOp, loops: list[ForOp]):
        self.top = top
        self.env: dict[SSAValue, Expr | None] = {loop.var: Expr.var(loop.var) for loop in loops}

    def _inside(self, value: SSAValue) -> bool:
        owner = value.owner
        op = owner.parent_op() if isinstance(value, BlockArgument) else owner
        return op is not None and self.top.is_ancestor(op)

    def expr(self, value: SSAValue) -> Expr | None:
        pending = [value]
        while pending:
            v = pending.pop()
            if v in self.env:
                continue
            if not self._inside(v) and not isinstance(v.owner, arith.ConstantOp):
                self.env[v] = Expr.var(v)
            elif isinstance(v.owner, Operation):
                pending.extend(v.owner.operands)
        return index_expr(value, self.env)

    def flat(self, ref: SSAValue, indices) -> Expr | None:
        shape = ref.type.get_shape()
        total = Expr()
        for n, idx in enumerate(indices):
            e = self.expr(idx)
            if e is None:
                return None
            total = total + e * prod(shape[n + 1 :])
        return total


@dataclass
class Dim:
    extent: int
    dram: int  # stride on the global side
    sram: int  # stride on the accelerator-buffer side
    var: SSAValue | None  # None once folded with another
    lo: list[Expr] = field(default_factory=list)  # var >= each
    hi: list[Expr] = field(default_factory=list)  # var < each


class NotDma(Exception):
    """A copy nest that one DMA cannot do; the message says why."""


def _constraints(nest: NestExprs, conds: list[SSAValue], dims: dict[SSAValue, Dim], all_vars) -> None:
    """Record each `cmpi` conjunct of `conds` as a bound on one loop variable."""
    pending = list(conds)
    while pending:
        c = pending.pop()
        op = c.owner
        if isinstance(op, arith.AndIOp):
            pending += [op.lhs, op.rhs]
            continue
        if not isinstance(op, arith.CmpiOp) or not isinstance(op.lhs.type, IndexType):
            raise NotDma("its bounds condition is not a conjunction of index comparisons")
        lhs, rhs = nest.expr(op.lhs), nest.expr(op.rhs)
        if lhs is None or rhs is None:
            raise NotDma("its bounds condition is not affine in the copy's loops")
        pred = op.predicate.value.data
        # Normalize to `e >= 0`: sge 0, sgt 1, sle 3, slt 2 (arith.cmpi's numbering).
        match pred:
            case 5:  # sge
                e = lhs - rhs
            case 4:  # sgt
                e = lhs - rhs - 1
            case 3:  # sle
                e = rhs - lhs
            case 2:  # slt
                e = rhs - lhs - 1
            case _:
                raise NotDma("its bounds condition compares other than <, <=, >, >= (signed)")
        vars_in = [a for a in e.terms if a in all_vars]
        if len(vars_in) != 1 or abs(e.terms[vars_in[0]]) != 1:
            raise NotDma("a bound of its condition involves no loop or several loops of the copy")
        v = vars_in[0]
        if v not in dims:
            raise NotDma("its condition clips a loop inside the element (padding must be whole elements)")
        coeff = e.terms[v]
        rest = e - Expr.var(v) * coeff
        if coeff == 1:  # v + rest >= 0
            dims[v].lo.append(-rest)
        else:  # rest - v >= 0
            dims[v].hi.append(rest + 1)


@dataclass
class Plan:
    rows: int
    cols: int
    x_stride: int
    y: Dim | None
    x: Dim | None


def plan_dma(copy: Copy, loops: list[ForOp], guards: list[SSAValue], elem: int, nest: NestExprs) -> Plan:
    """The 2-D pattern of the copy (steps 1-4 of the module docstring)."""
    dram_ref, dram_idx = (copy.load.memref, copy.load.indices) if copy.is_load else (copy.store.memref, copy.store.indices)
    sram_ref, sram_idx = (copy.store.memref, copy.store.indices) if copy.is_load else (copy.load.memref, copy.load.indices)
    dram, sram = nest.flat(dram_ref, dram_idx), nest.flat(sram_ref, sram_idx)
    if dram is None or sram is None:
        raise NotDma("an index is not an affine expression of the loops")
    dims: list[Dim] = []
    for loop in loops:
        if loop.extent == 1:
            continue
        d = Dim(loop.extent, dram.terms.get(loop.var, 0), sram.terms.get(loop.var, 0), loop.var)
        if d.sram == 0:
            raise NotDma(f"every iteration of loop {loop.var.name_hint or ''} writes the same buffer element")
        dims.append(d)
    # 1. The element: the innermost loops, contiguous on both sides.
    run = 1
    while run < elem:
        if not dims:
            raise NotDma(f"it copies less than one element of {elem} scalars")
        d = dims[-1]
        if (d.dram != run or d.sram != run) and run > 1:
            raise NotDma(f"its innermost loops cover {run} scalars, not one element of {elem}")
        if d.dram != run or d.sram != run:
            raise NotDma(f"its innermost loops do not walk one contiguous element of {elem} scalars on both sides")
        if run * d.extent <= elem:
            dims.pop()
            run *= d.extent
        elif d.extent % (elem // run) == 0 and elem % run == 0:
            part = elem // run
            dims[-1] = Dim(d.extent // part, d.dram * part, d.sram * part, None)
            run = elem
        else:
            raise NotDma(f"its innermost loops do not split into elements of {elem} scalars")
    if run != elem:
        raise NotDma(f"its innermost loops cover {run} scalars, not one element of {elem}")
    by_var = {d.var: d for d in dims if d.var is not None}
    _constraints(nest, copy.conditions + guards, by_var, {loop.var for loop in loops})
    for d in dims:
        if d.dram % elem or d.sram % elem:
            raise NotDma(f"a loop steps by a part of an element of {elem} scalars")
        d.dram //= elem
        d.sram //= elem
    # 2. Fold contiguous unclipped neighbours.
    folded = True
    while folded:
        folded = False
        for n in range(len(dims) - 1):
            o, i = dims[n], dims[n + 1]
            if not (o.lo or o.hi or i.lo or i.hi) and o.dram == i.dram * i.extent and o.sram == i.sram * i.extent:
                dims[n : n + 2] = [Dim(o.extent * i.extent, i.dram, i.sram, None)]
                folded = True
                break
    # 3. At most y and x.
    if not copy.is_load and len(dims) > 2 and any(d.lo or d.hi for d in dims):
        raise NotDma(
            "the copy out is clipped (a split that does not divide) in the middle of "
            f"its {len(dims)} loops; make the split divide"
        )
    if len(dims) > 2:
        raise NotDma(f"{len(dims)} loops are left after folding contiguous ones; a DMA has 2")
    if not dims:
        return Plan(1, 1, 1, None, None)
    if len(dims) == 1:
        d = dims[0]
        if not copy.is_load and (d.lo or (d.hi and d.dram == 1)):
            raise NotDma("the copy out is clipped other than at the end of its rows (a store has no padding)")
        if d.sram != 1:
            raise NotDma("the accelerator buffer is not written contiguously")
        if d.dram == 1:
            return Plan(1, d.extent, d.extent, None, d)
        return Plan(d.extent, 1, d.dram, d, None)
    y, x = dims
    if not copy.is_load and (x.lo or x.hi or y.lo):
        raise NotDma("the copy out is clipped other than at the end of its rows (a store has no padding)")
    if x.sram != 1 or y.sram != x.extent:
        raise NotDma("the accelerator buffer is not written row by row in loop order (a transposing copy)")
    if x.dram != 1:
        raise NotDma("the global side is not contiguous along the inner loop")
    return Plan(y.extent, x.extent, y.dram, y, x)


# -- emitting ----------------------------------------------------------------------


class Builder:
    """Appends ops to a block (before `anchor`, else before its terminator) and
    builds index arithmetic: `index(expr)` for an `Expr` whose atoms are SSA
    values (or `Div`/`Mod` of such expressions), each partial result made once."""

    def __init__(self, block: Block, anchor: Operation | None = None):
        self.block, self.anchor = block, anchor
        self.cache: dict[Expr, SSAValue] = {}

    def insert(self, op: Operation) -> Operation:
        anchor = self.anchor
        if anchor is None and self.block.last_op is not None and self.block.last_op.has_trait(IsTerminator):
            anchor = self.block.last_op
        if anchor is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, anchor)
        return op

    def value(self, op: Operation) -> SSAValue:
        self.insert(op)
        return op.results[0]

    def child(self, op: Operation) -> Builder:
        """A builder into the body of `op` (a loop or guard this one inserted)."""
        return Builder(op.regions[0].block)

    def index_const(self, v: int) -> SSAValue:
        return self.index(Expr(const=v))

    def index(self, expr: Expr) -> SSAValue:
        if expr in self.cache:
            return self.cache[expr]
        if expr.is_const:
            result = self.value(arith.ConstantOp(IntegerAttr(expr.const, IndexType())))
        elif len(expr.terms) == 1 and expr.const == 0:
            ((atom, coeff),) = expr.terms.items()
            if isinstance(atom, Div | Mod):
                inner = self.index(atom.expr)
                quotient = self.value(arith.FloorDivSIOp(inner, self.index_const(atom.divisor)))
                if isinstance(atom, Div):
                    term = quotient
                else:  # the floor remainder: e - d * (e // d)
                    scaled = self.value(arith.MuliOp(quotient, self.index_const(atom.divisor)))
                    term = self.value(arith.SubiOp(inner, scaled))
            else:
                term = atom
            result = term if coeff == 1 else self.value(arith.MuliOp(term, self.index_const(coeff)))
        else:
            result = None
            for atom, coeff in expr.terms.items():
                term = self.index(Expr({atom: coeff}))
                result = term if result is None else self.value(arith.AddiOp(result, term))
            if expr.const:
                result = self.value(arith.AddiOp(result, self.index_const(expr.const)))
        self.cache[expr] = result
        return result


def _clip(cur: Builder, bounds: list[Expr], pick, floor: SSAValue | int, ceil: int, default: int):
    """min/max of `bounds` clamped to [floor, ceil], folded when constant."""
    if not bounds:
        return default
    values: list[SSAValue | int] = []
    for b in bounds:
        values.append(b.const if b.is_const else cur.index(b))
    consts = [v for v in values if isinstance(v, int)]
    dynamic = [v for v in values if not isinstance(v, int)]
    result: SSAValue | int | None = pick(consts) if consts else None
    op_class = arith.MaxSIOp if pick is max else arith.MinSIOp
    for v in dynamic:
        result = v if result is None else cur.value(op_class(_ssa(cur, result), v))
    # clamp to [floor, ceil]
    if isinstance(result, int) and isinstance(floor, int):
        return min(max(result, floor), ceil)
    result = cur.value(arith.MaxSIOp(_ssa(cur, result), _ssa(cur, floor)))
    return cur.value(arith.MinSIOp(result, cur.index_const(ceil)))


def _ssa(cur: Builder, v: SSAValue | int) -> SSAValue:
    return cur.index_const(v) if isinstance(v, int) else v


def _sub(cur: Builder, a: SSAValue | int, b: SSAValue | int) -> SSAValue | int:
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    return cur.value(arith.SubiOp(_ssa(cur, a), _ssa(cur, b)))


def _span(cur: Builder, d: Dim | None, extent: int):
    """(pad_0, size, pad_1) of one dimension."""
    if d is None:
        return 0, extent, 0
    p0 = _clip(cur, d.lo, max, 0, extent, 0)
    end = _clip(cur, d.hi, min, p0, extent, extent)
    return p0, _sub(cur, end, p0), _sub(cur, extent, end)


def emit_dma(copy: Copy, loops: list[ForOp], plan: Plan, elem: int, nest: NestExprs) -> DmaOp:
    top = loops[0]
    cur = Builder(top.parent_block(), top)
    yp0, ysize, yp1 = _span(cur, plan.y, plan.rows)
    xp0, xsize, xp1 = _span(cur, plan.x, plan.cols)
    starts: dict[SSAValue, SSAValue | int] = {}
    if plan.y is not None and plan.y.var is not None:
        starts[plan.y.var] = yp0
    if plan.x is not None and plan.x.var is not None:
        starts[plan.x.var] = xp0
    loop_vars = {loop.var for loop in loops}

    def at_start(e: Expr, shift: bool) -> SSAValue:
        def sub(atom):
            if atom not in loop_vars:
                return None
            start = starts.get(atom, 0) if shift else 0
            return Expr(const=start) if isinstance(start, int) else Expr.var(start)

        return cur.index(e.substitute(sub))

    def indices(ref_indices, shift: bool) -> list[SSAValue]:
        return [at_start(nest.expr(i), shift) for i in ref_indices]

    if copy.is_load:
        src_idx, dst_idx = indices(copy.load.indices, True), indices(copy.store.indices, False)
    else:
        src_idx, dst_idx = indices(copy.load.indices, False), indices(copy.store.indices, False)
    sizes = [_ssa(cur, ysize), _ssa(cur, xsize)]
    # A store writes `size` rows from the start of its tile: no padding.
    pads = [_ssa(cur, p if copy.is_load else 0) for p in (yp0, yp1, xp0, xp1)]
    return DmaOp(
        copy.load.memref, src_idx, copy.store.memref, dst_idx, sizes, pads,
        (plan.rows, plan.cols), plan.x_stride, elem,
    )  # fmt: skip


# -- analysis, pattern and pass -------------------------------------------------


@dataclass
class CopyNest:
    """A copy nest and the DMA that replaces it."""

    copy: Copy
    loops: list[ForOp]
    elem: int
    plan: Plan
    nest: NestExprs


def find_copy_nests(module: ModuleOp, spec: AccelSpec) -> dict[ForOp, CopyNest]:
    """Every copy nest of the module by its outermost loop, planned; a copy that
    one DMA cannot do raises an `OpError` at its store (before anything changes)."""
    nests: dict[ForOp, CopyNest] = {}
    for store in module.walk():
        if not isinstance(store, memref.StoreOp):
            continue
        copy = match_copy(store)
        if copy is None:
            continue
        found = copy_nest(copy)
        scope = buffer_scope(copy.sram)
        direction = "into" if copy.is_load else "out of"
        if found is None:
            raise OpError(
                store,
                f"{PASS}: this copy {direction} the {scope.value} buffer is not a loop nest of its "
                "own (it has no loop, or its loops do other work too: run inject-dma before "
                "inject-virtual-threads and unrolling)",
            )
        loops, guards = found
        elem = element_scalars(spec, scope)
        planned = _plan_with_host_loops(copy, loops, guards, elem)
        if isinstance(planned, NotDma):
            raise OpError(
                store,
                f"{PASS}: this copy {direction} the {scope.value} buffer cannot be one DMA: {planned}; "
                "change the schedule (the accelerator moves whole elements in 2-D strided blocks)",
            ) from None
        inner, plan, nest = planned
        nests[inner[0]] = CopyNest(copy, inner, elem, plan, nest)
    return nests


def _plan_with_host_loops(copy: Copy, loops: list[ForOp], guards: list[SSAValue], elem: int):
    """The DMA of the whole nest or, when more than two loops are left after folding
    (a tile of several channel blocks, say), of its inner loops, the outer ones
    staying loops around it (as VTA's DMA injection leaves them to the host); the
    error of the whole nest when neither works."""
    first: NotDma | None = None
    for k in range(len(loops)):
        nest = NestExprs(loops[k], loops[k:])
        try:
            return loops[k:], plan_dma(copy, loops[k:], guards, elem, nest), nest
        except NotDma as e:
            first = first or e
            if "loops are left" not in str(e):
                break
    return first


@dataclass
class InjectDma(RewritePattern):
    """The copy nest whose outermost loop this is becomes one `loop.dma` (see the
    module docstring for the IR before and after)."""

    nests: dict[ForOp, CopyNest]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        found = self.nests.pop(op, None)
        if found is None:
            return
        dma = emit_dma(found.copy, found.loops, found.plan, found.elem, found.nest)
        rewriter.replace(op, dma, [])


@dataclass(frozen=True)
class InjectDmaPass(ModulePass):
    """Replace each copy nest between a global and an accelerator buffer by one `loop.dma`."""

    name = "inject-dma"

    spec: str = ""
    """The accelerator spec file (.json or .toml); VTA's default when empty."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        spec = load_spec(self.spec) if self.spec else default_spec()
        nests = find_copy_nests(op, spec)
        if nests:
            PatternRewriteWalker(GreedyRewritePatternApplier([InjectDma(nests)])).rewrite_module(op)
