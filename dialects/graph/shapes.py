"""Shape helpers of the graph ops' `infer`: ranked types, broadcasting, axes, pooled
sizes, and `ShapeError`, which the verifier reports at the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

__all__ = [
    "ShapeError", "ranked", "shape_of", "tensor", "broadcast_shapes", "normalize_axis", "pool_out", "layout_block",
    "layout_shape",
]  # fmt: skip


# -- shapes ---------------------------------------------------------------------


class ShapeError(Exception):
    """A shape or attribute that does not fit the op; reported at the op."""


def ranked(t: Attribute) -> TensorType:
    if not isinstance(t, TensorType):
        raise ShapeError(f"expected a ranked tensor, got {t}")
    return t


def shape_of(t: Attribute) -> tuple[int, ...]:
    return tuple(ranked(t).get_shape())


def tensor(shape: Sequence[int], element: Attribute) -> TensorType:
    return TensorType(element, list(shape))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        dims = {s[len(s) - rank + d] for s in shapes if len(s) - rank + d >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ShapeError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


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
