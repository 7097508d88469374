"""conv2d: the compute in plain and blocked layouts, and a fast CPU schedule.

One kernel for 1 to 3 spatial axes: the plain layout is N, C and the spatial axes
(the output likewise), the window one reduce axis per spatial axis, and the
unblocked schedule vectorizes the last output axis and runs the others as rows;
the blocked layouts below are 2-D (what alter-layout makes of 2-D convs).

Layouts (as `graph.conv2d`): data "NCHW" or "NCHW<b>c" ([N, C/b, H, W, b]),
kernel "OIHW" or "OIHW<i>i<o>o" ([O/o, I/i, KH, KW, i, o], I = C/groups), output
"NCHW" or "NCHW<b>c" (default: the data layout). Any combination computes the right
thing; the fast one, which alter-layout produces, is NCHW16c data, OIHW16i16o
kernel and NCHW16c output (16 fp32 lanes fill an AVX-512 register).

The compute (`conv2d_compute`) is TVM's: a `pad` stage (te.if_then_else) when any pad
is non-zero, then one reduction over the input channels of the group and the kernel
window. Channel indices are written in the block structure of the tensors they
read, so the common layouts need no div/mod in the inner loop: with blocked data the
channel reduction is two axes, `rcb` (blocks) and `rci` (lanes of a block), and a
blocked output channel is `ocb * b + oc`; a grouped conv whose groups are whole
blocks reads input block `ocb // (blocks per output group) * (blocks per input
group) + rcb`. A layout pair whose blocks do not line up (kernel in-block 8 with
data block 16, grouped convs whose groups cut blocks) falls back to div/mod on the
flat channel: correct, slower.

The schedule (`schedule_conv2d`), for a blocked output, is TVM's x86 NCHWc recipe:

    parallel for (n, ocb.outer, oh) fused          # enough tasks for 2 cores
      for ow.outer                                  # a register tile per iteration
        conv.local[ocn][regn][16] = 0               # ocn x regn zmm accumulators
        for rcb, ry, rx, rci                        # reduction outside the tile
          unrolled ocb.inner (ocn), ow.inner (regn):
            vectorized oc (16): acc += pad[.., ow*s+rx, rci] (broadcast) * w[.., rci, oc]
        epilogue: out = f(acc) (bias, relu, residual add, inlined), vector stores

`ocn` x `regn` (2 x 7 for OW = 56, 28, 14, 7) accumulators live in zmm registers
(`cache_write(conv, "local")`, unrolled and vectorized loops that LLVM's SROA turns
into registers); every rci step loads ocn weight vectors and regn broadcasts for
ocn * regn FMAs. 2 x 7 measured ~10-15% faster than 1 x 14 on the 56x56x64 layer:
it loads 9 values per 14 FMAs instead of 15. The padded input is computed once at the
root (parallel, vectorized): copying it costs ~5% of a 3x3 conv, and computing it
at an inner loop would recompute it once per output-channel block.

An unblocked output (NCHW, OIHW weights: convs alter-layout left alone) is
vectorized along ow instead, with ocn output channels unrolled, so weights are
scalar broadcasts and the input is read in contiguous vectors: the vector width
divides OW (a masked tail keeps the accumulators out of registers), and a conv with
a column stride reads a phase-split padded input ([N, C, Hp, sw, Wp/sw]) rather
than stride-sw gathers. It is 1.5-3x slower than the blocked path on stride-2 and
3-channel layers; alter-layout should block every conv it can.

A depthwise conv with a blocked output (MobileNet's) has a schedule and knobs of its
own, at the end of this file: no output-channel tile, the pad inlined into its loads.

When elementwise stages are fused after the conv (`out` is not the conv), the conv
stage is the copy out of the register tile (after `cache_write`) computed at the
tile loop of `out`, and the fused stages are inlined into `out`, so the epilogue reads
the accumulators once and writes `out` once.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tilecraft.dialects.graph import straddle_layout, straddle_rows
from tilecraft.frontends import te
from tilecraft.topi.schedule import parallel_pays
from tilecraft.topi.tuning import check_config, config_for, workload_key

BLOCK = 16  # fp32 lanes of an AVX-512 register: the channel block alter-layout picks
L1_BYTES = 32 * 1024  # what the register tile may stream from L1 (48 KiB L1d here)
PLANE_BYTES = 128 * 1024  # accumulators of a whole output plane (row = 2): well inside L2
PLANE_MIN_TILES = 8  # output-channel tiles a plane schedule needs to keep the threads busy
TILE_CHANNELS = 2 * BLOCK  # output channels of a register tile (at most)
TILE_ACCUMULATORS = 14  # zmm accumulators of a register tile (of 32)
DEPTHWISE_COLUMNS = 8  # output columns of a depthwise register tile (at most, untuned)


# ---------------------------------------------------------------------------------
# Layouts


def data_block(layout: str) -> int:
    """0 for "NCHW", b for "NCHW<b>c"."""
    if layout == "NCHW":
        return 0
    m = re.fullmatch(r"NCHW(\d+)c", layout)
    if not m or int(m.group(1)) <= 0:
        raise ValueError(f"unknown data layout {layout!r} (NCHW or NCHW<b>c)")
    return int(m.group(1))


def kernel_blocks(layout: str) -> tuple[int, int]:
    """(0, 0) for "OIHW", (i, o) for "OIHW<i>i<o>o"."""
    if layout == "OIHW":
        return 0, 0
    m = re.fullmatch(r"OIHW(\d+)i(\d+)o", layout)
    if not m or int(m.group(1)) <= 0 or int(m.group(2)) <= 0:
        raise ValueError(f"unknown kernel layout {layout!r} (OIHW or OIHW<i>i<o>o)")
    return int(m.group(1)), int(m.group(2))


def pack_conv2d_weight(w: np.ndarray, in_block: int, out_block: int) -> np.ndarray:
    """An OIHW weight [O, I, KH, KW] in layout OIHW<in_block>i<out_block>o
    ([O/o, I/i, KH, KW, i, o]); weights are constants, so alter-layout does this once."""
    o, i, kh, kw = w.shape
    if o % out_block or i % in_block:
        raise ValueError(f"weight {w.shape} does not split into {in_block}i{out_block}o blocks")
    blocked = w.reshape(o // out_block, out_block, i // in_block, in_block, kh, kw)
    return np.ascontiguousarray(blocked.transpose(0, 2, 4, 5, 3, 1))


def pack_data(x: np.ndarray, block: int) -> np.ndarray:
    """NCHW -> NCHW<block>c (for tests and layout transforms in numpy)."""
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2))


def unpack_data(x: np.ndarray) -> np.ndarray:
    """NCHW<b>c -> NCHW."""
    n, cb, h, w, b = x.shape
    return np.ascontiguousarray(x.transpose(0, 1, 4, 2, 3).reshape(n, cb * b, h, w))


@dataclass(frozen=True)
class _Channel:
    """A channel index c = outer * block + inner with 0 <= c < extent; block 0 means
    `outer` is the flat index. Each tensor is indexed in its own block structure,
    without div/mod when the blocks agree."""

    outer: te.Expr | int
    inner: te.Expr | int
    block: int
    extent: int

    def flat(self):
        if not self.block:
            return self.outer
        if isinstance(self.outer, int) and self.outer == 0:
            return self.inner
        return self.outer * self.block + self.inner

    def split(self, block: int):
        """(c // block, c % block), or the flat index for block 0."""
        if not block:
            return self.flat()
        if block == self.block:
            return self.outer, self.inner
        if self.extent <= block:  # one block holds every channel this index reaches
            return 0, self.flat()
        if block == 1:
            return self.flat(), 0
        if self.block and self.block % block == 0:
            per = self.block // block  # blocks of `block` inside one of ours
            inner = self.inner
            return self.outer * per + inner // block, inner % block
        flat = self.flat()
        return flat // block, flat % block


def _read(tensor: te.Tensor, block: int, n, channel: _Channel, positions: Sequence):
    """tensor[n, c, positions...] in NC + spatial or NCHW<block>c."""
    if block:
        cb, ci = channel.split(block)
        return tensor[(n, cb, *positions, ci)]
    return tensor[(n, channel.flat(), *positions)]


@dataclass(frozen=True)
class Conv2dInfo:
    """What the schedule needs to know about a conv2d compute."""

    data_block: int
    kernel_blocks: tuple[int, int]
    out_block: int
    groups: int
    in_channels: int
    out_channels: int
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    pad: te.Tensor | None
    # The workload's parameters (JSON-able): the tuning template "conv2d" rebuilds the
    # computation from them (`conv2d_workload`) and tuning logs are keyed by them.
    params: tuple = ()


# A conv2d reduction's compute holds its `Conv2dInfo` as attrs["conv2d"]; a
# straddling conv's row-sum stage holds its accumulators as attrs["accumulators"]
# (conv2d_straddle_compute).


def conv2d_info(tensor: te.Tensor) -> Conv2dInfo | None:
    """The info of a conv2d reduction, or of the one a straddling conv's row sum reads."""
    attrs = getattr(tensor.op, "attrs", {})
    info = attrs.get("conv2d")
    if info is None and "accumulators" in attrs:
        info = attrs["accumulators"].op.attrs.get("conv2d")
    return info


# ---------------------------------------------------------------------------------
# Compute

_OUT_AXES = ("od", "oh", "ow")  # the output's spatial axes (the last `rank` of them)


def _indexed(names: Sequence[str], f):
    """`f(*indices)` with the signature `(names...)`, so te.compute names its axes
    `names` (it reads them from the lambda's parameters) whatever the rank."""

    def g(*indices):
        return f(*indices)

    g.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names]
    )
    return g


