"""conv2d for the accelerator: int8 data and weights in the GEMM unit's packed
layouts, an int32 accumulator, and the requantizing epilogue the ALU runs.

Layouts follow the spec's GEMM shape (BATCH rows of BLOCK_IN inputs times a
BLOCK_OUT x BLOCK_IN weight tile, VTA's `inp[b][i] * wgt[o][i]`):

- data   [N/BATCH, C/BLOCK, H, W, BATCH, BLOCK]          (NCHW<BATCH>n<BLOCK>c)
- kernel [O/BLOCK, C/BLOCK, KH, KW, BLOCK(o), BLOCK(i)]   (OIHW<BLOCK>o<BLOCK>i)
- result [N/BATCH, O/BLOCK, OH, OW, BATCH, BLOCK]

so the innermost block of each is one element of the input, weight and
accumulator buffers, and every DMA moves whole elements. The compute is TVM's VTA
conv2d: a zero-padding stage (the accelerator folds it into the input load), one
reduction over input-channel blocks, the window and the lanes of a block, in
int32. `requantize_epilogue` is graph.requantize (with optional bias and relu) on
the accumulator, what the ALU computes before the narrowing store.

`pack_data`/`pack_kernel`/`unpack_result` convert numpy arrays; `conv2d_reference`
is the numpy int arithmetic the simulated results are checked against.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tilecraft.frontends import te


def pack_data(x: np.ndarray, batch: int, block: int) -> np.ndarray:
    """NCHW -> [N/batch, C/block, H, W, batch, block]."""
    n, c, h, w = x.shape
    if n % batch or c % block:
        raise ValueError(f"data {x.shape} does not split into batch {batch} and channel block {block}")
    return np.ascontiguousarray(x.reshape(n // batch, batch, c // block, block, h, w).transpose(0, 2, 4, 5, 1, 3))


def unpack_result(y: np.ndarray) -> np.ndarray:
    """[N/batch, O/block, H, W, batch, block] -> NCHW."""
    nb, ob, h, w, batch, block = y.shape
    return np.ascontiguousarray(y.transpose(0, 4, 1, 5, 2, 3).reshape(nb * batch, ob * block, h, w))


def pack_kernel(w: np.ndarray, block_out: int, block_in: int) -> np.ndarray:
    """OIHW -> [O/block_out, I/block_in, KH, KW, block_out, block_in]."""
    o, i, kh, kw = w.shape
    if o % block_out or i % block_in:
        raise ValueError(f"kernel {w.shape} does not split into {block_out}o{block_in}i blocks")
    return np.ascontiguousarray(w.reshape(o // block_out, block_out, i // block_in, block_in, kh, kw).transpose(0, 2, 4, 5, 1, 3))


def conv2d_packed(data: te.Tensor, kernel: te.Tensor, strides: Sequence[int], pads: Sequence[int]) -> te.Tensor:
    """The int32 convolution of packed int8 `data` by packed int8 `kernel`;
    `pads` [top, left, bottom, right]."""
    nb, cb, h, w, batch, block = data.shape
    ob, kcb, kh, kw, block_out, block_in = kernel.shape
    if kcb != cb or block_in != block:
        raise ValueError(f"kernel {kernel.shape} does not match data {data.shape}")
    top, left, bottom, right = pads
    sh, sw = strides
    oh = (h + top + bottom - kh) // sh + 1
    ow = (w + left + right - kw) // sw + 1
    if top or left or bottom or right:
        def padded(n, c, y, x, b, i):
            inside = te.all(y >= top, y < h + top, x >= left, x < w + left)
            return te.if_then_else(inside, data[n, c, y - top, x - left, b, i], te.const(0, data.dtype))

        source = te.compute((nb, cb, h + top + bottom, w + left + right, batch, block), padded, name="data_pad")
    else:
        source = data
    rc = te.reduce_axis((0, cb), name="rc")
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")
    ri = te.reduce_axis((0, block), name="ri")
    return te.compute(
        (nb, ob, oh, ow, batch, block_out),
        lambda n, o, y, x, b, j: te.sum(
            source[n, rc, y * sh + ry, x * sw + rx, b, ri].astype("int32")
            * kernel[o, rc, ry, rx, j, ri].astype("int32"),
            axis=[rc, ry, rx, ri],
        ),
        name="conv",
    )


def requantize_epilogue(acc: te.Tensor, shift: int, bias: te.Tensor | None = None, relu: bool = False) -> te.Tensor:
    """int8 result of an int32 accumulator: (+ bias[O/block, block]), (relu),
    round half up by 2^shift, clip to int8 (graph.requantize's arithmetic)."""

    def value(n, o, y, x, b, j):
        v = acc[n, o, y, x, b, j]
        if bias is not None:
            v = v + bias[o, j]
        if relu:
            v = te.maximum(v, 0)
        if shift:
            v = (v + (1 << (shift - 1))) // (1 << shift)
        return te.minimum(te.maximum(v, -128), 127).astype("int8")

    return te.compute(acc.shape, value, name="requantize")


def conv2d_reference(
    x: np.ndarray, w: np.ndarray, strides: Sequence[int], pads: Sequence[int],
    shift: int | None = None, bias: np.ndarray | None = None, relu: bool = False,
) -> np.ndarray:
    """NCHW int8 x OIHW int8 -> int32 (or, with `shift`, the requantized int8) in numpy."""
    top, left, bottom, right = pads
    sh, sw = strides
    xp = np.pad(x.astype(np.int32), ((0, 0), (0, 0), (top, bottom), (left, right)))
    o, c, kh, kw = w.shape
    n, _, hp, wp = xp.shape
    oh, ow = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    acc = np.zeros((n, o, oh, ow), np.int64)
    w32 = w.astype(np.int64)
    for ky in range(kh):
        for kx in range(kw):
            window = xp[:, :, ky : ky + sh * (oh - 1) + 1 : sh, kx : kx + sw * (ow - 1) + 1 : sw].astype(np.int64)
            acc += np.einsum("nchw,oc->nohw", window, w32[:, :, ky, kx])
    acc = ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)  # the accumulator wraps at 32 bits
    if shift is None:
        return acc
    v = acc
    if bias is not None:
        v = v + bias.astype(np.int32).reshape(1, -1, 1, 1)
    if relu:
        v = np.maximum(v, 0)
    if shift:
        v = np.right_shift(v + np.int32(1 << (shift - 1)), shift)
    return np.clip(v, -128, 127).astype(np.int8)


