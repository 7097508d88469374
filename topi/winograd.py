"""Winograd F(2x2, 3x3) conv2d in blocked layouts: compute and CPU schedule.

A `graph.conv2d` with `algorithm = "winograd"` (transforms/winograd_conv2d.py) reads
NCHW<b>c data and a weight already transformed at compile time, U = G g G^T
([4, 4, O/b, C/b, b, b], dialects/graph_reference.py `winograd_weight`), and writes
NCHW<b>c. Per 2x2 output tile it does 16 multiply-adds per input channel where the
direct conv does 36. Three stages (and the zero-padded input):

    V[n, th, tw, a, b, cb, ci]  = (B^T d B)[a, b]     d: the 4x4 input tile at (2 th, 2 tw)
    M[n, kb, th, tw, a, b, k]   = sum_(cb, ci) V[n, th, tw, a, b, cb, ci] * U[a, b, kb, cb, ci, k]
    Y[n, kb, oh, ow, k]         = (A^T M[n, kb, oh/2, ow/2] A)[oh % 2, ow % 2]

B^T and A^T are written into the index arithmetic and signs of the stages, not read
from tables: row a of B^T d is d[r0(a)] + s(a) d[r1(a)] with r0 = (0, 1, 2, 1),
r1 = (2, 2, 1, 3) and s = (-1, 1, -1, -1), and with p = oh % 2 a row of A^T M is
M0 + M1 + M2 - p (M0 + 2 M2 + M3). Once the a and b loops are unrolled these are
constants, so the input transform is adds of whole 16-lane vectors.
An odd OH or OW has a partial last tile: the padded input reaches 2 TH + 2 rows
(zeros past the image), and Y is computed only for the rows that exist.

The schedule, one kernel of three root stages (each its own parallel loop):

    pad (if any), parallel (n, cb, h), vectorized lanes
    V: parallel (n, th); for tw, cb; unrolled a, b; vectorized ci
    M: parallel (n, kb.outer, a, b); for th, tw.outer          # a batched GEMM per (a, b)
         acc[ocn][regn][16] = 0; for cb, ci: unrolled kb.inner, tw.inner, vectorized k: FMA
    Y: parallel (n, kb, oh); vectorized k; the fused epilogue (bias, relu, residual
       add) inlined, so the output is written once

`config` knobs (`winograd_space`): `tile` = [ocn, regn] (the GEMM's register tile),
`split`, `parallel`. In the conv2d tuning template they are the knobs `winograd_tile`,
`winograd_split` and `winograd_parallel` under `algorithm` = "winograd"
(topi/conv2d.py `conv2d_space`); with no config given, `schedule_winograd` asks the
tuning context for the config of the conv's workload (the direct conv's params, as
winograd-conv2d does) and uses its Winograd knobs.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.frontends import te
from tilecraft.topi.conv2d import (
    BLOCK,
    TILE_ACCUMULATORS,
    _pad,
    _register_tile_width,
    _schedule_elementwise,
    _schedule_pad,
    inline_between,
)
from tilecraft.topi.schedule import parallel_pays
from tilecraft.topi.tuning import check_config, config_for, workload_key


# Output pixels per image from which the untuned path runs a 3x3 conv as Winograd
# (winograd-conv2d's `min-outputs`): measured here on ResNet-18's layers, Winograd
# won 1.3-2x at 56x56, 28x28 and 14x14 and was about even at 7x7 (512 channels:
# the 16 MB transformed weight makes its GEMMs memory-bound).
WINOGRAD_MIN_OUTPUTS = 196


@dataclass(frozen=True)
class WinogradInfo:
    """The stages of a Winograd conv (its output transform is the key)."""

    pad: te.Tensor | None
    input: te.Tensor  # V
    gemm: te.Tensor  # M
    block: int
    params: tuple = ()  # the workload of the direct conv it computes (template "conv2d")


def winograd_info(tensor: te.Tensor) -> WinogradInfo | None:
    """The record of a Winograd conv's output stage (its compute's attrs["winograd"])."""
    return getattr(tensor.op, "attrs", {}).get("winograd")


def tiles(size: int) -> int:
    """2x2 output tiles along an axis of `size` outputs."""
    return -(-size // 2)


def winograd_conv2d_compute(data: te.Tensor, weight: te.Tensor, pads, name: str = "conv2d") -> te.Tensor:
    """The Winograd F(2x2, 3x3) conv of `data` [N, C/b, H, W, b] by a transformed
    weight [4, 4, O/b, C/b, b, b] with `pads` [top, left, bottom, right] (stride 1):
    [N, O/b, OH, OW, b]."""
    if data.ndim != 5 or weight.ndim != 6 or weight.shape[:2] != (4, 4):
        raise ValueError(f"winograd conv2d: data {data.shape} or weight {weight.shape} is not blocked/transformed")
    N, CB, H, W, block = data.shape
    _, _, KB, wcb, ib, ob = weight.shape
    if (wcb, ib) != (CB, block) or ob != block:
        raise ValueError(f"winograd conv2d: weight {weight.shape} does not match data {data.shape}")
    top, left, bottom, right = (int(p) for p in pads)
    OH, OW = H + top + bottom - 2, W + left + right - 2
    if OH <= 0 or OW <= 0:
        raise ValueError("winograd conv2d: the 3x3 kernel does not fit the padded input")
    TH, TW = tiles(OH), tiles(OW)
    # The padded input covers whole 4x4 tiles: 2 T + 2 rows and columns.
    end = (2 * TH + 2 - H - top, 2 * TW + 2 - W - left)
    padded = _pad(data, block, (top, left), end, (H, W)) if any((top, left, *end)) else data
    dtype = data.dtype

    def sign(a):  # s(a) = (-1, 1, -1, -1)
        return te.cast(2 * (a % 2) * (1 - a // 2) - 1, dtype)

    def first(a):  # r0(a) = (0, 1, 2, 1)
        return a - (a // 3) * 2

    def second(a):  # r1(a) = (2, 2, 1, 3)
        return 2 - a // 2 + (a // 3) * 2

    def transform_input(n, th, tw, a, b, cb, ci):
        def d(r, c):
            return padded[n, cb, 2 * th + r, 2 * tw + c, ci]

        def row(r):
            return d(r, first(b)) + sign(b) * d(r, second(b))

        return row(first(a)) + sign(a) * row(second(a))

    V = te.compute((N, TH, TW, 4, 4, CB, block), transform_input, name=f"{name}_winograd_input")
    rcb = te.reduce_axis((0, CB), name="rcb")
    rci = te.reduce_axis((0, block), name="rci")
    M = te.compute(
        (N, KB, TH, TW, 4, 4, ob),
        lambda n, kb, th, tw, a, b, k: te.sum(V[n, th, tw, a, b, rcb, rci] * weight[a, b, kb, rcb, rci, k], axis=[rcb, rci]),
        name=f"{name}_winograd_gemm",
    )

    def transform_output(n, kb, oh, ow, k):
        th, tw = oh // 2, ow // 2
        p, q = te.cast(oh % 2, dtype), te.cast(ow % 2, dtype)

        def row(a):
            m = [M[n, kb, th, tw, a, b, k] for b in range(4)]
            return m[0] + m[1] + m[2] - q * (m[0] + 2.0 * m[2] + m[3])

        r = [row(a) for a in range(4)]
        return r[0] + r[1] + r[2] - p * (r[0] + 2.0 * r[2] + r[3])

    Y = te.compute((N, KB, OH, OW, ob), transform_output, name=name)
    # The direct conv's workload (conv2d_compute's params, as winograd-conv2d keys the
    # tuning log): its weight [O/o, I/i, 3, 3, i, o] and blocked layouts.
    params = (
        list(data.shape), [KB, CB, 3, 3, ib, ob], [1, 1], [top, left, bottom, right], [1, 1], 1,
        f"NCHW{block}c", f"OIHW{ib}i{ob}o", f"NCHW{ob}c", str(data.dtype), str(weight.dtype),
    )  # fmt: skip
    Y.op.attrs["winograd"] = WinogradInfo(padded if padded is not data else None, V, M, block, params)
    return Y


def winograd_weight_compute(weight: te.Tensor) -> te.Tensor:
    """G g G^T of a blocked 3x3 weight [O/o, I/i, 3, 3, i, o] -> [4, 4, O/o, I/i, i, o]
    (`graph.winograd_weight` when its weight is not known at compile time; otherwise
    fold-constants computes it once)."""
    if weight.ndim != 6 or weight.shape[2:4] != (3, 3):
        raise ValueError(f"winograd weight: {weight.shape} is not a blocked 3x3 weight")
    KB, CB, _, _, ib, ob = weight.shape
    G = ((1.0, 0.0, 0.0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0.0, 0.0, 1.0))

    def g(a, r):  # G[a, r], a an axis, r a number
        value = te.const(G[3][r], weight.dtype)
        for i in (2, 1, 0):
            value = te.if_then_else(a == i, te.const(G[i][r], weight.dtype), value)
        return value

    def body(a, b, kb, cb, i, o):
        return sum(
            (g(a, r) * g(b, c) * weight[kb, cb, r, c, i, o] for r in range(3) for c in range(3)),
            start=te.const(0.0, weight.dtype),
        )

    return te.compute((4, 4, KB, CB, ib, ob), body, name="winograd_weight")


# ---------------------------------------------------------------------------------
# Schedule


def winograd_space(info: WinogradInfo) -> dict[str, tuple]:
    """The knobs: `tile` = [ocn, regn] (kb blocks x tw tiles of the GEMM's register
    tile, at most 28 zmm accumulators); `split` = parts of the output channel blocks
    per task (each part recomputes the input transform of its tile row, and reads a
    part of the weights); `parallel`."""
    kb, tw = info.gemm.shape[1], info.gemm.shape[3]
    splits = tuple(p for p in (1, 2, 4) if kb % p == 0)
    tile = [
        [ocn, regn]
        for ocn in (1, 2, 3, 4) if kb % ocn == 0
        for regn in range(1, min(tw, 28 // ocn) + 1)  # a regn that does not divide TW: a guarded tail
    ]
    return {"tile": tuple(tile), "split": splits, "parallel": (0, 1)}


# The conv2d template's names of the Winograd knobs (topi/conv2d.py `conv2d_space`).
CONV2D_KNOBS = {"winograd_tile": "tile", "winograd_split": "split", "winograd_parallel": "parallel"}


def from_conv2d_config(config: dict) -> dict:
    """The Winograd schedule's config in a conv2d template config."""
    return {knob: config[name] for name, knob in CONV2D_KNOBS.items() if name in config}


