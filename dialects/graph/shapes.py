"""Shape helpers of the graph ops' `infer`: ranked types, broadcasting, axes, pooled
sizes, and `ShapeError`, which the verifier reports at the op.

A dimension may be symbolic: a `?` named by the tensor type's encoding, one
string per `?` in order (`tensor<?x?x768xf32, ["batch", "seq"]>`, a name or an
expression: `["seq * 12"]`). `shape_of` gives it as a `SymExpr`
(utils/symbolic.py) and `tensor` writes one back, so an `infer` written for
ints carries sizes through; a question about a symbolic size that its names do
not decide raises, and is reported at the op. Only ops that say so (`SYMBOLIC`)
take symbolic operands: the others are an error naming the op and the size.
"""

from __future__ import annotations

from collections.abc import Sequence
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, NoneAttr, StringAttr, TensorType
from xdsl.ir import Attribute

from tilecraft.utils.symbolic import SymbolicSizeError, SymExpr, parse

__all__ = [
    "ShapeError", "ranked", "shape_of", "tensor", "broadcast_shapes", "normalize_axis", "pool_out", "layout_block",
    "layout_shape", "symbolic_dims",
]  # fmt: skip


# -- shapes ---------------------------------------------------------------------


class ShapeError(Exception):
    """A shape or attribute that does not fit the op; reported at the op."""


def ranked(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise ShapeError(f"expected a ranked tensor, got {t}")
    return t


def shape_of(t: Attribute) -> tuple:
    """The dimensions of a ranked tensor type: ints, and a `SymExpr` for each `?`
    its encoding names (a `?` it does not name stays `DYNAMIC_INDEX`)."""
    r = ranked(t)
    shape = tuple(r.get_shape())
    names = r.encoding
    if isinstance(names, NoneAttr):
        return shape
    return _named(shape, names)


def _named(shape: tuple[int, ...], names: Attribute) -> tuple:
    if not isinstance(names, ArrayAttr) or not all(isinstance(n, StringAttr) for n in names.data):
        raise ShapeError(f"a tensor type's encoding names its '?' dimensions (\"batch\", \"seq * 12\"), not {names}")
    dynamic = [k for k, d in enumerate(shape) if d == DYNAMIC_INDEX]
    if len(dynamic) != len(names.data):
        written = "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in shape)
        raise ShapeError(f"{len(names.data)} name(s) for the {len(dynamic)} '?' dimension(s) of {written}")
    out: list = list(shape)
    for k, name in zip(dynamic, names.data):
        try:
            out[k] = parse(name.data)  # type: ignore[attr-defined]
        except SymbolicSizeError as e:
            raise ShapeError(str(e)) from None
    return tuple(out)


def symbolic_dims(t: Attribute) -> list[tuple[int, SymExpr]]:
    """(position, size) of each symbolic dimension of `t` (none for other types)."""
    if not isinstance(t, TensorType) or isinstance(t.encoding, NoneAttr):
        return []
    return [(k, d) for k, d in enumerate(shape_of(t)) if isinstance(d, SymExpr)]


def tensor(shape: Sequence, element: Attribute) -> TensorType:
    """A tensor type of `shape`: ints, and SymExprs, written as named `?`s."""
    dims: list[int] = []
    names: list[StringAttr] = []
    for d in shape:
        if isinstance(d, SymExpr) and not d.is_constant:
            dims.append(DYNAMIC_INDEX)
            names.append(StringAttr(str(d)))
        else:
            dims.append(int(d))
    return TensorType(element, dims, ArrayAttr(names)) if names else TensorType(element, dims)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        dims = {s[len(s) - rank + d] for s in shapes if len(s) - rank + d >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ShapeError(f"shapes {' and '.join(_text(s) for s in shapes)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _text(shape: Sequence) -> str:
    """A shape as a tuple of its sizes' text: `(batch, 8)`, `(2, 3)`, `(5,)`."""
    return str(tuple(shape)) if all(isinstance(d, int) for d in shape) else f"({', '.join(str(d) for d in shape)})"


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def pool_out(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation: int = 1, ceil: bool = False) -> int:
    if min(kernel, stride, dilation) < 1:
        raise ShapeError(f"window {kernel}, stride {stride} and dilation {dilation} must be positive")
    span = size + pad_lo + pad_hi - dilation * (kernel - 1) - 1
    if span < 0:
        raise ShapeError(f"window {kernel} (dilation {dilation}) does not fit input extent {size} with padding {pad_lo}+{pad_hi}")
    out = (-(-span // stride) if ceil else span // stride) + 1
    # With ceil_mode the last window must still start inside the input or the
    # leading padding (ONNX and PyTorch agree); otherwise it covers only padding.
    if ceil and (out - 1) * stride >= size + pad_lo:
        out -= 1
    return out


def layout_block(layout: str) -> int:
    """16 for "NCHW16c", 0 for "NCHW"."""
    if layout == "NCHW":
        return 0
    if layout.startswith("NCHW") and layout.endswith("c") and layout[4:-1].isdigit() and int(layout[4:-1]) > 0:
        return int(layout[4:-1])
    raise ShapeError(f"unknown layout '{layout}' (NCHW or NCHW<x>c)")


def layout_shape(shape: Sequence[int], src: str, dst: str) -> tuple[int, ...]:
    bs, bd = layout_block(src), layout_block(dst)
    if bs:
        if len(shape) != 5 or shape[4] != bs:
            raise ShapeError(f"{shape} is not in layout {src}")
        n, co, h, w, _ = shape
        c = co * bs
    else:
        if len(shape) != 4:
            raise ShapeError(f"{shape} is not in layout {src}")
        n, c, h, w = shape
    if not bd:
        return (n, c, h, w)
    if c % bd:
        raise ShapeError(f"{c} channels do not split into blocks of {bd}")
    return (n, c // bd, h, w, bd)
