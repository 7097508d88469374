"""Helpers shared by the topi computes: dtypes, broadcasting, flat indices, tags.

A topi function takes `te.Tensor`s and returns the `te.Tensor` it computes (or a
tuple); it never schedules. What a schedule needs to know about the stages a
compute made (that one must stay materialized, or that one is a row-wise
reduction) is recorded as *tags* in the compute's `attrs` (`tag`, `tags_of`), as
TVM's `tag` strings do; a conv2d, dense or Winograd compute records its parts there
too (`Conv2dInfo`, `DenseInfo`, `WinogradInfo`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tilecraft.frontends import te
from tilecraft.utils.symbolic import FloorDiv as SymFloorDiv
from tilecraft.utils.symbolic import SymExpr

# Tags a compute may carry (read by topi/schedule.py):
# - "keep": do not compute_inline this injective stage (it is expensive and read
#   by several stages, like softmax's exp);
# - "row": a reduction over the trailing `row` axes of its input;
# - "workload": (template, params) of a tunable pooling or reduction stage, whose
#   knobs the default schedule asks the tuning context for.
def tag(tensor: te.Tensor, **info) -> te.Tensor:
    """`tensor`, its compute tagged with `info` (in the op's `attrs`)."""
    tags = tensor.op.attrs.setdefault("tags", {})
    assert isinstance(tags, dict)
    tags.update(info)
    return tensor


def tags_of(tensor: te.Tensor) -> dict:
    attrs = getattr(tensor.op, "attrs", None)  # (a placeholder has none)
    return attrs.get("tags", {}) if attrs is not None else {}


def is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def broadcast_shape(*shapes: Sequence) -> tuple:
    """numpy's broadcast of shapes (raises ValueError when they do not). A size
    known when the program runs (a te.var expression) broadcasts against 1 and
    against itself (the same expression), never against another size."""
    from tilecraft.dialects.graph import ShapeError, broadcast_shapes

    if all(isinstance(d, int) for shape in shapes for d in shape):
        try:
            return broadcast_shapes(*shapes)
        except ShapeError as e:
            raise ValueError(str(e)) from None
    rank = max(len(shape) for shape in shapes)
    out = []
    for d in range(rank):
        dims = [shape[len(shape) - rank + d] for shape in shapes if len(shape) - rank + d >= 0]
        sized = [n for n in dims if not (isinstance(n, int) and n == 1)]
        if any(repr(n) != repr(sized[0]) for n in sized[1:]):
            raise ValueError(f"sizes {', '.join(map(repr, sized))} do not broadcast")
        out.append(sized[0] if sized else 1)
    return tuple(out)


def broadcast_read(x: te.Tensor, index: Sequence[te.Expr], out_rank: int) -> te.Expr:
    """`x` read at the output index `index` under numpy broadcasting: leading output
    axes that `x` lacks are dropped, extents of 1 read index 0."""
    skip = out_rank - len(x.shape)
    idx = [0 if isinstance(n, int) and n == 1 else index[skip + d] for d, n in enumerate(x.shape)]
    return x[tuple(idx)]


def strides(shape: Sequence[int]) -> list[int]:
    """Row-major element strides."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return out[::-1]


def flat_index(index: Sequence[te.Expr], shape: Sequence[int]) -> te.Expr | int:
    """The row-major flat position of `index` in `shape` (extent-1 axes skipped)."""
    flat = None
    for i, n, st in zip(index, shape, strides(shape)):
        if n == 1:
            continue
        term = i if st == 1 else i * st
        flat = term if flat is None else flat + term
    return flat if flat is not None else 0


def unflatten(flat: te.Expr | int, shape: Sequence[int]) -> list[te.Expr | int]:
    """The index in `shape` of the flat position `flat` (no modulo on the first axis,
    no division by 1)."""
    out = []
    for d, (n, st) in enumerate(zip(shape, strides(shape))):
        if n == 1:
            out.append(0)
            continue
        v = flat if st == 1 else flat // st
        if d > 0 and st * n < math.prod(shape):
            v = v % n
        out.append(v)
    return out


def same_size(a, b) -> bool:
    """Equal sizes: ints by value, te sizes (known when it runs) by their expression."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return not isinstance(a, int) and not isinstance(b, int) and repr(a) == repr(b)


def reshape_read(x: te.Tensor, index: Sequence[te.Expr], out_shape: Sequence[int]) -> te.Expr:
    """`x` (any shape with as many elements) read at `index` of a row-major reshape
    to `out_shape`. Equal leading and trailing extents map straight through, so only
    the axes that really change go through a flat index."""
    xs, os_ = list(x.shape), list(out_shape)
    head = 0
    while head < min(len(xs), len(os_)) and same_size(xs[head], os_[head]):
        head += 1
    tail = 0
    while (
        tail < min(len(xs), len(os_)) - head
        and same_size(xs[len(xs) - 1 - tail], os_[len(os_) - 1 - tail])
    ):
        tail += 1
    mid_out = os_[head : len(os_) - tail]
    mid_in = xs[head : len(xs) - tail]
    flat = flat_index(index[head : len(os_) - tail], mid_out)
    mid = unflatten(flat, mid_in) if mid_in else []
    tail_idx = list(index[len(os_) - tail :]) if tail else []
    return x[tuple(list(index[:head]) + mid + tail_idx)]


def te_dtype(t) -> str:
    """The te dtype of a tensor type's (or an element type's) elements."""
    from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IntegerType, Signedness, TensorType

    element = t.get_element_type() if isinstance(t, TensorType) else t
    floats = ((Float32Type, "float32"), (Float64Type, "float64"), (Float16Type, "float16"))
    for ftype, name in floats:
        if isinstance(element, ftype):
            return name
    if isinstance(element, IntegerType):
        width = element.width.data
        if element.signedness.data == Signedness.UNSIGNED and width in (2, 4, 8, 16, 32, 64):
            return f"uint{width}"
        name = {1: "bool", 2: "int2", 4: "int4", 8: "int8", 16: "int16", 32: "int32", 64: "int64"}.get(width)
        if name is not None:
            return name
    from tilecraft.utils.dtypes import NARROW_FLOATS

    if type(element) in NARROW_FLOATS:  # bf16, f8E4M3FN...: ml_dtypes' names are te's
        return NARROW_FLOATS[type(element)].name
    raise ValueError(
        f"element type {element} has no te dtype (f16, f32, f64, i1, i8, i16, i32, i64, ui8...ui64, "
        "bf16, float8 and float4 types, i4, ui4, i2, ui2)"
    )


def te_size(d: int | SymExpr, sizes: dict[str, te.Var]):
    """A graph size as a te size: an int, or a te expression of te.vars."""
    if isinstance(d, int):
        return d
    total = d.constant_term
    for monomial, c in d.terms():
        term = c
        for atom in monomial:
            if isinstance(atom, str):
                factor = sizes.setdefault(atom, te.var(atom))
            elif isinstance(atom, SymFloorDiv):
                factor = te_size(atom.expr, sizes) // atom.divisor
            else:
                factor = te_size(atom.expr, sizes) % atom.divisor
            term = factor * term if not isinstance(term, int) or term != 1 else factor
        total = term + total if not isinstance(total, int) or total != 0 else term
    return total