def conv2d_compute(
    data: te.Tensor,
    weight: te.Tensor,
    bias: te.Tensor | None = None,
    *,
    strides: Sequence[int] | None = None,
    pads: Sequence[int] | None = None,
    dilations: Sequence[int] | None = None,
    groups: int = 1,
    data_layout: str = "NCHW",
    kernel_layout: str = "OIHW",
    out_layout: str | None = None,
    name: str = "conv2d",
) -> te.Tensor:
    """The convolution of `data` by `weight` (+ `bias` [O]), in `out_layout`, over
    the input's 1 to 3 spatial axes (2 in the blocked layouts).

    `pads` are [begin..., end...] ([top, left, bottom, right] in 2-D); strides,
    pads and dilations default to ones, zeros and ones. Returns the reduction, or
    with a bias the stage that adds it (schedule_conv2d inlines that one into the
    output). A kernel layout "straddle<C>c<O>o<i>i<o>o" is `conv2d_straddle_compute`'s."""
    straddle = straddle_layout(kernel_layout)
    if straddle is not None:
        C, O, ib, ob = straddle
        db = data_block(data_layout)
        if not db or db % ib or data_block(out_layout or data_layout) != ob:
            raise ValueError(
                f"conv2d: kernel layout {kernel_layout} needs NCHW<b>c data (b a multiple of {ib}) and NCHW{ob}c output"
            )
        if dilations is not None and any(int(d) != 1 for d in dilations):
            raise ValueError(f"conv2d: kernel layout {kernel_layout} takes no dilations")
        return conv2d_straddle_compute(
            data, weight, bias, groups=groups, channels=(C, O), strides=strides or (1, 1), pads=pads or (0,) * 4, name=name
        )
    db = data_block(data_layout)
    kib, kob = kernel_blocks(kernel_layout)
    ob = data_block(out_layout if out_layout is not None else data_layout)

    if db:
        if data.ndim != 5 or data.shape[4] != db:
            raise ValueError(f"conv2d: data {data.shape} is not in layout {data_layout}")
        N, C, spatial = data.shape[0], data.shape[1] * db, tuple(data.shape[2:4])
    else:
        if not 3 <= data.ndim <= 5:
            raise ValueError(f"conv2d: data {data.shape} is not N, C and 1 to 3 spatial axes")
        N, C, spatial = data.shape[0], data.shape[1], tuple(data.shape[2:])
    rank = len(spatial)
    if rank != 2 and (kob or ob):
        raise ValueError(f"conv2d: blocked layouts are 2-D, data {data.shape} has {rank} spatial axes")
    if kob:
        if weight.ndim != 6 or weight.shape[4:] != (kib, kob):
            raise ValueError(f"conv2d: weight {weight.shape} is not in layout {kernel_layout}")
        O, Cg, kernel = weight.shape[0] * kob, weight.shape[1] * kib, tuple(weight.shape[2:4])
    else:
        if weight.ndim != rank + 2:
            raise ValueError(f"conv2d: weight {weight.shape} is not [O, I, kernel...] of rank {rank + 2}")
        O, Cg, kernel = weight.shape[0], weight.shape[1], tuple(weight.shape[2:])
    strides = tuple(int(v) for v in strides) if strides is not None else (1,) * rank
    dilations = tuple(int(v) for v in dilations) if dilations is not None else (1,) * rank
    pads = tuple(int(v) for v in pads) if pads is not None else (0,) * 2 * rank
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        raise ValueError(f"conv2d: strides {strides}, dilations {dilations} and pads {pads} do not fit {rank} axes")
    if groups <= 0 or C % groups or O % groups or Cg * groups != C:
        raise ValueError(
            f"conv2d: {C} input channels, weight {weight.shape} and groups={groups} do not match"
        )
    if ob and O % ob:
        raise ValueError(f"conv2d: {O} output channels do not split into blocks of {ob}")
    if bias is not None and bias.shape != (O,):
        raise ValueError(f"conv2d: bias must have shape ({O},), got {bias.shape}")
    begin, end = pads[:rank], pads[rank:]
    out = tuple(
        (size + lo + hi - d * (k - 1) - 1) // s + 1
        for size, k, s, d, lo, hi in zip(spatial, kernel, strides, dilations, begin, end)
    )
    if any(o <= 0 for o in out):
        raise ValueError(f"conv2d: the kernel does not fit the padded {'x'.join(map(str, spatial))} input")
    Og = O // groups

    # An NCHW output is vectorized along the last axis (see the module docstring);
    # with a stride on it the padded input is stored phase-split, [N, C, ..., sw,
    # Wp/sw] (column q * sw + r at [.., r, q]), so those vector loads stay contiguous
    # instead of becoming stride-sw gathers.
    sw, dw = strides[-1], dilations[-1]
    phases = sw if (not ob and not db and sw > 1) else 0
    padded = data
    if any(pads) or phases:
        padded = _pad(data, db, begin, end, spatial, phases)

    # The channel reduction: blocks of the data layout where they tile the group.
    channel_axes: list[te.IterVar] = []
    if Cg > 1:
        if db and Cg % db == 0:
            rcb = te.reduce_axis((0, Cg // db), name="rcb")
            rci = te.reduce_axis((0, db), name="rci")
            channel_axes = [rcb, rci]
            red_channel = _Channel(rcb, rci, db, Cg)
        else:
            rc = te.reduce_axis((0, Cg), name="rc")
            channel_axes = [rc]
            red_channel = _Channel(rc, 0, 0, Cg)
    else:
        red_channel = _Channel(0, 0, 0, 1)
    window = [te.reduce_axis((0, k), name=n) for k, n in zip(kernel, ("rz", "ry", "rx")[3 - rank :])]
    # Loop order of the reduction, outermost first: channel blocks, window, lanes.
    axes = channel_axes[:1] + window + channel_axes[1:]

    def body(n, out_channel: _Channel, position):
        o = out_channel
        if groups == 1:
            in_channel = red_channel
        elif Cg == 1 and Og == 1:  # depthwise: input channel = output channel
            in_channel = o
        elif o.block and red_channel.block and Og % o.block == 0:
            # Groups of whole blocks (ResNeXt's): the output block gives the group,
            # the group its first input block; no div/mod on a lane.
            g = o.outer // (Og // o.block)
            first = g * (Cg // red_channel.block)
            in_channel = _Channel(first + red_channel.outer, red_channel.inner, red_channel.block, C)
        else:
            g = o.flat() // Og
            in_channel = _Channel(g * Cg + red_channel.flat(), 0, 0, C)
        rows = [p * s + r * d for p, s, r, d in zip(position[:-1], strides, window, dilations)]
        if phases:
            column = window[-1] * dw
            x = padded[(n, in_channel.flat(), *rows, column % sw, position[-1] + column // sw)]
        else:
            x = _read(padded, db, n, in_channel, [*rows, position[-1] * sw + window[-1] * dw])
        if kob:
            kb, ki = red_channel.split(kib)
            w = weight[(o.split(kob)[0], kb, *window, ki, o.split(kob)[1])]
        else:
            w = weight[(o.flat(), red_channel.flat() if Cg > 1 else 0, *window)]
        return te.sum(x * w, axis=axes)

    if ob:
        conv = te.compute(
            (N, O // ob, *out, ob),
            lambda n, ocb, oh, ow, oc: body(n, _Channel(ocb, oc, ob, O), (oh, ow)),
            name=name,
        )
    else:
        conv = te.compute(
            (N, O, *out),
            _indexed(("n", "o", *_OUT_AXES[3 - rank :]), lambda n, o, *position: body(n, _Channel(o, 0, 0, O), position)),
            name=name,
        )
    params = (
        list(data.shape), list(weight.shape), list(strides), list(pads), list(dilations), groups,
        data_layout, kernel_layout, out_layout if out_layout is not None else data_layout,
        str(data.dtype), str(weight.dtype),
    )
    conv.op.attrs["conv2d"] = Conv2dInfo(
        db, (kib, kob), ob, groups, C, O, kernel, strides, padded if padded is not data else None, params
    )
    if bias is None:
        return conv
    if ob:
        return te.compute(
            conv.shape,
            lambda n, ocb, oh, ow, oc: conv[n, ocb, oh, ow, oc] + bias[ocb * ob + oc],
            name=f"{name}_bias",
        )
    return te.compute(
        conv.shape,
        _indexed(("n", "o", *_OUT_AXES[3 - rank :]), lambda n, o, *position: conv[(n, o, *position)] + bias[o]),
        name=f"{name}_bias",
    )


def _pad(data: te.Tensor, block: int, begin, end, spatial, phases: int = 0) -> te.Tensor:
    """The zero-padded input, in the data's layout or (phases > 1, unblocked only)
    with its last axis split into column phases: [N, C, ..., phases,
    ceil(Wp / phases)]."""
    rank = len(spatial)

    def value(n, c, positions, lane=(), beyond_right=False):
        conditions = []
        for axis, (p, lo, hi, size) in enumerate(zip(positions, begin, end, spatial)):
            if lo:
                conditions.append(p >= lo)
            if hi or (beyond_right and axis == rank - 1):
                conditions.append(p < size + lo)
        inside = data[(n, c, *(p - lo for p, lo in zip(positions, begin)), *lane)]
        return te.if_then_else(te.all(*conditions), inside, te.const(0, data.dtype)) if conditions else inside

    padded = [size + lo + hi for size, lo, hi in zip(spatial, begin, end)]
    names = ("d", "h", "w")[3 - rank :]
    if block:
        shape = (data.shape[0], data.shape[1], *padded, block)
        return te.compute(shape, lambda n, c, h, w, b: value(n, c, (h, w), (b,)), name="pad")
    if phases:
        Q = -(-padded[-1] // phases)
        shape = (data.shape[0], data.shape[1], *padded[:-1], phases, Q)
        # The last phase row may reach past the padded width: zeros there too.
        return te.compute(
            shape,
            _indexed(
                ("n", "c", *names[:-1], "r", "q"),
                lambda n, c, *rest: value(n, c, (*rest[:-2], rest[-1] * phases + rest[-2]), beyond_right=True),
            ),
            name="pad",
        )
    shape = (data.shape[0], data.shape[1], *padded)
    return te.compute(shape, _indexed(("n", "c", *names), lambda n, c, *positions: value(n, c, positions)), name="pad")


# ---------------------------------------------------------------------------------
# Schedule


def _register_tile_width(ow: int, limit: int) -> int:
    """Output columns per register tile: a divisor of ow near `limit` (no tail), or
    `limit` with a guarded tail when ow has none worth having."""
    if ow <= limit:
        return ow
    for d in range(limit, 3, -1):
        if ow % d == 0:
            return d
    return limit


def unblocked_vector_width(ow: int) -> int:
    """Output columns per vector of an unblocked (NCHW) conv: a power of two that
    divides `ow`, else 1 (scalar columns, ocn of them unrolled). A guarded tail would
    mask the accumulators' loads and stores, and masked memory keeps them out of
    registers (20x slower); a vector of another width (14, 7, 13 columns) is split by
    LLVM into pieces that do the same: measured here, 1x1 convs over 58-232 channels
    at 28x28, 14x14 and 7x7 ran at 1-4 GFLOP/s with the widths 14 and 7, at 10-110
    with a power of two or scalar columns."""
    return next((d for d in (16, 8, 4, 2) if ow % d == 0), 1)


def find_reduction(tensor: te.Tensor) -> te.Tensor:
    """The conv2d/dense reduction `tensor` is or reads through elementwise stages."""
    seen, stack = set(), [tensor]
    while stack:
        t = stack.pop()
        if id(t) in seen or not isinstance(t.op, te.ComputeOp):
            continue
        seen.add(id(t))
        if t.op.reduce_axis:
            return t
        stack.extend(t.op.input_tensors)
    raise ValueError(f"{tensor.name} does not read a reduction")


def inline_between(s: te.Schedule, out: te.Tensor, red: te.Tensor, inlined) -> None:
    """Inline every elementwise stage on a path from `red` to `out` (both excluded),
    and the stages the caller listed."""
    between: dict[int, te.Tensor] = {id(t): t for t in inlined if t is not out and t is not red}
    memo: dict[int, bool] = {}

    def reaches(t: te.Tensor) -> bool:  # does t read red (directly or through stages)?
        if t is red:
            return True
        if id(t) not in memo:
            memo[id(t)] = isinstance(t.op, te.ComputeOp) and any(
                reaches(src) for src in t.op.input_tensors
            )
            if memo[id(t)] and t is not out:
                between[id(t)] = t
        return memo[id(t)]

    reaches(out)
    for t in between.values():
        s[t].compute_inline()


def schedule_conv2d(s: te.Schedule, out: te.Tensor, conv: te.Tensor, inlined=(), config: dict | None = None) -> None:
    """Schedule a conv2d (`conv`, as conv2d_compute returned it) whose fused group ends
    in `out`; `inlined` are the elementwise stages between them. The knobs come from
    `config`, else from the tuning context (topi/tuning.py: a tuning log's best
    record of this workload), else the defaults (`default_config`)."""
    red = find_reduction(conv)
    info = conv2d_info(red)
    if info is None:
        raise ValueError(f"{red.name} was not made by conv2d_compute")
    where = red.name
    if config is None and all(isinstance(n, int) for n in red.shape):  # (tuning logs key static shapes)
        config = config_for("conv2d", info.params)
        where = f"{red.name} (the tuning log's config of {workload_key('conv2d', info.params)})"
    config = check_config(config, conv2d_space(red, info), where) if config is not None else default_config(red, info)
    if config.get("algorithm") == "winograd":
        # A direct compute (topi/winograd.py has the Winograd one; winograd-conv2d
        # chooses it at graph level): the direct schedule's own defaults.
        config = _default_schedule_config(red, info)
    inline_between(s, out, red, inlined)
    if is_depthwise(info):
        _schedule_depthwise(s, out if out.shape == red.shape else red, red, info, config)
        if out.shape != red.shape:
            _schedule_elementwise(s, out)
        return
    if info.pad is not None:
        phased = not info.data_block and not info.out_block and info.strides[-1] > 1
        _schedule_pad(s, info.pad, info.data_block, phased)
    if is_straddling(info) and out.shape != red.shape and out.shape == conv.shape:
        # (a group that reshapes after the conv takes the general path below)
        _schedule_straddle(s, out, red, config)
        return
    if out.shape != red.shape:
        # The group reshapes after the conv: the conv gets its own tile loops at the
        # root, `out` a plain elementwise schedule.
        _schedule_tiles(s, red, red, info, config)
        _schedule_elementwise(s, out)
        return
    _schedule_tiles(s, out, red, info, config)


# ---------------------------------------------------------------------------------
# Knobs (the tuning template "conv2d": autotune/topi_templates.py)


def conv2d_space(red: te.Tensor, info: Conv2dInfo) -> dict[str, tuple]:
    """The knobs of a conv2d schedule and their allowed values: those of its
    schedule (`_schedule_space`) and `algorithm`, "direct" or, for the convs
    Winograd F(2x2, 3x3) computes (`winograd_applies`), "winograd". The
    winograd-conv2d pass reads `algorithm` from the tuning log's best record of the
    conv's workload (topi/winograd.py schedules it). Where Winograd applies, the
    Winograd schedule's knobs (`winograd_space`) join as `winograd_tile`,
    `winograd_split` and `winograd_parallel`. The knobs of the algorithm a config
    does not use are held at their first values (`conv2d_config_distinct`)."""
    knobs = _schedule_space(red, info)
    if is_depthwise(info):  # (depthwise convs: their own knobs only)
        return knobs
    if not winograd_applies(info):
        return knobs | {"algorithm": ("direct",)}
    from tilecraft.topi.winograd import CONV2D_KNOBS, winograd_space

    winograd = winograd_space(_winograd_info(info))
    return knobs | {"algorithm": ("direct", "winograd")} | {name: winograd[k] for name, k in CONV2D_KNOBS.items()}


def _winograd_info(info: Conv2dInfo):
    """The WinogradInfo of the Winograd compute of the conv's workload (placeholders:
    its knobs and defaults depend on the shapes only)."""
    from tilecraft.topi.winograd import winograd_conv2d_compute, winograd_info

    data_shape, (KB, CB, _, _, ib, ob), pads = info.params[0], info.params[1], info.params[3]
    data = te.placeholder(tuple(data_shape), info.params[9], name="data")
    weight = te.placeholder((4, 4, KB, CB, ib, ob), info.params[10], name="winograd_weight")
    return winograd_info(winograd_conv2d_compute(data, weight, pads))


def winograd_applies(info: Conv2dInfo) -> bool:
    """Whether Winograd F(2x2, 3x3) can compute this conv: blocked layouts with one
    block, a 3x3 float32 kernel, strides and dilations 1, groups 1."""
    dilations, data_dtype, weight_dtype = info.params[4], info.params[9], info.params[10]
    block = info.out_block
    return (
        bool(block)
        and info.data_block == block
        and tuple(info.kernel_blocks) == (block, block)
        and info.groups == 1
        and tuple(info.kernel) == (3, 3)
        and tuple(info.strides) == (1, 1)
        and tuple(dilations) == (1, 1)
        and data_dtype == weight_dtype == "float32"
    )


def winograd_by_default(red: te.Tensor, info: Conv2dInfo) -> bool:
    """The heuristic's algorithm (winograd-conv2d's default `min-outputs`)."""
    from tilecraft.topi.winograd import WINOGRAD_MIN_OUTPUTS

    return winograd_applies(info) and red.shape[2] * red.shape[3] >= WINOGRAD_MIN_OUTPUTS


def _schedule_space(red: te.Tensor, info: Conv2dInfo) -> dict[str, tuple]:
    """The knobs of a conv2d schedule and their allowed values.

    Blocked output: `tile` = [ocn, regn], the register tile (ocn output-channel blocks
    x regn output columns, at most 28 of the 32 zmm registers); `row` = 1 accumulate a
    whole output row per channel block (weights reused from L1 by every tile of the
    row), 2 the whole output plane (reused by every tile of the plane; the channel
    lanes of a block unrolled); `order` = channel blocks outside (0) or inside (1)
    the window loops; `unroll_rx` = unroll the window's column loop; `parallel`.
    Unblocked output: `tile` = [ocn, owv] (output channels unrolled x vectorized
    columns), `parallel`.
    Depthwise convs have knobs of their own (`depthwise_space`)."""
    red = find_reduction(red)  # (a straddling conv's accumulators under its row sum)
    if is_depthwise(info):
        return depthwise_space(red, info)
    if info.out_block:
        ocb, ow, ob = red.shape[1], red.shape[3], info.out_block
        vectors = max(1, ob // BLOCK)
        tiles = [
            [ocn, regn]
            for ocn in range(1, min(ocb, 4) + 1) if ocb % ocn == 0 and ocn * ob <= 4 * BLOCK
            for regn in sorted({*(d for d in range(1, min(ow, 28) + 1) if ow % d == 0), min(ow, 28),
                                _register_tile_width(ow, max(1, (TILE_ACCUMULATORS * BLOCK) // (ocn * ob)))})
            if ocn * vectors * regn <= 28
        ]
        window = len(red.op.reduce_axis) - (2 if _blocked_channels(red) else 1 if _flat_channels(red) else 0)
        # (a straddling conv always accumulates an output row: `_schedule_straddle`)
        rows = _blocked_channels(red) and window == 2 and not is_straddling(info)
        knobs = {
            "tile": tuple(tiles),
            "row": (0, 1, 2) if rows else (0,),
            "order": (0, 1) if _blocked_channels(red) else (0,),
            "unroll_rx": (0, 1) if info.kernel[-1] > 1 else (0,),
            "parallel": (0, 1),
        }
    else:
        o, ow = red.shape[1], red.shape[-1]
        knobs = {
            "tile": tuple(
                [ocn, owv]
                for ocn in (1, 2, 3, 4, 6, 8) if o % ocn == 0
                # powers of two (the default: other widths split into masked pieces)
                # and the other divisors up to a vector
                for owv in sorted({unblocked_vector_width(ow), *(d for d in range(2, BLOCK + 1) if ow % d == 0)})
            ),
            "parallel": (0, 1),
        }
    return knobs


def conv2d_config_distinct(config: dict, knobs: dict[str, tuple] | None = None) -> bool:
    """False for a config that schedules the same loop nest as another config of its
    space: with `row` = 1 or 2 the reduction order is fixed (channel blocks outside the
    window loops), so `order` = 1 repeats `order` = 0 (a search that measured both
    would spend a trial on nothing); with `algorithm` = "winograd" the direct
    schedule's knobs are unused, with "direct" the Winograd knobs, so only their
    first values (of `knobs`) count."""
    from tilecraft.topi.winograd import CONV2D_KNOBS

    if knobs is not None and "algorithm" in config:
        winograd = config["algorithm"] == "winograd"
        unused = [k for k in knobs if k != "algorithm" and (k in CONV2D_KNOBS) != winograd]
        if not all(_same(config[k], knobs[k][0]) for k in unused):
            return False
        if winograd:
            return True
    return not (config.get("row") and config.get("order"))


def conv2d_config_normal(config: dict, knobs: dict[str, tuple]) -> dict:
    """The distinct config (`conv2d_config_distinct`) that schedules what `config`
    does: the knobs its algorithm does not use at their first values, `order` 0
    under `row` = 1 or 2. A search's one-knob step (flipping `algorithm`, setting `row`)
    goes through it, so such a step lands on a point of the space."""
    from tilecraft.topi.winograd import CONV2D_KNOBS

    config = dict(config)
    if "algorithm" in config:
        winograd = config["algorithm"] == "winograd"
        for k, values in knobs.items():
            if k != "algorithm" and (k in CONV2D_KNOBS) != winograd:
                config[k] = list(values[0]) if isinstance(values[0], tuple) else values[0]
    if config.get("row") and config.get("order"):
        config["order"] = 0
    return config


def _same(a, b) -> bool:
    norm = lambda v: list(v) if isinstance(v, (list, tuple)) else v  # noqa: E731
    return norm(a) == norm(b)


def _blocked_channels(red: te.Tensor) -> bool:
    return any(r.var.name == "rcb" for r in red.op.reduce_axis)


def _flat_channels(red: te.Tensor) -> bool:
    return any(r.var.name == "rc" for r in red.op.reduce_axis)


def default_config(red: te.Tensor, info: Conv2dInfo) -> dict:
    """The knobs the heuristics choose (what runs untuned)."""
    red = find_reduction(red)  # (a straddling conv's accumulators under its row sum)
    if is_depthwise(info):
        return depthwise_default_config(red, info)
    knobs = conv2d_space(red, info)
    if winograd_by_default(red, info):
        from tilecraft.topi.winograd import to_conv2d_config, winograd_default_config

        config = to_conv2d_config(winograd_default_config(_winograd_info(info))) | {"algorithm": "winograd"}
    else:
        config = _default_schedule_config(red, info) | {"algorithm": "direct"}
    normal = conv2d_config_normal(config, knobs)
    return {k: normal[k] for k in knobs}


def _default_schedule_config(red: te.Tensor, info: Conv2dInfo) -> dict:
    if is_depthwise(info):
        return depthwise_default_config(red, info)
    if info.out_block:
        OCB, OW, ob = red.shape[1], red.shape[3], info.out_block
        # Accumulators: ocn blocks x regn columns, 14 of the 32 zmm registers for
        # 16-lane blocks (2 x 7 beat 1 x 14 and 2 x 8 here; 2 x 8, 2 x 10, 2 x 12
        # and 4 x 7 were within this machine's noise of 2 x 7 on ResNet's 3x3 layers).
        ocn = next(d for d in (4, 3, 2, 1) if OCB % d == 0 and d * ob <= TILE_CHANNELS)
        if ocn * ob < TILE_CHANNELS:
            # An odd count of blocks (a 1000-class classifier's 63): a one-block
            # tile loads a weight vector for every column's FMA; the smallest
            # divisor with at least TILE_CHANNELS channels (up to the space's 4
            # blocks and 4 vectors) loads fewer. SqueezeNet's last conv in the
            # model: [3, 4] 667-740 us, [1, 13] 800-950 (onnxruntime 505).
            ocn = next((d for d in range(ocn + 1, min(4, 4 * BLOCK // ob) + 1)
                        if OCB % d == 0 and d * ob >= TILE_CHANNELS), ocn)  # fmt: skip
        columns = (TILE_ACCUMULATORS * BLOCK) // (ocn * ob)
        # A block narrower than 16 lanes still takes a whole register per vector:
        # at most 28 accumulators, as the space allows (4 x 14 xmm tiles of 4-lane
        # blocks spilled: ShuffleNet v1's 272-channel 1x1 convs ran 1.5x slower
        # than with 4 x 7 or 2 x 14).
        columns = min(columns, (2 * TILE_ACCUMULATORS) // (ocn * max(1, ob // BLOCK)))
        regn = _register_tile_width(OW, max(1, columns))
        # The weights one output-channel tile reads: Cg * KH * KW * ocn * ob floats.
        # Where they overflow L1 (48 KiB here) and a row has several register tiles,
        # accumulate a whole output row (ocn x OW x ob floats, a few KiB of stack)
        # one channel block at a time, so each block's weights are reused from L1 by
        # every tile of the row: 1.2-1.3x on the 56x56x64 layer, neutral elsewhere.
        weight_bytes = (info.in_channels // info.groups) * math.prod(info.kernel) * ocn * ob * 4
        window = len(red.op.reduce_axis) - 2 if _blocked_channels(red) else -1
        rows = weight_bytes > L1_BYTES and window == 2 and not is_straddling(info)
        # Where the whole output plane's accumulators of an output-channel tile fit in
        # PLANE_BYTES and the tiles are enough to share out, accumulate the plane
        # instead of a row (row = 2): each channel block's weights are then read once
        # per tile, not once per row. ResNet-50's 7x7 and 14x14 layers, whose
        # weights stream from L2/L3: 1.1-1.25x each (cold), the model 1.05 -> 1.00x
        # onnxruntime's time; larger planes (28x28 x 512 -> 128) gain 4%.
        plane_bytes = ocn * red.shape[2] * OW * ob * 4
        if rows and plane_bytes <= PLANE_BYTES and OCB // ocn >= PLANE_MIN_TILES:
            row = 2
        else:
            row = int(rows and OW > regn)
        return {"tile": [ocn, regn], "row": row, "order": 0, "unroll_rx": 0, "parallel": int(parallel_pays(red))}
    O, OW = red.shape[1], red.shape[-1]
    ocn = next(d for d in (8, 6, 4, 3, 2, 1) if O % d == 0)
    return {"tile": [ocn, unblocked_vector_width(OW)], "parallel": int(parallel_pays(red))}


def _schedule_pad(s: te.Schedule, pad: te.Tensor, block: int, phased: bool) -> None:
    axes = s[pad].op.axis
    if block:
        n, c, h, w, b = axes
        rows = [h]
        s[pad].vectorize(b)
    elif phased:  # column phases
        n, c, *rows, r, q = axes
        _, qi = s[pad].split(q, factor=BLOCK)
        s[pad].vectorize(qi)
    else:
        n, c, *rows, w = axes
        _, wi = s[pad].split(w, factor=BLOCK)
        s[pad].vectorize(wi)
    rows = s[pad].fuse(n, c, *rows)
    if parallel_pays(pad):
        s[pad].parallel(rows)


def _schedule_elementwise(s: te.Schedule, t: te.Tensor) -> None:
    axes = list(s[t].op.axis)
    inner = axes[-1]
    _, vi = s[t].split(inner, factor=BLOCK)
    s[t].vectorize(vi)
    if len(axes) > 2:
        s[t].parallel(s[t].fuse(*axes[:-1]))
    elif len(axes) == 2:
        s[t].parallel(axes[0])


def _schedule_tiles(s: te.Schedule, out: te.Tensor, red: te.Tensor, info: Conv2dInfo, config: dict) -> None:
    """The register-tiled loop nest; `out` is `red` or an elementwise stage of its shape."""
    local = s.cache_write(red, "local")
    ocn, width = config["tile"]
    if info.out_block:
        regn = width
        n, ocb, oh, ow, oc = s[out].op.axis
        ocbo, ocbi = s[out].split(ocb, factor=ocn)
        owo, owi = s[out].split(ow, factor=regn)
        s[out].reorder(n, ocbo, oh, owo, ocbi, owi, oc)
        s[out].vectorize(oc)
        if config["row"] == 2:  # the whole output plane of a channel-block tile
            row = s[out].fuse(n, ocbo)
        else:
            row = s[out].fuse(n, ocbo, oh)
        if config["parallel"]:
            s[out].parallel(row)
        ln, locb, loh, low, loc = s[local].op.axis
        lowo, lowi = s[local].split(low, factor=regn)
        unrolled, vector = [locb, lowi], loc
        reduce_axes = list(s[local].op.reduce_axis)
        if config["unroll_rx"]:
            unrolled = [next(r for r in reduce_axes if r.var.name == "rx"), *unrolled]
        if _blocked_channels(red):
            rcb, *window, rci = reduce_axes
            reduction = [*window, rcb, rci] if config["order"] else [rcb, *window, rci]
        else:
            reduction = reduce_axes
        # In the register tile, columns outside channel blocks (the Winograd GEMM's
        # reason, topi/winograd.py): tiles over 14 accumulators (2 x 14, 3 x 9)
        # no longer spill: 1.3-1.6x what they ran at before.
        if config["row"] == 2:
            order = [ln, rcb, loh, lowo, *window, rci, lowi, locb, vector]
            attach = row
            # The channel lanes unrolled as well: the plane's accumulators are
            # loaded and stored around each pass over them, and as a loop the lanes
            # cost more instructions than the FMAs could hide; unrolled, LLVM also
            # keeps the block's weight vectors in registers across the plane's
            # tiles. ResNet-50's 1x1 convs at 14x14 and 7x7 and its stride-2
            # downsample: 5-9% (isolated, warm), the model 2.5%, DenseNet and
            # SqueezeNet 1-2%; it doubles ResNet-50's compile time (9 -> 19 s: the
            # tile's FMAs sixteen times over in the loop IR). Rows (row = 1) ran
            # 1.3x slower with it, so they keep the loop.
            unrolled.append(rci)
        elif config["row"]:  # (offered with blocked channels only)
            order = [ln, loh, rcb, lowo, *window, rci, lowi, locb, vector]
            attach = row
        else:
            order = [ln, loh, lowo, *reduction, lowi, locb, vector]
            attach = owo
    else:
        owv = width
        n, o, *rows, ow = s[out].op.axis
        oo, oi = s[out].split(o, factor=ocn)
        owo, owi = s[out].split(ow, factor=owv)
        s[out].reorder(n, oo, *rows, owo, oi, owi)
        s[out].vectorize(owi)
        fused = s[out].fuse(n, oo, *rows)
        if config["parallel"]:
            s[out].parallel(fused)
        attach = owo
        ln, lo, *local_rows, low = s[local].op.axis
        order = [ln, *local_rows, *s[local].op.reduce_axis, lo, low]
        unrolled, vector = [lo], low

    if out is not red:
        # `red` is now the copy out of the accumulators: inlined, so the fused
        # epilogue reads the accumulators themselves, per tile (or row, or plane).
        s[red].compute_inline()
    s[local].compute_at(s[out], attach)
    s[local].reorder(*order)
    for a in unrolled:
        s[local].unroll(a)
    s[local].vectorize(vector)


# ---------------------------------------------------------------------------------
# Depthwise convs (one input and one output channel per group, blocked output)
#
# A depthwise conv does KH * KW multiply-adds per output and reads each input
# element only KH * KW / (sh * sw) times: nothing is reused across channels, so the
# ordinary recipe's output-channel tile buys nothing, and the padded copy at the root
# costs as much memory traffic as the conv itself (MobileNet-v2's 96-channel
# 112x112 stride-2 layer: 5 MB written and read again for 1.2 MB of output). Here
#
#     parallel for (n, cb, oh) fused
#       for ow.outer                                 # a register tile of regn columns
#         acc[regn][16] = 0
#         for ry, rx (rx unrolled or not)
#           unrolled ow.inner (regn), vectorized c (16):
#             acc += x[.., oh*sh + ry - top, ow*sw + rx - left, c] (0 outside) * w[cb, ry, rx, c]
#         epilogue (bias, relu6, residual add inlined), vector stores
#
# with the pad inlined into the loads (`pad` = 0): a row guard LLVM hoists out of the
# tile and a column guard per load that is predicted taken inside the image, so no
# padded copy is written. Blocked data makes a stride a matter of addresses (each
# column is a whole 16-lane vector), so stride 2 needs no column phases. Measured here
# (bench/models.py's MobileNet-v2 shapes, 2 threads) against the ordinary schedule:
# the stride-2 layers 1.5-3x faster, the 56x56 and 28x28 stride-1 layers 1.5-2.5x.


def is_straddling(info: Conv2dInfo) -> bool:
    """Whether the conv's kernel layout is a straddling one (conv2d_straddle_compute)."""
    return straddle_layout(info.params[7]) is not None


def is_depthwise(info: Conv2dInfo) -> bool:
    """A depthwise conv (groups = input = output channels) with a blocked output."""
    return bool(info.out_block) and info.groups > 1 and info.groups == info.in_channels == info.out_channels


def depthwise_space(red: te.Tensor, info: Conv2dInfo) -> dict[str, tuple]:
    """The knobs of a depthwise schedule: `regn` output columns per register tile
    (divisors of OW up to 28, and the default and 28 with a guarded tail); `pad` = 0 the pad inlined
    into the conv's loads, 1 a padded copy at the root (the only choice without
    pads); `unroll_rx` = unroll the window's column loop (loads shared between
    neighbouring columns); `parallel`."""
    ow = red.shape[3]
    widths = sorted({*(d for d in range(1, min(ow, 28) + 1) if ow % d == 0), min(ow, 28),
                     _register_tile_width(ow, DEPTHWISE_COLUMNS)})
    return {
        "regn": tuple(widths),
        "pad": (0, 1) if info.pad is not None else (0,),
        "unroll_rx": (0, 1) if info.kernel[-1] > 1 else (0,),
        "parallel": (0, 1),
    }


def depthwise_default_config(red: te.Tensor, info: Conv2dInfo) -> dict:
    """Untuned depthwise knobs: a register tile of up to 8 columns, the pad inlined,
    rx unrolled. 8 accumulators, the KH * KW weight vectors and the (regn - 1) * sw + KW
    input vectors of a window row fit the 32 zmm registers; 14 columns (the ordinary
    tile) spill: MobileNet-v2's 28x28 and 14x14 layers ran 1.5-3x slower with 14 than
    with 7, the 112x112 and 56x56 ones within noise of 4, 7 and 8."""
    ow = red.shape[3]
    return {
        "regn": _register_tile_width(ow, DEPTHWISE_COLUMNS),
        "pad": 0,
        "unroll_rx": int(info.kernel[-1] > 1),
        "parallel": int(parallel_pays(red)),
    }


def _schedule_depthwise(s: te.Schedule, out: te.Tensor, red: te.Tensor, info: Conv2dInfo, config: dict) -> None:
    """The depthwise loop nest above; `out` is `red` or an elementwise stage of its shape."""
    regn = config["regn"]
    if info.pad is not None:
        if config["pad"]:
            _schedule_pad(s, info.pad, info.data_block, phased=False)
        else:
            s[info.pad].compute_inline()
    local = s.cache_write(red, "local")
    n, cb, oh, ow, c = s[out].op.axis
    owo, owi = s[out].split(ow, factor=regn)
    s[out].reorder(n, cb, oh, owo, owi, c)
    s[out].vectorize(c)
    rows = s[out].fuse(n, cb, oh)
    if config["parallel"]:
        s[out].parallel(rows)
    ln, lcb, loh, low, lc = s[local].op.axis
    lowo, lowi = s[local].split(low, factor=regn)
    *window, rx = s[local].op.reduce_axis
    s[local].reorder(ln, lcb, loh, lowo, *window, rx, lowi, lc)
    if out is not red:
        s[red].compute_inline()
    s[local].compute_at(s[out], owo)
    if config["unroll_rx"]:
        s[local].unroll(rx)
    s[local].unroll(lowi)
    s[local].vectorize(lc)


# ---------------------------------------------------------------------------------
# Grouped convs whose groups cut channel blocks ("straddling" blocks)
#
# ShuffleNet v1's grouped 1x1 convs have 34, 68 or 136 channels per group: a 16-lane
# output block may hold the last lanes of one group and the first of the next. Here
# data and output stay in 16-lane blocks (no layout transform around the conv, no
# 2-, 4- or 8-lane vectors). The weight has a row per (output block, group of its
# lanes) pair, rows 0 .. OCB-1 for each block's first group and one more row for
# each further group (a straddling block's second); a row reads exactly the Cg input
# channels of its group, i at a time (i divides Cg and the data block b, so a step
# never crosses a block; q0(r) = group(r) * Cg / i):
#
#     acc[n, r, oh, ow, oc] = sum over rcb < Cg / i, ry, rx, rci < i:
#         x[n, (q0(r) + rcb) // (b / i), oh * sh + ry, ow * sw + rx, (q0(r) + rcb) % (b / i) * i + rci]
#         * w[r, rcb, ry, rx, rci, oc]
#     out[n, ocb, ..] = the lanes of acc[n, ocb, ..] in ocb's first group, the others
#                       from acc[n, extra(ocb), ..] (0 on lanes past O)
#
# The div/mod is on the channel-step loop, outside the lanes. A row's lanes of
# another group hold zero weights; the output stage selects each lane from the row
# of its own group (it never adds rows), so no input of one group reaches an output
# of another, not even an inf through a zero weight (0 * inf = NaN), and no input
# channel of another group is read at all. The accumulators are a register-tiled
# conv of their own; the selection is the elementwise stage after it (with the
# epilogue: bias, relu). Output channels a block does not divide are padded up to
# whole blocks (136 in 9 blocks of 16): those lanes are zeros.


def pack_straddle_weight(w: np.ndarray, in_channels: int, groups: int, in_block: int, out_block: int) -> np.ndarray:
    """An OIHW grouped weight [O, C/groups, KH, KW] as the straddling kernel reads it:
    [rows, C/groups/i, KH, KW, i, o] (`straddle_rows`, i = `in_block`), zero where
    a lane's group is not the row's."""
    O, Cg, KH, KW = w.shape
    rows = straddle_rows(in_channels, O, groups, in_block, out_block)
    Og = O // groups
    packed = np.zeros((len(rows.group), Cg // in_block, KH, KW, in_block, out_block), w.dtype)
    # [Cg, KH, KW] of one output channel -> [Cg / i, KH, KW, i]
    per_channel = w.reshape(O, Cg // in_block, in_block, KH, KW).transpose(0, 1, 3, 4, 2)
    for r, (g, ocb) in enumerate(zip(rows.group, rows.block)):
        for oc in range(out_block):
            o = ocb * out_block + oc
            if g * Og <= o < min((g + 1) * Og, O):
                packed[r, ..., oc] = per_channel[o]
    return packed


def _table(index: te.Expr, values: Sequence[int]) -> te.Expr | int:
    """values[index] for an index expression: a chain of selects over the runs of
    equal values (the output block loop's, hoisted out of the reduction)."""
    runs: list[tuple[int, int]] = []  # (first index, value)
    for i, v in enumerate(values):
        if not runs or runs[-1][1] != v:
            runs.append((i, v))
    expr: te.Expr | int = runs[0][1]
    for i, v in runs[1:]:
        expr = te.if_then_else(index >= i, v, expr)
    return expr


def conv2d_straddle_compute(
    data: te.Tensor,
    weight: te.Tensor,
    bias: te.Tensor | None = None,
    *,
    groups: int,
    channels: tuple[int, int],
    strides: Sequence[int] = (1, 1),
    pads: Sequence[int] = (0, 0, 0, 0),
    name: str = "conv2d",
) -> te.Tensor:
    """A grouped conv of C -> O `channels` on NCHW<b>c data with a straddling weight
    [rows, C/groups/i, KH, KW, i, o] (`pack_straddle_weight`), output NCHW<o>c (+
    `bias` [blocks * o]). Returns the stage that takes each lane from its group's
    row (and adds the bias); `find_reduction` finds the accumulators under it."""
    if data.ndim != 5 or weight.ndim != 6:
        raise ValueError(f"conv2d straddle: data {data.shape} / weight {weight.shape} are not blocked")
    N, CB, H, W, db = data.shape
    R, steps, KH, KW, ib, ob = weight.shape
    if db % ib:
        raise ValueError(f"conv2d straddle: weight in-block {ib} does not divide the data block {db}")
    C, O = channels
    OCB = -(-O // ob)
    if -(-C // db) != CB:
        raise ValueError(f"conv2d straddle: {C} input channels are not {CB} blocks of {db}")
    rows = straddle_rows(C, O, groups, ib, ob)
    Cg, Og = C // groups, O // groups
    if (R, steps) != (len(rows.group), Cg // ib):
        raise ValueError(
            f"conv2d straddle: weight {weight.shape} has {R} rows of {steps} channel steps, "
            f"{len(rows.group)} of {Cg // ib} expected"
        )
    strides, pads = tuple(int(v) for v in strides), tuple(int(v) for v in pads)
    begin, end = pads[:2], pads[2:]
    OH = (H + begin[0] + end[0] - KH) // strides[0] + 1
    OW = (W + begin[1] + end[1] - KW) // strides[1] + 1
    if OH <= 0 or OW <= 0:
        raise ValueError("conv2d straddle: the kernel does not fit the padded input")
    if bias is not None and bias.shape != (OCB * ob,):
        raise ValueError(f"conv2d straddle: bias must have shape ({OCB * ob},), got {bias.shape}")
    padded = _pad(data, db, begin, end, (H, W)) if any(pads) else data
    # (named as conv2d_compute's blocked channel axes: the schedule tiles them alike)
    rcb = te.reduce_axis((0, steps), name="rcb")
    ry = te.reduce_axis((0, KH), name="ry")
    rx = te.reduce_axis((0, KW), name="rx")
    rci = te.reduce_axis((0, ib), name="rci")
    per = db // ib  # channel steps per data block

    def body(n, r, oh, ow, oc):
        q = _table(r, [g * steps for g in rows.group]) + rcb
        block, lane = (q, rci) if per == 1 else (q // per, q % per * ib + rci)
        x = padded[n, block, oh * strides[0] + ry, ow * strides[1] + rx, lane]
        return te.sum(x * weight[r, rcb, ry, rx, rci, oc], axis=[rcb, ry, rx, rci])

    acc = te.compute((N, R, OH, OW, ob), body, name=name)
    params = (
        list(data.shape), list(weight.shape), list(strides), list(pads), [1, 1], groups,
        f"NCHW{db}c", f"straddle{C}c{O}o{ib}i{ob}o", f"NCHW{ob}c", str(data.dtype), str(weight.dtype),
    )
    acc.op.attrs["conv2d"] = Conv2dInfo(
        db, (ib, ob), ob, groups, C, R * ob, (KH, KW), strides, padded if padded is not data else None, params,
    )
    extra = [rows.extra(b) for b in range(OCB)]
    # The lanes of block b in its first row's group: the others are the extra row's.
    first = [min(ob, (rows.group[b] + 1) * Og - b * ob) for b in range(OCB)]
    straddling = any(extra)

    def value(n, ocb, oh, ow, oc):
        v = acc[n, ocb, oh, ow, oc]
        if straddling:
            other = _table(ocb, [e[0] if e else b for b, e in enumerate(extra)])
            v = te.if_then_else(oc < _table(ocb, first), v, acc[n, other, oh, ow, oc])
        if O % ob:
            v = te.if_then_else(ocb * ob + oc < O, v, te.const(0, acc.dtype))
        if bias is not None:
            v = v + bias[ocb * ob + oc]
        return v

    if not straddling and not O % ob and bias is None:
        return acc
    rows_sum = te.compute((N, OCB, OH, OW, ob), value, name=f"{name}_rows")
    rows_sum.op.attrs["accumulators"] = acc
    return rows_sum


def _schedule_straddle(s: te.Schedule, out: te.Tensor, acc: te.Tensor, config: dict) -> None:
    """A straddling conv whose output stage (`out`: each lane from its group's row,
    the epilogue inlined) reads the accumulators of other rows: per output row (n,
    oh fused, parallel) the accumulators of every row of that output row are
    computed first, register tile by register tile ([ocn, regn] of the config, as
    `_schedule_tiles`), into a buffer of R x OW x b floats that stays in L1, which
    the output stage then reads with vector selects."""
    local = s.cache_write(acc, "local")
    ocn, regn = config["tile"]
    n, ocb, oh, ow, oc = s[out].op.axis
    s[out].reorder(n, oh, ocb, ow, oc)
    row = s[out].fuse(n, oh)
    if config["parallel"]:
        s[out].parallel(row)
    s[out].vectorize(oc)
    s[acc].compute_at(s[out], row)
    an, ar, aoh, aow, aoc = s[acc].op.axis
    aro, ari = s[acc].split(ar, factor=ocn)
    aowo, aowi = s[acc].split(aow, factor=regn)
    s[acc].reorder(an, aoh, aro, aowo, ari, aowi, aoc)
    s[acc].vectorize(aoc)
    s[local].compute_at(s[acc], aowo)
    ln, lr, loh, low, loc = s[local].op.axis
    lowo, lowi = s[local].split(low, factor=regn)
    rcb, *window, rci = s[local].op.reduce_axis
    reduction = [*window, rcb, rci] if config["order"] else [rcb, *window, rci]
    s[local].reorder(ln, loh, lowo, *reduction, lr, lowi, loc)
    if config["unroll_rx"]:
        s[local].unroll(window[-1])
    s[local].unroll(lr)
    s[local].unroll(lowi)
    s[local].vectorize(loc)
