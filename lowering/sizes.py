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


def emit_size(e: SymExpr | int, names: Mapping[str, SSAValue], insert: Insert) -> SSAValue:
    """`arith` ops computing `e` from the values of its names, inserted in order."""
    if isinstance(e, int):
        return index_constant(e, insert)
    total: SSAValue | None = None
    for monomial, c in e.terms():
        term: SSAValue | None = None
        for atom in monomial:
            if isinstance(atom, str):
                factor = names[atom]
            else:
                inner = emit_size(atom.expr, names, insert)
                divisor = index_constant(atom.divisor, insert)
                op = arith.FloorDivSIOp(inner, divisor) if isinstance(atom, FloorDiv) else arith.RemSIOp(inner, divisor)
                insert(op)
                factor = op.result
            if term is None:
                term = factor
            else:
                mul = arith.MuliOp(term, factor)
                insert(mul)
                term = mul.result
        assert term is not None
        if c != 1:
            mul = arith.MuliOp(term, index_constant(c, insert))
            insert(mul)
            term = mul.result
        if total is None:
            total = term
        else:
            add = arith.AddiOp(total, term)
            insert(add)
            total = add.result
    if total is None:
        return index_constant(e.constant_term, insert)
    if e.constant_term:
        add = arith.AddiOp(total, index_constant(e.constant_term, insert))
        insert(add)
        total = add.result
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