def output_size(data_shape: Sequence[int], kernel_shape: Sequence[int], strides: Sequence[int],
                pads: Sequence[int]) -> tuple[int, int]:
    """(OH, OW) of the convolution; `pads` [top, left, bottom, right]."""
    _, _, h, w = data_shape
    kh, kw = kernel_shape[2:]
    top, left, bottom, right = pads
    return (h + top + bottom - kh) // strides[0] + 1, (w + left + right - kw) // strides[1] + 1


def conv2d_params(data_shape: Sequence[int], kernel_shape: Sequence[int], strides: Sequence[int],
                  pads: Sequence[int], shift: int, relu: bool, spec) -> tuple:
    """The workload of a `conv2d_accel` as JSON-able values (the tuning template's
    parameters): shapes, strides and pads as lists of ints, the shift, relu, and the
    spec as the keys where it differs from VTA's default (`{}` for the default)."""
    return ([int(d) for d in data_shape], [int(d) for d in kernel_shape], [int(d) for d in strides],
            [int(d) for d in pads], int(shift), bool(relu), dict(sorted(spec.overrides().items())))


def _divisor_at_most(n: int, limit: int) -> int:
    return max(d for d in range(1, min(n, limit) + 1) if n % d == 0)


def default_tiles(data_shape: Sequence[int], kernel_shape: Sequence[int], strides: Sequence[int],
                  pads: Sequence[int], spec) -> tuple[int, int]:
    """The default output tile (rows, columns): divisors of the output size no larger
    than 14, shrunk until two threads' input tiles fit the input buffer."""
    kh, kw = kernel_shape[2:]
    sh, sw = strides
    oh, ow = output_size(data_shape, kernel_shape, strides, pads)
    th, tw = _divisor_at_most(oh, 14), _divisor_at_most(ow, 14)
    while ((th - 1) * sh + kh) * ((tw - 1) * sw + kw) * 2 > spec.inp_depth and (th > 1 or tw > 1):
        if th >= tw and th > 1:
            th = _divisor_at_most(oh, th - 1)
        else:
            tw = _divisor_at_most(ow, tw - 1)
    return th, tw


def default_config(data_shape: Sequence[int], kernel_shape: Sequence[int], strides: Sequence[int],
                   pads: Sequence[int], spec) -> dict[str, int]:
    """The untuned knobs of `conv2d_accel` (what the tuner's config None means):
    `default_tiles`, one input-channel block a load, as many output-channel blocks as
    `_tile_oc` lets two threads take, and two virtual threads where the output-channel
    tiles split evenly between them (else one)."""
    kh, kw = kernel_shape[2:]
    blocks = kernel_shape[0] // spec.block
    th, tw = default_tiles(data_shape, kernel_shape, strides, pads, spec)
    tile_oc = _tile_oc(blocks, th * tw, kh * kw, 2, spec)
    threads = 2 if blocks % (2 * tile_oc) == 0 else 1
    return {"tile_h": th, "tile_w": tw, "tile_oc": tile_oc, "tile_ic": 1, "threads": threads}


