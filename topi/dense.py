"""dense and matmul: computes and a register-tiled CPU GEMM schedule.

`dense_compute(x, w, bias)`: x[..., K] @ w^T (+ bias[N]) -> [..., N], with the weight
in layout "NK" ([N, K], as `graph.dense`, ONNX Gemm with transB, TVM's dense) or "KN"
([K, N], what `pack_dense_weight` makes of an NK weight once, offline: weights are
constants). `matmul_compute(a, b)`: numpy's matmul on the last two axes, batch axes
broadcast (BERT's attention: [1, 12, 128, 64] @ [1, 12, 64, 128]).

The schedule is the GEMM recipe of bench/matmul.py, with the output tile held in
registers by `cache_write(.., "local")`:

    parallel for (batch..., j.outer, i.outer) fused   # panels of nr columns outside
      C.local[mr][nr] = 0                             # mr x nr/16 zmm accumulators
      for k:                                          # the whole reduction
        unrolled i.inner (mr): vectorized j.inner (nr):
          acc += x[i, k] (broadcast) * w[k, j] (nr/16 vector loads)
      epilogue (bias, GELU, residual add, inlined): out tile = f(acc)

Per k step: nr/16 contiguous vector loads of the KN weight row and mr broadcasts for
mr * nr/16 FMAs. 6 x 64 (24 accumulators) beat 4 x 64, 8 x 32 and 12 x 32 on the BERT
shapes here (the extra rows amortize the weight loads, which come from L2: a 64-column
panel of a 768-deep weight is 192 KiB); rows that 6 does not divide get a guarded tail.
The fused parallel loop puts each thread on its own run of column panels, so a panel
stays in that core's L2 while every row tile uses it.

Weight layouts: "NK64n" ([N/64, K, 64], what alter-layout packs a constant weight
into when N is a multiple of 64 and x has several rows) keeps each 64-column panel
contiguous, so a register tile streams K x 64 consecutive floats; the index
`w[j // 64, k, j % 64]` becomes plain vector loads once the tile's columns are one
panel (the loop lowering simplifies j = jo * 64 + ji). A "KN" weight ([K, N]) reads
rows N floats apart: for several row tiles the schedule copies each panel once per
call (`pack`), which the NK64n weight does offline. Measured under load (2 threads,
interleaved): 128 x 768 x 3072 0.77x the KN time with its per-call packing,
128 x 768 x 768 0.92x.

A plain NK weight (a dense alter-layout has not transformed) is transposed inside the
function, one panel per `j.outer` (cache_read-style, as bench/matmul packs B), with
the row tiles of a panel run serially inside it: correct, but it moves the weight
once per call, which is what pre-packing to KN saves.

A GEMV (M = 1: a classifier at batch 1) keeps its NK weight (alter-layout): the dot
products stream each weight row once, bound by the weight's memory traffic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tilecraft.dialects.graph import PANEL, dense_weight_nk
from tilecraft.frontends import te
from tilecraft.topi.common import same_size
from tilecraft.topi.conv2d import BLOCK, find_reduction, inline_between
from tilecraft.topi.schedule import fuse_outer, parallel_pays
from tilecraft.topi.tuning import check_config, config_for, workload_key

TILE_ROWS = 6  # mr: output rows per register tile
TILE_COLS = 64  # nr: output columns per register tile (4 zmm)
# nr where N is known only when it runs (attention's scores, seq columns): the
# guarded last panel wastes less (BERT-base's layer at 7 to 128 tokens, 2 cores:
# 7-25% faster than with 64-column panels, none slower).
SYMBOLIC_TILE_COLS = 16

# Column panels (x batch) from which a GEMM whose last row tile overhangs M runs
# its panels in parallel and its row tiles serially inside (_schedule_gemm): enough
# for the threads' dynamic chunks to balance.
TAIL_PANELS = 8
# A reduction long enough for a 6-row register tile that overhangs M (_tile_rows).
LONG_REDUCTION = 256

KC_CHUNKS = (64, 128, 256, 512)  # the `kc` knob's chunks of the reduction

LANES = 16  # partial sums per output of an NK dense (one zmm register)
DOT_ROWS, DOT_COLS = 4, 6  # NK register tile: 4 x 6 outputs of 16 partial sums each



@dataclass
class DenseInfo:
    """What a dense or matmul reduction's schedule needs to find, recorded in its
    compute's attrs["dense"]: the stages it reads and its tuning workload."""

    workload: tuple  # (template name, params)
    partial: te.Tensor | None = None  # an NK dense's 16-lane partial sums
    transposed: te.Tensor | None = None  # the per-call transposed copy of an NK weight
    kn_weight: te.Tensor | None = None  # a KN weight, read in place (or packed per call)
    panel_weight: te.Tensor | None = None  # an NK64n weight


