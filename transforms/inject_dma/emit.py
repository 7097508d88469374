"""inject-dma's emitter: the `loop.dma` of a plan, with the index arithmetic of its
start, clipped extents and padding built before it.
"""

from __future__ import annotations

from tilecraft.analysis.expr import Div, Expr, Mod
from tilecraft.dialects.loop import (
    DmaOp,
    ForOp,
)
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator
from tilecraft.transforms.inject_dma.copies import Copy
from tilecraft.transforms.inject_dma.plan import Dim, NestExprs, Plan


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