def _tile_oc(blocks: int, pixels: int, taps: int, threads: int, spec) -> int:
    """The most output-channel blocks a tile can take (4, 2 or 1) that split evenly
    over the threads and fit: each thread holds its accumulator and its epilogue's
    buffer (pixels x blocks elements each) and its weights (taps x blocks tiles).
    More blocks a tile means fewer reloads of the input tile."""
    for t in (4, 2, 1):
        if blocks % (t * threads) == 0 and threads * t * (2 * pixels + 1) <= spec.acc_depth \
                and threads * t * taps <= spec.wgt_depth:
            return t
    return 1


def conv2d_accel(
    data_shape: Sequence[int], kernel_shape: Sequence[int], strides: Sequence[int], pads: Sequence[int],
    shift: int, relu: bool = True, *, spec=None, tile_h: int | None = None, tile_w: int | None = None,
    tile_oc: int | None = None, tile_ic: int = 1, threads: int = 2,
):
    """A conv2d + bias + relu + requantize on the accelerator, scheduled as VTA's
    conv2d is: output tiles of tile_h x tile_w pixels and tile_oc channel blocks,
    the padded input (padding folded into its load) and the weights loaded per
    tile_ic input-channel blocks, the accumulator and the epilogue in the
    accumulator buffer, the GEMM tensorized over one element, the output-channel
    tiles split over `threads` virtual threads. `data_shape` [N, C, H, W] and
    `kernel_shape` [O, C, KH, KW] are unpacked; the tensors are packed (pack_data,
    pack_kernel, bias [O/BLOCK, BATCH, BLOCK]). Returns (schedule, [data, kernel,
    bias, out])."""
    from tilecraft.topi.accel_intrin import gemm_intrin
    from tilecraft.backends.accel.spec import default_spec

    spec = spec or default_spec()
    batch, block = spec.batch, spec.block
    n, c, h, w = data_shape
    o, _, kh, kw = kernel_shape
    top, left, bottom, right = pads
    sh, sw = strides
    oh, ow = (h + top + bottom - kh) // sh + 1, (w + left + right - kw) // sw + 1
    tile_h, tile_w = tile_h or oh, tile_w or ow
    if tile_oc is None:
        tile_oc = _tile_oc(o // block, tile_h * tile_w, kh * kw * tile_ic, threads, spec)
    data = te.placeholder((n // batch, c // block, h, w, batch, block), "int8", name="data")
    kernel = te.placeholder((o // block, c // block, kh, kw, block, block), "int8", name="kernel")
    bias = te.placeholder((o // block, batch, block), "int32", name="bias")
    res = conv2d_packed(data, kernel, strides, pads)
    pad = res.op.input_tensors[0] if res.op.input_tensors[0] is not data else None

    def epilogue(b, oc, y, x, bn, bo):
        v = res[b, oc, y, x, bn, bo] + bias[oc, bn, bo]
        if relu:
            v = te.maximum(v, 0)
        if shift:
            v = (v + (1 << (shift - 1))) // (1 << shift)
        v = te.minimum(v, 127)
        return (v if relu else te.maximum(v, -128)).astype("int8")  # after relu, v >= 0 already

    out = te.compute(res.shape, epilogue, name="out")
    s = te.create_schedule(out)
    if pad is not None:
        s[pad].set_scope("inp_buffer")
        inp = pad
    else:
        inp = s.cache_read(data, "inp_buffer", [res])
    wgt = s.cache_read(kernel, "wgt_buffer", [res])
    bias_acc = s.cache_read(bias, "acc_buffer", [out])
    s[res].set_scope("acc_buffer")
    out_acc = s.cache_write(out, "acc_buffer")
    b, oc, y, x, bn, bo = s[out].op.axis
    oc_out, oc_in = s[out].split(oc, tile_oc)
    y_out, y_in = s[out].split(y, tile_h)
    x_out, x_in = s[out].split(x, tile_w)
    threads = max(1, min(threads, (o // block) // tile_oc))
    thread, oc_out = s[out].split(oc_out, nparts=threads)
    s[out].reorder(b, thread, oc_out, y_out, x_out, oc_in, y_in, x_in, bn, bo)
    if threads > 1:
        s[out].bind(thread, te.thread_axis("cthread"))
    for stage in (res, out_acc, bias_acc):
        s[stage].compute_at(s[out], x_out)
    rb, ro, ry, rx, rbn, rbo = s[res].op.axis
    ric, rkh, rkw, ricb = s[res].op.reduce_axis
    ric_out, ric_in = s[res].split(ric, tile_ic)
    s[res].reorder(ric_out, rb, ric_in, ro, rkh, rkw, ry, rx, rbn, rbo, ricb)
    s[inp].compute_at(s[res], ric_out)
    s[wgt].compute_at(s[res], ric_out)
    s[res].tensorize(rbn, gemm_intrin(spec))
    return s, [data, kernel, bias, out]
