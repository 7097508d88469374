"""Sizes known when the program runs, as SSA `index` values: a `SymExpr` of
names (utils/symbolic.py) computed with `arith` ops from the values of the
names, and the names read with `memref.dim` from buffers that have them as a
whole dimension. What convert-te-to-loop's kernels take as `?`s, the function
that calls them (a model's graph function) computes the same way."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from tilecraft.utils.symbolic import FloorDiv, SymExpr

Insert = Callable[[Operation], None]


def index_constant(value: int, insert: Insert) -> SSAValue:
    op = arith.ConstantOp(IntegerAttr(value, IndexType()))
    insert(op)
    return op.result


def _value(op: Operation, insert: Insert) -> SSAValue:
    insert(op)
    return op.results[0]


def emit_size(e: SymExpr | int, names: Mapping[str, SSAValue], insert: Insert) -> SSAValue:
    """`arith` ops computing `e` from the values of its names, inserted in order."""
    if isinstance(e, int):
        return index_constant(e, insert)
    total: SSAValue | None = None
    for monomial, c in e.terms():
        factors = []
        for atom in monomial:
            if isinstance(atom, str):
                factors.append(names[atom])
                continue
            inner, divisor = emit_size(atom.expr, names, insert), index_constant(atom.divisor, insert)
            kind = arith.FloorDivSIOp if isinstance(atom, FloorDiv) else arith.RemSIOp
            factors.append(_value(kind(inner, divisor), insert))
        if c != 1:
            factors.append(index_constant(c, insert))
        term = factors[0]
        for factor in factors[1:]:
            term = _value(arith.MuliOp(term, factor), insert)
        total = term if total is None else _value(arith.AddiOp(total, term), insert)
    if total is None or e.constant_term:
        constant = index_constant(e.constant_term, insert)
        total = constant if total is None else _value(arith.AddiOp(total, constant), insert)
    return total


def read_names(
    buffers: Sequence[tuple[SSAValue, Sequence[int | SymExpr]]], wanted: set[str], insert: Insert
) -> dict[str, SSAValue]:
    """The value of each wanted name, read (`memref.dim`) from the first buffer
    with it as a whole dimension; a name no buffer has is left out."""
    found: dict[str, SSAValue] = {}
    for buffer, shape in buffers:
        for d, size in enumerate(shape):
            if isinstance(size, SymExpr) and size.free_names() == {str(size)} and str(size) in wanted:
                name = str(size)
                if name not in found:
                    dim = memref.DimOp(buffer, index_constant(d, insert))
                    insert(dim)
                    dim.result.name_hint = name
                    found[name] = dim.result
    return found