def dense_info(red: te.Tensor) -> DenseInfo | None:
    return getattr(red.op, "attrs", {}).get("dense")


def pack_dense_weight(w: np.ndarray, layout: str = "KN") -> np.ndarray:
    """An NK weight [N, K] in layout KN ([K, N], contiguous) or NK64n ([N/64, K, 64],
    N a multiple of 64): do it once, offline, and compile the dense with that
    `weight_layout`."""
    if w.ndim != 2:
        raise ValueError(f"pack_dense_weight takes an [N, K] weight, not shape {w.shape}")
    if layout == "KN":
        return np.ascontiguousarray(w.T)
    N, K = w.shape
    if layout != "NK64n" or N % PANEL:
        raise ValueError(f"pack_dense_weight: cannot pack an [{N}, {K}] weight as {layout!r}")
    return np.ascontiguousarray(w.reshape(N // PANEL, PANEL, K).transpose(0, 2, 1))


def dense_compute(
    x: te.Tensor,
    w: te.Tensor,
    bias: te.Tensor | None = None,
    *,
    weight_layout: str = "NK",
    name: str = "dense",
) -> te.Tensor:
    """x[..., K] @ w^T (+ bias[N]) -> [..., N]; w is [N, K] ("NK") or [K, N] ("KN").
    Returns the reduction, or with a bias the stage that adds it."""
    if weight_layout not in ("NK", "KN", "NK64n"):
        raise ValueError(f"dense: unknown weight layout {weight_layout!r} (NK, KN or NK64n)")
    nk = dense_weight_nk(w.shape, weight_layout)
    if nk is None:
        raise ValueError(f"dense: a weight of shape {w.shape} is not in layout {weight_layout}")
    N, K = nk
    if x.ndim < 1 or x.shape[-1] != K:
        raise ValueError(f"dense: x {x.shape} does not end in K = {K} (weight {w.shape})")
    if bias is not None and bias.shape != (N,):
        raise ValueError(f"dense: bias must have shape ({N},), got {bias.shape}")
    shape = (*x.shape[:-1], N)
    if weight_layout == "NK" and K % LANES == 0:
        # Dot products along K, LANES at a time (a hand rfactor): `partial` keeps
        # LANES partial sums per output, so its loads of w rows and x rows are
        # contiguous vectors; the reduction adds the lanes up.
        ko = te.reduce_axis((0, K // LANES), name="ko")
        partial = te.compute(
            (*shape, LANES),
            lambda *idx: te.sum(
                x[(*idx[:-2], ko * LANES + idx[-1])] * w[idx[-2], ko * LANES + idx[-1]], axis=ko
            ),
            name=f"{name}_partial",
        )
        lane = te.reduce_axis((0, LANES), name="lane")
        red = te.compute(shape, lambda *idx: te.sum(partial[(*idx, lane)], axis=lane), name=name)
        parts = {"partial": partial}
    elif weight_layout == "NK64n":
        k = te.reduce_axis((0, K), name="k")
        red = te.compute(
            shape,
            lambda *idx: te.sum(x[(*idx[:-1], k)] * w[idx[-1] // PANEL, k, idx[-1] % PANEL], axis=k),
            name=name,
        )
        parts = {"panel_weight": w}
    else:
        k = te.reduce_axis((0, K), name="k")
        # KN reads w[k, j]; an NK weight whose K does not split into lanes is read
        # through a transposed copy that the schedule makes one panel at a time.
        weight_t = w if weight_layout == "KN" else te.compute(
            (K, N), lambda kk, jj: w[jj, kk], name=f"{name}_weight_t"
        )
        red = te.compute(
            shape,
            lambda *idx: te.sum(x[(*idx[:-1], k)] * weight_t[k, idx[-1]], axis=k),
            name=name,
        )
        parts = {"transposed": weight_t} if weight_t is not w else {"kn_weight": w}
    workload = ("dense", (list(x.shape), list(w.shape), weight_layout, str(x.dtype)))
    red.op.attrs["dense"] = DenseInfo(workload, **parts)
    if bias is None:
        return red
    return te.compute(shape, lambda *i: red[i] + bias[i[-1]], name=f"{name}_bias")


def matmul_compute(a: te.Tensor, b: te.Tensor, name: str = "matmul") -> te.Tensor:
    """numpy.matmul of a[..., M, K] and b[..., K, N] (rank >= 2, batch axes broadcast)."""
    if a.ndim < 2 or b.ndim < 2 or not same_size(a.shape[-1], b.shape[-2]):
        raise ValueError(f"matmul needs [..., M, K] and [..., K, N], got {a.shape} and {b.shape}")
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    rank = max(len(batch_a), len(batch_b))
    batch = []
    for d in range(rank):
        da = batch_a[d - rank + len(batch_a)] if d >= rank - len(batch_a) else 1
        db = batch_b[d - rank + len(batch_b)] if d >= rank - len(batch_b) else 1
        if _is_one(da) or _is_one(db):
            batch.append(db if _is_one(da) else da)
        elif same_size(da, db):
            batch.append(da)
        else:
            raise ValueError(f"matmul: batch axes of {a.shape} and {b.shape} do not broadcast")
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    k = te.reduce_axis((0, K), name="k")

    def operand_batch(index: Sequence, own: tuple[int, ...]):
        # The operand's own batch axes are the last len(own) of the result's;
        # a broadcast axis (extent 1) is indexed 0.
        tail = index[rank - len(own) :]
        return tuple(0 if _is_one(n) else i for i, n in zip(tail, own))

    def body(*idx):
        *bidx, i, j = idx
        lhs = a[(*operand_batch(bidx, batch_a), i, k)]
        rhs = b[(*operand_batch(bidx, batch_b), k, j)]
        return te.sum(lhs * rhs, axis=k)

    mm = te.compute((*batch, M, N), body, name=name)
    mm.op.attrs["dense"] = DenseInfo(("batch_matmul", (list(a.shape), list(b.shape), str(a.dtype))))
    return mm


def _is_one(n) -> bool:
    return isinstance(n, int) and n == 1


# ---------------------------------------------------------------------------------
# Schedule


def gemm_space(red: te.Tensor) -> dict[str, tuple]:
    """The knobs of a dense/matmul schedule (tuning templates "dense", "batch_matmul").

    GEMM (KN weight, matmul, transposed NK): `tile` = [mr, nr], the register tile
    (mr rows x nr columns, at most 28 zmm accumulators); `pack` = copy each KN
    column panel once per call (a KN weight wider than the tile); `parallel`;
    `kc` = 0 (each register tile runs the whole reduction) or a chunk of K: the
    panel's outputs accumulate in a task buffer kc rows of K at a time, each weight
    chunk reused by all row tiles of the panel (`kc_values`).
    Dot products (an NK weight whose K splits into lanes): `tile` = [rows, cols] of
    16-lane partial sums; `parallel`. A rank-1 x has nothing to tile."""
    red = find_reduction(red)
    if red.ndim < 2:
        return {"parallel": (1,)}
    *_, M, N = red.shape
    info = dense_info(red) or DenseInfo(())
    if info.partial is not None:
        tiles = [[r, c] for r in range(1, min(M, 6) + 1) for c in range(1, min(N, 8) + 1) if r * c <= 28]
        return {"tile": tuple(tiles), "parallel": (0, 1)}
    # A panel weight's columns j read w[j // 64, k, j % 64]: plain vector loads only
    # where a register tile is one panel wide.
    widths = [PANEL] if info.panel_weight is not None else sorted({min(N, w) for w in (16, 32, 48, 64)})
    tiles = [[mr, nr] for mr in range(1, min(M, 8) + 1) for nr in widths if mr * -(-nr // BLOCK) <= 28]
    packable = info.kn_weight is not None and N > min(widths)
    knobs = {"tile": tuple(tiles), "pack": (0, 1) if packable else (0,), "parallel": (0, 1)}
    return knobs | {"kc": kc_values(red)}


def kc_values(red: te.Tensor) -> tuple[int, ...]:
    """The `kc` knob: 0 (the whole reduction per register tile) or a chunk of K that
    divides it, for a GEMM with several row tiles and no per-call weight copy."""
    *_, M, _ = red.shape
    (k,) = red.op.reduce_axis
    K = k.extent
    info = dense_info(red)
    if (info is not None and info.transposed is not None) or M <= TILE_ROWS:
        return (0,)
    return (0, *(c for c in KC_CHUNKS if c < K and K % c == 0))


def default_gemm_config(red: te.Tensor) -> dict:
    """The knobs the heuristics choose (what runs untuned)."""
    red = find_reduction(red)
    if red.ndim < 2:
        return {"parallel": 1}
    *_, M, N = red.shape
    # A parallel launch must pay for itself (the threshold of topi/schedule.py).
    info = dense_info(red) or DenseInfo(())
    parallel = int(parallel_pays(info.partial if info.partial is not None else red))  # partial sums: an NK dense's multiplies
    if not all(isinstance(n, int) for n in red.shape):
        # Sizes known when it runs (rows: M = batch x sequence): the static-M tiles
        # for many rows; the last row tile guarded (loop-partition leaves the others
        # unguarded); no packed panels, which a call of few rows would not repay.
        if info.partial is not None:
            return {"tile": [DOT_ROWS, min(N, DOT_COLS)], "parallel": parallel}
        nr = min(N, TILE_COLS) if isinstance(N, int) else SYMBOLIC_TILE_COLS  # (a symbolic N: guarded last panel)
        return {"tile": [TILE_ROWS, nr], "pack": 0, "parallel": parallel, "kc": 0}
    if info.partial is not None:
        return {"tile": [min(M, DOT_ROWS), min(N, DOT_COLS)], "parallel": parallel}
    nr = min(N, TILE_COLS)
    (k,) = red.op.reduce_axis
    panels = math.prod(red.shape[:-2]) * -(-N // nr)
    mr = _tile_rows(M, k.extent, panels)
    # A packed panel pays when several row tiles read it; one row tile (a GEMV,
    # M = 1) would copy the whole weight on every call to read it once.
    pack = int(info.kn_weight is not None and N > nr and M > mr)
    return {"tile": [mr, nr], "pack": pack, "parallel": parallel, "kc": 0}


def _config(red: te.Tensor, config: dict | None) -> dict:
    """`config`, else the tuning context's, else the default (checked against the space)."""
    where = red.name
    info = dense_info(red)
    if config is None and info is not None and all(isinstance(n, int) for n in red.shape):
        config = config_for(*info.workload)
        where = f"{red.name} (the tuning log's config of {workload_key(*info.workload)})"
    if config is None:
        return default_gemm_config(red)
    return check_config(config, gemm_space(red), where)


def _schedule_gemm(s: te.Schedule, out: te.Tensor, red: te.Tensor, config: dict) -> None:
    """Register-tiled GEMM over the last two axes of `red` ([..., M, N]); `out` is
    `red` or an elementwise stage of its shape."""
    info = dense_info(red) or DenseInfo(())
    transposed = info.transposed
    if info.partial is not None and red.ndim >= 2:
        _schedule_dot_products(s, out, red, info.partial, config)
        return
    if red.ndim < 2:  # x of rank 1: a dot product per output, nothing to tile
        _schedule_rows(s, red)
        if transposed is not None:
            s[transposed].compute_inline()
        if info.partial is not None:
            _schedule_rows(s, info.partial)
        if out is not red:
            _schedule_rows(s, out)
        return
    *batch_extents, M, N = red.shape
    mr, nr = config["tile"]
    local = s.cache_write(red, "local")
    if transposed is None and config["pack"] and N > nr:
        # Pack each KN column panel (K x nr, contiguous) once per call, as
        # bench/matmul packs B: the rows of a wide weight are N floats apart, so
        # reading a panel in place streams K rows of separate pages per tile.
        assert info.kn_weight is not None
        transposed = s.cache_read(info.kn_weight, "global", [local])
    *batch, i, j = s[out].op.axis
    io, jo, ii, ji = s[out].tile(i, j, mr, nr)
    s[out].reorder(*batch, jo, io, ii, ji)
    s[out].vectorize(ji)
    if transposed is not None:
        # One transposed panel per jo, its row tiles serially inside: parallel over
        # (batch, jo) only, so each panel is made once per call.
        panel = fuse_outer(s, out, [*batch, jo])[0]
        if config["parallel"]:
            s[out].parallel(panel)
        attach = panel if config["kc"] else io
        s[transposed].compute_at(s[out], panel)
        wk, wj = s[transposed].op.axis
        s[transposed].vectorize(wj)
    elif config["kc"]:
        # Cache blocking: the panel's M x nr outputs accumulate in a buffer of the
        # task, kc rows of the reduction at a time, so each kc x nr weight chunk is
        # reused from L1/L2 by every row tile of the panel.
        panel = fuse_outer(s, out, [*batch, jo])[0]
        if config["parallel"]:
            s[out].parallel(panel)
        attach = panel
    elif not all(isinstance(n, int) for n in red.shape) or M % mr and math.prod(batch_extents) * -(-N // nr) >= TAIL_PANELS:
        # The last row tile overhangs M: its guard (i < M) must read a serial loop
        # variable for loop-partition to run the other tiles without it. Fused into
        # the parallel loop, the guard read (fused % tiles) * mr, which it cannot
        # bound, and stayed in every tile; LLVM unswitched it out of a bare GEMM but
        # not out of one with a GELU epilogue (BERT's 768 -> 3072 dense, 128 rows in
        # tiles of 6: 5.5 ms instead of 2.9).
        panel = fuse_outer(s, out, [*batch, jo])[0]
        if config["parallel"]:
            s[out].parallel(panel)
        attach = io
    else:
        fused = s[out].fuse(*batch, jo, io)
        if config["parallel"]:
            s[out].parallel(fused)
        attach = fused

    if out is not red:
        # `red` is now the copy out of the accumulators: inlined, so the fused
        # epilogue reads the mr x nr register tile itself.
        s[red].compute_inline()
    s[local].compute_at(s[out], attach)
    *lbatch, li, lj = s[local].op.axis
    (lk,) = s[local].op.reduce_axis
    if config["kc"]:
        lio, lii = s[local].split(li, factor=mr)
        lko, lki = s[local].split(lk, factor=config["kc"])
        s[local].reorder(*lbatch, lko, lio, lki, lii, lj)
        s[local].unroll(lii)
    else:
        s[local].reorder(*lbatch, lk, li, lj)
        s[local].unroll(li)
    s[local].vectorize(lj)


def _tile_rows(m: int, k: int, panels: int) -> int:
    """Rows per register tile: 6 where it divides M; also where it does not, when
    the reduction is long (K >= LONG_REDUCTION) and there are panels enough
    (TAIL_PANELS) for the row tiles to run serially inside them (_schedule_gemm), so
    loop-partition runs all but the last tile without a guard; else a divisor of M
    close to 6. 6 x 64 outputs are 24 accumulators that each k step feeds with 4
    weight loads and 6 broadcasts, 4 x 64 only 16 with 4 and 4: on BERT's 128-row
    dense layers (K 768 and 3072) 6 rows ran 1.1-1.3x faster than 4; with a short K
    (attention's 128 x 64 x 128 batch matmul) the last tile's overhang cost more
    than that (243 against 274 GFLOP/s). Where 6 rows make no fewer tiles than the
    divisor (M = 10: two tiles of 5 rows), the divisor."""
    divisor = next((mr for mr in (TILE_ROWS, 4, 5, 3, 2) if m % mr == 0), min(m, TILE_ROWS))
    fewer = -(-m // TILE_ROWS) < -(-m // divisor)
    if fewer and k >= LONG_REDUCTION and panels >= TAIL_PANELS:
        return TILE_ROWS
    return divisor


def _schedule_dot_products(s: te.Schedule, out: te.Tensor, red: te.Tensor, partial: te.Tensor, config: dict):
    """An NK dense as register-tiled dot products: per panel of `nr` columns, the
    partial sums of all its rows (mr x nr outputs x 16 lanes in zmm registers at a
    time, K/16 steps each loading mr x rows and nr w rows), then the lane sums and
    the epilogue. Stages are computed per panel, not per tile, so their buffers are
    allocated N/nr times per call, not once per register tile."""
    mr, nr = config["tile"]
    *batch, i, j = s[out].op.axis
    jo, ji = s[out].split(j, factor=nr)
    s[out].reorder(*batch, jo, i, ji)
    panel = s[out].fuse(*batch, jo) if batch else jo
    if config["parallel"]:
        s[out].parallel(panel)
    if out is not red:
        s[red].compute_at(s[out], panel)
    local = s.cache_write(partial, "local")
    s[partial].compute_at(s[out], panel)
    *pbatch, pi, pj, pv = s[partial].op.axis
    pio, _ = s[partial].split(pi, factor=mr)
    s[partial].vectorize(pv)
    s[local].compute_at(s[partial], pio)
    *lbatch, li, lj, lv = s[local].op.axis
    (lk,) = s[local].op.reduce_axis
    s[local].reorder(*lbatch, lk, li, lj, lv)
    s[local].unroll(li)
    s[local].unroll(lj)
    s[local].vectorize(lv)


def schedule_dense(s: te.Schedule, out: te.Tensor, dense: te.Tensor, inlined=(), config: dict | None = None) -> None:
    """Schedule a dense (as dense_compute returned it) whose fused group ends in `out`;
    the knobs from `config`, else the tuning context, else the defaults."""
    _schedule_group(s, out, dense, inlined, config)


def schedule_matmul(s: te.Schedule, out: te.Tensor, mm: te.Tensor, inlined=(), config: dict | None = None) -> None:
    """Schedule a matmul (as matmul_compute returned it) whose fused group ends in `out`."""
    _schedule_group(s, out, mm, inlined, config)


def _schedule_group(s: te.Schedule, out: te.Tensor, anchor: te.Tensor, inlined, config) -> None:
    red = find_reduction(anchor)
    config = _config(red, config)
    inline_between(s, out, red, inlined)
    if len(out.shape) != len(red.shape) or not all(map(same_size, out.shape, red.shape)):
        _schedule_gemm(s, red, red, config)
        _schedule_rows(s, out)
        return
    _schedule_gemm(s, out, red, config)


def _schedule_rows(s: te.Schedule, t: te.Tensor) -> None:
    axes = list(s[t].op.axis)
    _, vi = s[t].split(axes[-1], factor=BLOCK)
    s[t].vectorize(vi)
    if len(axes) > 2:
        s[t].parallel(s[t].fuse(*axes[:-1]))
    elif len(axes) == 2:
        s[t].parallel(axes[0])
