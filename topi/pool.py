"""Max and average pooling over 1 to 3 spatial axes (NC + spatial, or NCHW<b>c in
2-D), with ONNX's padding, dilations and ceil_mode. One compute for every rank:
the window is one reduce axis per spatial axis.

The padding is folded into the window reduction as a bounds test (a padded
element is the lowest value for max, absent for the average), so no padded copy
is made. Windows that ceil_mode lets run past the padded input are clipped the
same way. The average's divisor is counted per axis in closed form (the window
positions inside the input, or inside the padded input when padding counts).

In a blocked layout ([N, C/b, H, W, b], what alter-layout gives pooling between
blocked convs) the window runs over H and W as in NCHW and the channel lane is the
innermost output axis, so the default schedule vectorizes it: each window step is
one contiguous vector load of b channels.

Pooling is tunable: the window reduction is tagged with its workload, ("pool2d",
[kind, input shape, kernel, strides, pads, dilations, ceil_mode,
count_include_pad, layout, dtype]) with kind "max" or "avg", which the tuning
template "pool2d" (autotune/topi_templates.py) rebuilds; the default schedule
asks the tuning context for its knobs (topi/schedule.py, `reduction_space` in
topi/reduce.py): the window inside each vector of outputs or outside the whole
row, the vector width, parallel, unrolling the window's last axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tilecraft.frontends import te
from tilecraft.dialects.graph import layout_block, pool_out
from tilecraft.topi.common import tag


@dataclass(frozen=True)
class _Window:
    """One spatial axis of a pooling window."""

    size: int  # the input's extent
    kernel: int
    stride: int
    pad_lo: int
    pad_hi: int
    dilation: int
    out: int  # the output's extent

    def start(self, i):
        """The first input position the window of output position `i` reads (it may
        lie in the padding)."""
        return i * self.stride - self.pad_lo if self.pad_lo else i * self.stride

    def position(self, i, r):
        """The input position of window step `r` of output position `i`."""
        step = r * self.dilation if self.dilation != 1 else r
        base = i * self.stride + step
        return base - self.pad_lo if self.pad_lo else base

    def overhangs(self) -> bool:
        """Whether some window reads padding (either side, or a ceil_mode overhang)."""
        last = (self.out - 1) * self.stride + (self.kernel - 1) * self.dilation + 1 - self.pad_lo
        return bool(self.pad_lo) or last > self.size

    def count(self, i, lo: int, hi: int):
        """How many of the window's positions of output position `i` lie in [lo, hi)."""
        y0 = self.start(i)
        k, d = self.kernel, self.dilation
        if d == 1:
            return te.minimum(y0 + k, hi) - te.maximum(y0, lo)
        # window steps j with lo <= y0 + j * d < hi: from ceil((lo - y0) / d) to
        # floor((hi - 1 - y0) / d), clipped to [0, k - 1]
        first = te.maximum((lo - y0 + d - 1) // d, 0)
        last = te.minimum((hi - 1 - y0) // d, k - 1)
        return last - first + 1


def _windows(x: te.Tensor, kernel, strides, pads, dilations, ceil_mode, layout: str) -> list[_Window]:
    rank = len(kernel)
    block = layout_block(layout)
    if block and (rank != 2 or x.ndim != 5 or x.shape[4] != block):
        raise ValueError(f"pooling: input {x.shape} is not in layout {layout}")
    if not block and x.ndim != rank + 2:
        raise ValueError(f"pooling: input {x.shape} does not have {rank} spatial axes")
    strides = tuple(strides) if strides is not None else (1,) * rank
    pads = tuple(pads) if pads is not None else (0,) * 2 * rank
    dilations = tuple(dilations) if dilations is not None else (1,) * rank
    windows = []
    for axis in range(rank):
        size, k, s, d = x.shape[2 + axis], kernel[axis], strides[axis], dilations[axis]
        lo, hi = pads[axis], pads[rank + axis]
        windows.append(_Window(size, k, s, lo, hi, d, pool_out(size, k, s, lo, hi, d, ceil_mode)))
    return windows


_AXIS_NAMES = ("rd", "rh", "rw")  # the reduce axes of a 3-, 2- or 1-D window: the last ones


def _window_reduction(x: te.Tensor, windows: list[_Window], combine, empty):
    """The te body: `combine` (te.max or te.sum) of x over the window of each output
    index, `empty` standing for a padded position."""
    rank = len(windows)
    axes = [te.reduce_axis((0, w.kernel), name=name) for w, name in zip(windows, _AXIS_NAMES[3 - rank :])]
    padded = any(w.overhangs() for w in windows)

    def body(*index):  # [n, c, spatial..., lane?]
        b, ch, *rest = index
        spatial, lane = rest[:rank], rest[rank:]
        positions = [w.position(i, r) for w, i, r in zip(windows, spatial, axes)]
        value = x[(b, ch, *positions, *lane)]
        if padded:
            bounds = []
            for w, p in zip(windows, positions):
                bounds += [p >= 0, p < w.size]
            value = te.if_then_else(te.all(*bounds), value, empty)
        return combine(value, axis=axes)

    return body, padded


def pool_workload(kind: str, x: te.Tensor, kernel, strides, pads, dilations, ceil_mode, count_include_pad,
                  layout: str) -> tuple[str, list]:  # fmt: skip
    """The tuning workload of a pooling op: template "pool2d" and its params
    (defaults spelled out, so equal pools share one key)."""
    rank = len(kernel)
    return "pool2d", [
        kind, [n if isinstance(n, int) else str(n) for n in x.shape], [int(k) for k in kernel],
        [int(s) for s in strides] if strides is not None else [1] * rank,
        [int(p) for p in pads] if pads is not None else [0] * 2 * rank,
        [int(d) for d in dilations] if dilations is not None else [1] * rank,
        int(bool(ceil_mode)), int(bool(count_include_pad)), layout, str(x.dtype),
    ]  # fmt: skip


def _lowest(dtype: str):
    """What a padded position is to max: -inf, or an integer type's lowest value."""
    return te.const(float("-inf"), dtype) if dtype.startswith(("float", "bfloat")) else te.min_value(dtype)


def max_pool(
    x: te.Tensor,
    kernel: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    ceil_mode: bool = False,
    layout: str = "NCHW",
    dilations: Sequence[int] | None = None,
) -> te.Tensor:
    """The maximum over each window (`len(kernel)` spatial axes); `pads` are
    [begin..., end...]."""
    windows = _windows(x, kernel, strides, pads, dilations, ceil_mode, layout)
    body, _ = _window_reduction(x, windows, te.max, _lowest(x.dtype))
    n, c, *rest = x.shape
    shape = (n, c, *(w.out for w in windows), *rest[len(windows) :])
    workload = pool_workload("max", x, kernel, strides, pads, dilations, ceil_mode, False, layout)
    return tag(te.compute(shape, body, name="max_pool2d"), workload=workload)


def avg_pool(
    x: te.Tensor,
    kernel: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
    layout: str = "NCHW",
    dilations: Sequence[int] | None = None,
) -> te.Tensor:
    """The mean over each window; the divisor counts the window's positions inside
    the input, or inside the padded input with `count_include_pad` (a ceil_mode
    overhang never counts, as onnxruntime)."""
    windows = _windows(x, kernel, strides, pads, dilations, ceil_mode, layout)
    rank = len(windows)
    body, padded = _window_reduction(x, windows, te.sum, te.const(0.0, x.dtype))
    n, c, *rest = x.shape
    shape = (n, c, *(w.out for w in windows), *rest[rank:])
    workload = pool_workload("avg", x, kernel, strides, pads, dilations, ceil_mode, count_include_pad, layout)
    s = tag(te.compute(shape, body, name="avg_pool_sum"), workload=workload)
    if not padded:
        size = 1
        for w in windows:
            size *= w.kernel
        return te.compute(shape, lambda *i: s[i] * (1.0 / size), name="avg_pool2d")
    bounds = [(-w.pad_lo, w.size + w.pad_hi) if count_include_pad else (0, w.size) for w in windows]

    def f(*index):
        counts = [w.count(i, lo, hi) for w, i, (lo, hi) in zip(windows, index[2 : 2 + rank], bounds)]
        total = counts[0]
        for more in counts[1:]:
            total = total * more
        return s[index] / total.astype(x.dtype)

    return te.compute(shape, f, name="avg_pool2d")


def max_pool_indices(
    x: te.Tensor,
    kernel: Sequence[int],
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    ceil_mode: bool = False,
    dilations: Sequence[int] | None = None,
    storage_order: int = 0,
) -> te.Tensor:
    """Where `max_pool` finds each window's maximum: the first window position
    holding it (row-major window order, which is the order of the input's flat
    indices, so the smallest such index), as an int64 flat index; `storage_order`
    1 then renumbers the spatial axes column-major."""
    windows = _windows(x, kernel, strides, pads, dilations, ceil_mode, "NCHW")
    rank = len(windows)
    best = max_pool(x, kernel, strides, pads, ceil_mode, "NCHW", dilations)
    axes = [te.reduce_axis((0, w.kernel), name=name) for w, name in zip(windows, _AXIS_NAMES[3 - rank :])]
    padded = any(w.overhangs() for w in windows)
    channels = x.shape[1]
    spatial_size = 1
    for w in windows:
        spatial_size *= w.size
    def body(*index):  # [n, c, spatial...]
        b, ch, *spatial = index
        positions = [w.position(i, r) for w, i, r in zip(windows, spatial, axes)]
        flat = 0
        for w, p in zip(windows, positions):  # the spatial offset, row-major
            flat = flat * w.size + p
        flat = (b * channels + ch) * spatial_size + flat
        none = te.max_value("int64")
        candidate = te.if_then_else(x[(b, ch, *positions)] == best[(b, ch, *spatial)], flat.astype("int64"), none)
        if padded:  # the read only inside the input
            bounds = []
            for w, p in zip(windows, positions):
                bounds += [p >= 0, p < w.size]
            candidate = te.if_then_else(te.all(*bounds), candidate, none)
        return te.min(candidate, axis=axes)

    first = te.compute(best.shape, body, name="max_pool_indices")
    if not storage_order:
        return first

    def column_major(*index):
        flat = first[index]
        plane, rest = flat // spatial_size, flat % spatial_size
        coordinates = []
        for w in reversed(windows):  # row-major: the last axis varies fastest
            coordinates.insert(0, rest % w.size)
            rest = rest // w.size
        offset, stride = 0, 1
        for w, c in zip(windows, coordinates):  # column-major: the first axis fastest
            offset = offset + c * stride
            stride *= w.size
        return plane * spatial_size + offset

    return te.compute(best.shape, column_major, name="max_pool_indices_column_major")
