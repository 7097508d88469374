"""2-D max and average pooling on NCHW or NCHW<b>c, with ONNX's padding and ceil_mode.

The padding is folded into the window reduction as a bounds test (a padded
element is -inf for max (an integer type's minimum), absent for the average), so no padded copy is made.
Windows that ceil_mode lets run past the padded input are clipped the same way.

In a blocked layout ([N, C/b, H, W, b], what alter-layout gives pooling between
blocked convs) the window runs over H and W as in NCHW and the channel lane is the
innermost output axis, so the default schedule vectorizes it: each window step is
one contiguous vector load of b channels.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecraft.frontends import te
from tilecraft.dialects.graph import layout_block, pool_out


def _check_layout(x: te.Tensor, layout: str) -> None:
    block = layout_block(layout)
    if (block and (x.ndim != 5 or x.shape[4] != block)) or (not block and x.ndim != 4):
        raise ValueError(f"pooling: input {x.shape} is not in layout {layout}")


def _geometry(x: te.Tensor, kernel, strides, pads, ceil_mode):
    kh, kw = kernel
    sh, sw = strides
    pt, pl, pb, pr = pads
    h, w = x.shape[2], x.shape[3]
    oh = pool_out(h, kh, sh, pt, pb, 1, ceil_mode)
    ow = pool_out(w, kw, sw, pl, pr, 1, ceil_mode)
    return (kh, kw), (sh, sw), (pt, pl, pb, pr), (oh, ow)


def max_pool2d(
    x: te.Tensor,
    kernel: Sequence[int],
    strides: Sequence[int] = (1, 1),
    pads: Sequence[int] = (0, 0, 0, 0),
    ceil_mode: bool = False,
    layout: str = "NCHW",
) -> te.Tensor:
    _check_layout(x, layout)
    (kh, kw), (sh, sw), (pt, pl, _, _), (oh, ow) = _geometry(x, kernel, strides, pads, ceil_mode)
    n, c, h, w, *lanes = x.shape
    rh = te.reduce_axis((0, kh), name="rh")
    rw = te.reduce_axis((0, kw), name="rw")
    padded = pt or pl or _overhangs(h, w, kh, kw, sh, sw, pt, pl, oh, ow)

    def f(*index):  # rank 4 or 5: one tuple of indices
        b, ch, i, j, *lane = index
        y = i * sh + rh - pt if pt else i * sh + rh
        z = j * sw + rw - pl if pl else j * sw + rw
        if not padded:
            return te.max(x[(b, ch, y, z, *lane)], axis=[rh, rw])
        inside = te.all(y >= 0, y < h, z >= 0, z < w)
        lowest = te.const(float("-inf"), x.dtype) if x.dtype.startswith("float") else te.min_value(x.dtype)
        value = te.if_then_else(inside, x[(b, ch, y, z, *lane)], lowest)
        return te.max(value, axis=[rh, rw])

    return te.compute((n, c, oh, ow, *lanes), f, name="max_pool2d")


def _overhangs(h, w, kh, kw, sh, sw, pt, pl, oh, ow) -> bool:
    """Whether the last window runs past the input (bottom/right padding, ceil_mode)."""
    return (oh - 1) * sh + kh - pt > h or (ow - 1) * sw + kw - pl > w


def avg_pool2d(
    x: te.Tensor,
    kernel: Sequence[int],
    strides: Sequence[int] = (1, 1),
    pads: Sequence[int] = (0, 0, 0, 0),
    ceil_mode: bool = False,
    count_include_pad: bool = False,
    layout: str = "NCHW",
) -> te.Tensor:
    _check_layout(x, layout)
    (kh, kw), (sh, sw), (pt, pl, pb, pr), (oh, ow) = _geometry(x, kernel, strides, pads, ceil_mode)
    n, c, h, w, *lanes = x.shape
    shape = (n, c, oh, ow, *lanes)
    rh = te.reduce_axis((0, kh), name="rh")
    rw = te.reduce_axis((0, kw), name="rw")
    padded = pt or pl or _overhangs(h, w, kh, kw, sh, sw, pt, pl, oh, ow)

    def total(*index):  # rank 4 or 5: one tuple of indices
        b, ch, i, j, *lane = index
        y = i * sh + rh - pt if pt else i * sh + rh
        z = j * sw + rw - pl if pl else j * sw + rw
        if not padded:
            return te.sum(x[(b, ch, y, z, *lane)], axis=[rh, rw])
        inside = te.all(y >= 0, y < h, z >= 0, z < w)
        return te.sum(te.if_then_else(inside, x[(b, ch, y, z, *lane)], te.const(0.0, x.dtype)), axis=[rh, rw])

    s = te.compute(shape, total, name="avg_pool_sum")
    if not padded:
        return te.compute(shape, lambda *i: s[i] * (1.0 / (kh * kw)), name="avg_pool2d")
    # The divisor per window: its extent within the input, or within the padded
    # input when padding counts (a ceil_mode overhang never counts, as onnxruntime).
    lo_h, hi_h = (-pt, h + pb) if count_include_pad else (0, h)
    lo_w, hi_w = (-pl, w + pr) if count_include_pad else (0, w)

    def f(*index):  # rank 4 or 5: one tuple of indices
        b, ch, i, j, *lane = index
        y0 = i * sh - pt
        z0 = j * sw - pl
        rows = te.minimum(y0 + kh, hi_h) - te.maximum(y0, lo_h)
        cols = te.minimum(z0 + kw, hi_w) - te.maximum(z0, lo_w)
        return s[(b, ch, i, j, *lane)] / (rows * cols).astype(x.dtype)

    return te.compute(shape, f, name="avg_pool2d")
