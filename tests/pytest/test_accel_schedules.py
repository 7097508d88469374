"""Accelerator schedules on the CPU: memory scopes, `inject-dma` and
`inject-virtual-threads` keep what a schedule computes.

A packed int8 GEMM and a small zero-padded conv2d in VTA's NCHW1n16c layout are
scheduled as VTA schedules them (input, weight and accumulator scopes, two
virtual threads) and run through LLVM on the CPU as lowered, after
`inject-dma` (whose `loop.dma`s `expand-dma` turns back into loops), and after
both passes; every run is compared with numpy's integer arithmetic.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tilecraft as tc
from tilecraft import te
from tilecraft.api import lower_module
from tilecraft.backends.accel.spec import default_spec
from tilecraft.driver.kernels import compile_loop_module
from tilecraft.dialects.loop import DmaOp, ForOp, LoopKind
from tilecraft.transforms.inject_dma import InjectDmaPass
from tilecraft.transforms.inject_virtual_threads import InjectVirtualThreadsPass
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import memref

RNG = np.random.default_rng(9)


def int8(shape):
    return RNG.integers(-128, 128, shape).astype("int8")


def packed_gemm(mo=4, ko=2, no=4, block=16, threads=2, spelling="cthread"):
    """C[i, j, 0, y] = sum_k A[i, k, 0, :] . W[j, k, y, :], VTA's packed layout,
    the N axis split into `threads` virtual threads."""
    A = te.placeholder((mo, ko, 1, block), "int8", name="A")
    W = te.placeholder((no, ko, block, block), "int8", name="W")
    k = te.reduce_axis((0, ko), name="k")
    kk = te.reduce_axis((0, block), name="kk")
    C = te.compute(
        (mo, no, 1, block),
        lambda i, j, x, y: te.sum(
            A[i, k, x, kk].astype("int32") * W[j, k, y, kk].astype("int32"), axis=[k, kk]
        ),
        name="C",
    )
    s = te.create_schedule(C)
    AA = s.cache_read(A, "local.inp_buffer", [C])  # VTA's spelling of the scope
    WW = s.cache_read(W, "wgt_buffer", [C])
    CC = s.cache_write(C, "acc_buffer")
    i, j, x, y = s[C].op.axis
    jo, ji = s[C].split(j, nparts=threads)
    s[C].reorder(jo, i, ji, x, y)
    if spelling == "vthread":
        s[C].vthread(jo)
    else:
        s[C].bind(jo, te.thread_axis(spelling))
    s[CC].compute_at(s[C], jo)
    ci, cj, cx, cy = s[CC].op.axis
    ck, ckk = s[CC].op.reduce_axis
    s[CC].reorder(ck, ci, cj, cx, cy, ckk)
    s[AA].compute_at(s[CC], ck)
    s[WW].compute_at(s[CC], ck)
    return s, [A, W, C]


def gemm_reference(a, w):
    return np.einsum("ikxl,jkyl->ijxy", a.astype(np.int64), w.astype(np.int64)).astype("int32")


def padded_conv(n=1, ci=2, h=6, w=5, co=4, block=16, tile_h=3, threads=2):
    """3x3 conv2d, padding 1, NCHW1n16c: the padded input is computed straight
    into the input buffer (`set_scope`, as VTA does), so inject-dma folds the
    padding into its load; the output channels run as `threads` virtual threads."""
    data = te.placeholder((n, ci, h, w, 1, block), "int8", name="data")
    kernel = te.placeholder((co, ci, 3, 3, block, block), "int8", name="kernel")
    pad = te.compute(
        (n, ci, h + 2, w + 2, 1, block),
        lambda b, c, y, x, bn, bc: te.if_then_else(
            te.all(y >= 1, y < h + 1, x >= 1, x < w + 1),
            data[b, c, y - 1, x - 1, bn, bc],
            te.const(0, "int8"),
        ),
        name="pad",
    )
    ic = te.reduce_axis((0, ci), name="ic")
    kh = te.reduce_axis((0, 3), name="kh")
    kw = te.reduce_axis((0, 3), name="kw")
    icb = te.reduce_axis((0, block), name="icb")
    res = te.compute(
        (n, co, h, w, 1, block),
        lambda b, o, y, x, bn, bo: te.sum(
            pad[b, ic, y + kh, x + kw, bn, icb].astype("int32")
            * kernel[o, ic, kh, kw, bo, icb].astype("int32"),
            axis=[ic, kh, kw, icb],
        ),
        name="res",
    )
    s = te.create_schedule(res)
    s[pad].set_scope("inp_buffer")
    KK = s.cache_read(kernel, "wgt_buffer", [res])
    RC = s.cache_write(res, "acc_buffer")
    b, o, y, x, bn, bo = s[res].op.axis
    oo, oi = s[res].split(o, nparts=threads)
    yo, yi = s[res].split(y, tile_h)
    s[res].reorder(b, oo, yo, oi, yi, x, bn, bo)
    s[res].bind(oo, te.thread_axis("cthread"))
    s[RC].compute_at(s[res], yo)
    rb, ro, ry, rx, rbn, rbo = s[RC].op.axis
    ric, rkh, rkw, ricb = s[RC].op.reduce_axis
    s[RC].reorder(ric, rb, ro, rkh, rkw, ry, rx, rbn, rbo, ricb)
    s[pad].compute_at(s[RC], ric)
    s[KK].compute_at(s[RC], ric)
    return s, [data, kernel, res]


def conv_reference(a, k):
    h, w = a.shape[2], a.shape[3]
    padded = np.pad(a.astype(np.int64), ((0, 0), (0, 0), (1, 1), (1, 1), (0, 0), (0, 0)))
    out = np.zeros((a.shape[0], k.shape[0], h, w, 1, a.shape[5]), np.int64)
    for y in range(3):
        for x in range(3):
            window = padded[:, :, y : y + h, x : x + w]
            out += np.einsum("nchwbi,ocji->nohwbj", window, k[:, :, y, x].astype(np.int64))
    return out.astype("int32")


def run_module(module, inputs, out_shape):
    fn = compile_loop_module(module)["main"]
    out = np.zeros(out_shape, "int32")
    fn(*inputs, out)
    return out


def after(module, *passes):
    for p in passes:
        p.apply(Context(), module)
    return module


def ops_of(module, kind):
    return [op for op in module.walk() if isinstance(op, kind)]


@pytest.mark.parametrize("spelling", ["cthread", "vthread"])
def test_packed_gemm_with_scopes_and_vthreads(spelling):
    s, args = packed_gemm(spelling=spelling)
    a, w = int8(args[0].shape), int8(args[1].shape)
    expected = gemm_reference(a, w)
    c = np.zeros(args[2].shape, "int32")
    tc.build(s, args)(a, w, c)  # the vthread loop runs serially on the CPU
    np.testing.assert_array_equal(c, expected)

    module = lower_module(s, args)
    kinds = {op.kind.data for op in ops_of(module, ForOp)}
    assert LoopKind.VTHREAD in kinds
    dma = after(lower_module(s, args), InjectDmaPass())
    # inputs, weights (per k) and the accumulator copied out: three DMAs, no copy loops
    assert len(ops_of(dma, DmaOp)) == 3
    stores = [op.memref.name_hint for op in ops_of(dma, memref.StoreOp)]
    assert all(name.startswith("C.acc") for name in stores), stores
    np.testing.assert_array_equal(run_module(dma, [a, w], c.shape), expected)

    both = after(dma, InjectVirtualThreadsPass())
    assert LoopKind.VTHREAD not in {op.kind.data for op in ops_of(both, ForOp)}
    dmas = ops_of(both, DmaOp)
    assert len(dmas) == 6  # each thread its own
    assert [op.attributes["tc.vthread"].value.data for op in dmas] == [0, 1, 0, 1, 0, 1]
    np.testing.assert_array_equal(run_module(both, [a, w], c.shape), expected)


def test_vthreads_without_dma_compute_the_same():
    s, args = packed_gemm(threads=4)
    a, w = int8(args[0].shape), int8(args[1].shape)
    module = after(lower_module(s, args), InjectVirtualThreadsPass())
    np.testing.assert_array_equal(run_module(module, [a, w], args[2].shape), gemm_reference(a, w))


@pytest.mark.parametrize("h, tile_h, co", [(6, 3, 4), (5, 2, 2)])
def test_padded_conv_nchw1n16c(h, tile_h, co):
    """(5, 2, 2): the last row tile is cut short; its store writes fewer rows."""
    s, args = padded_conv(h=h, tile_h=tile_h, co=co)
    a, k = int8(args[0].shape), int8(args[1].shape)
    expected = conv_reference(a, k)
    r = np.zeros(args[2].shape, "int32")
    tc.build(s, args)(a, k, r)
    np.testing.assert_array_equal(r, expected)
    dma = after(lower_module(s, args), InjectDmaPass())
    loads = [op for op in ops_of(dma, DmaOp) if op.is_load]
    padded = [op for op in loads if op.dst.name_hint == "pad"]
    assert len(padded) == 1 and padded[0].rows.data == tile_h + 2 and padded[0].cols.data == 5 + 2
    assert not any(op.name == "scf.if" for op in dma.walk())  # the padding went into the DMA
    np.testing.assert_array_equal(run_module(dma, [a, k], r.shape), expected)
    both = after(dma, InjectVirtualThreadsPass())
    np.testing.assert_array_equal(run_module(both, [a, k], r.shape), expected)


def test_a_store_clipped_between_its_loops_is_refused():
    """Two output channels per thread and a row tile that does not divide: the
    rows written per channel stop short in the middle of the tile, which one
    2-D store cannot skip."""
    s, args = padded_conv(h=5, tile_h=2, co=4)
    with pytest.raises(OpError, match="inject-dma: this copy out of the acc_buffer buffer cannot be one DMA: "
                       "the copy out is clipped .* in the middle of its 3 loops; make the split divide"):
        after(lower_module(s, args), InjectDmaPass())


def test_element_size_comes_from_the_spec(tmp_path):
    """A BLOCK-8 machine moves elements of 8 input scalars: the same 16-wide
    rows are two elements each."""
    spec = default_spec().to_dict()
    # Half the block, buffers as deep as the default's (the instruction fields fit).
    spec |= {
        "LOG_BLOCK": 3,
        "LOG_INP_BUFF_SIZE": spec["LOG_INP_BUFF_SIZE"] - 1,
        "LOG_WGT_BUFF_SIZE": spec["LOG_WGT_BUFF_SIZE"] - 2,
        "LOG_ACC_BUFF_SIZE": spec["LOG_ACC_BUFF_SIZE"] - 1,
    }
    path = tmp_path / "block8.json"
    path.write_text(json.dumps(spec))
    s, args = packed_gemm()
    a, w = int8(args[0].shape), int8(args[1].shape)
    module = after(lower_module(s, args), InjectDmaPass(spec=str(path)))
    elems = {op.dst.name_hint: op.elem.data for op in ops_of(module, DmaOp) if op.is_load}
    assert elems == {"A.inp_buffer": 8, "W.wgt_buffer": 64}
    np.testing.assert_array_equal(run_module(module, [a, w], args[2].shape), gemm_reference(a, w))


def test_schedule_errors_for_accelerator_primitives():
    s, args = packed_gemm()
    C = args[2]
    with pytest.raises(ValueError, match="memory scope must be one of"):
        s.cache_read(args[0], "sram", [C])
    A = te.placeholder((16,), "int8", name="A")
    B = te.compute((16,), lambda i: A[i] + 1, name="B")
    k = te.reduce_axis((0, 16), name="k")
    D = te.compute((1,), lambda i: te.sum(B[k], axis=k), name="D")
    s = te.create_schedule(D)
    s[D].vthread(k)
    with pytest.raises(OpError, match="cannot run reduce axis 'k' of stage 'D' as virtual threads"):
        tc.build(s, [A, D])
    s = te.create_schedule(D)
    s[D].set_scope("acc_buffer")
    with pytest.raises(OpError, match="'D' is a function result"):
        tc.build(s, [A, D])