def to_conv2d_config(config: dict) -> dict:
    """A Winograd schedule config under the conv2d template's knob names."""
    return {name: config[knob] for name, knob in CONV2D_KNOBS.items()}


def winograd_default_config(info: WinogradInfo) -> dict:
    n, kb, th, tw = info.gemm.shape[:4]
    # The widest register tile the space offers (28 accumulators), channel blocks
    # first: each tile column's broadcast input then feeds up to 4 FMAs. Against
    # the 2 x 7 tile (cold, isolated): ResNet's 56x56, 28x28 and 14x14 layers 4 x 7
    # 1.07x, 1.07x, 1.15x; DenseNet's 256-channel layers 2 x 14 1.07x.
    ocn = next(d for d in (4, 3, 2, 1) if kb % d == 0)
    regn = _register_tile_width(tw, 2 * TILE_ACCUMULATORS // ocn)
    # Enough tasks for the two cores to end together: a few per core.
    split = next((p for p in (1, 2, 4) if kb % (p * ocn) == 0 and n * th * p >= 16), 1)
    return {"tile": [ocn, min(regn, tw)], "split": split, "parallel": int(parallel_pays(info.gemm))}


def schedule_winograd(s: te.Schedule, out: te.Tensor, y: te.Tensor, inlined=(), config: dict | None = None) -> None:
    """Schedule the Winograd conv whose output transform is `y` and whose fused group
    ends in `out` (`inlined`: the elementwise stages between them)."""
    info = winograd_info(y)
    if info is None:
        raise ValueError(f"{y.name} was not made by winograd_conv2d_compute")
    config = config if config is not None else _logged_config(y, info)
    inline_between(s, out, y, inlined)
    if info.pad is not None:
        _schedule_pad(s, info.pad, info.block, False)
    if out.shape != y.shape:  # the group reshapes after the conv: Y at the root
        _schedule_rows(s, y, info, config)
        _schedule_elementwise(s, out)
        return
    if out is not y:
        s[y].compute_inline()
    _schedule_rows(s, out, info, config)


def _logged_config(y: te.Tensor, info: WinogradInfo) -> dict:
    """The tuning context's Winograd knobs of the conv's workload (checked), else the
    defaults. A logged config whose `algorithm` is not "winograd" has no Winograd
    knobs to give (winograd-conv2d left such a conv direct)."""
    config = config_for("conv2d", info.params) if info.params else None
    if config is None or config.get("algorithm") != "winograd":
        return winograd_default_config(info)
    where = f"{y.name} (the tuning log's config of {workload_key('conv2d', info.params)})"
    missing = sorted(set(CONV2D_KNOBS) - set(config))
    if missing:
        raise ValueError(f"{where}: the config has no knob '{missing[0]}'")
    return check_config(from_conv2d_config(config), winograd_space(info), where)


def _schedule_rows(s: te.Schedule, out: te.Tensor, info: WinogradInfo, config: dict) -> None:
    """Tasks of one tile row (two output rows) and a part of the output channels:
    its input transform and its GEMMs into buffers of the task, then the output."""
    ocn, regn = config["tile"]
    n, kb, oh, ow, k = s[out].op.axis
    oho, ohi = s[out].split(oh, factor=2)
    kbo, kbi = s[out].split(kb, nparts=config["split"])
    s[out].reorder(n, oho, kbo, kbi, ohi, ow, k)
    s[out].vectorize(k)
    task = s[out].fuse(n, oho, kbo)
    if config["parallel"]:
        s[out].parallel(task)

    v, m = info.input, info.gemm
    local = s.cache_write(m, "local")
    for t in (v, m):
        s[t].set_scope("local")
        s[t].compute_at(s[out], task)

    n, th, tw, a, b, cb, ci = s[v].op.axis
    s[v].reorder(n, th, tw, cb, a, b, ci)
    s[v].unroll(a)
    s[v].unroll(b)
    s[v].vectorize(ci)

    n, kb, th, tw, a, b, k = s[m].op.axis
    mkbo, mkbi = s[m].split(kb, factor=ocn)
    two, twi = s[m].split(tw, factor=regn)
    s[m].reorder(n, th, a, b, mkbo, two, mkbi, twi, k)
    s[m].vectorize(k)
    ln, lkb, lth, ltw, la, lb, lk = s[local].op.axis
    ltwo, ltwi = s[local].split(ltw, factor=regn)
    rcb, rci = s[local].op.reduce_axis
    s[local].compute_at(s[m], two)
    # Columns outside channel blocks: a column's broadcast input is used at once by
    # each block's FMA, and each block's weight vector stays in a register across
    # the columns. (With blocks outside, LLVM keeps every column's broadcast live
    # across the blocks: 2 x 14 needed 44 registers and spilled, 331 GFLOP/s against
    # 465 on ResNet's 56x56 layer.)
    s[local].reorder(ln, la, lb, lth, ltwo, rcb, rci, ltwi, lkb, lk)
    s[local].unroll(lkb)
    s[local].unroll(ltwi)
    s[local].vectorize(lk)


__all__ = ["BLOCK", "schedule_winograd", "winograd_conv2d_compute", "winograd_info", "winograd_space", "winograd_weight_compute"]
