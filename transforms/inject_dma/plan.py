"""inject-dma's plan of one DMA: the copy nest's accesses as affine expressions of its
loops (`NestExprs`), folded into at most two strided dimensions with their bounds
and padding (`plan_dma`), or `NotDma` saying why not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from tilecraft.analysis.bounds import index_expr
from tilecraft.analysis.expr import Expr
from tilecraft.dialects.loop import ForOp
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import BlockArgument, Operation, SSAValue
from tilecraft.transforms.inject_dma.copies import Copy


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
