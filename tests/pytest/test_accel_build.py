"""`tc.build(s, args, target="accel")`: accelerator schedules (input/weight/accumulator
scopes, the GEMM intrinsic, virtual threads, a requantizing ALU epilogue) taken through
inject-dma, inject-virtual-threads, convert-loop-to-accel and insert-dependences, run on
the simulator and checked bit for bit against numpy; the same schedules on the CPU."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.backends.accel.dram import Dram
from tilecraft.topi.accel_intrin import gemm_intrin
from tilecraft.backends.accel.simulator import SimulationError, simulate
from tilecraft.backends.accel.spec import default_spec, load_spec
from tilecraft.topi import accel_conv2d as ac

RNG = np.random.default_rng(21)


def int8(shape):
    return RNG.integers(-128, 128, shape).astype("int8")


def packed_gemm(mo, ko, no, threads, block=16, spelling="cthread", spec=None):
    """R = int8(C), C[i, j, 0, :] = sum_k A[i, k, 0, :] . W[j, k, :, :] (VTA's packed
    layout), inputs and weights loaded per reduction step, N split over threads."""
    A = te.placeholder((mo, ko, 1, block), "int8", name="A")
    W = te.placeholder((no, ko, block, block), "int8", name="W")
    k = te.reduce_axis((0, ko), name="k")
    kk = te.reduce_axis((0, block), name="kk")
    C = te.compute(
        (mo, no, 1, block),
        lambda i, j, x, y: te.sum(A[i, k, x, kk].astype("int32") * W[j, k, y, kk].astype("int32"), axis=[k, kk]),
        name="C",
    )
    R = te.compute(C.shape, lambda *i: C(*i).astype("int8"), name="R")
    s = te.create_schedule(R)
    AA = s.cache_read(A, "inp_buffer", [C])
    WW = s.cache_read(W, "wgt_buffer", [C])
    s[C].set_scope("acc_buffer")
    i, j, x, y = s[R].op.axis
    jo, ji = s[R].split(j, nparts=threads)
    s[R].reorder(jo, i, ji, x, y)
    if spelling == "vthread":
        s[R].vthread(jo)
    else:
        s[R].bind(jo, te.thread_axis(spelling))
    s[C].compute_at(s[R], jo)
    ci, cj, cx, cy = s[C].op.axis
    ck, ckk = s[C].op.reduce_axis
    s[C].reorder(ck, ci, cj, cx, cy, ckk)
    s[AA].compute_at(s[C], ck)
    s[WW].compute_at(s[C], ck)
    s[C].tensorize(cx, gemm_intrin(spec))
    return s, [A, W, R]


def gemm_expected(a, w):
    acc = np.einsum("ikxl,jkyl->ijxy", a.astype(np.int64), w.astype(np.int64))
    return acc.astype(np.int32).astype(np.int8)  # the store keeps the low 8 bits


@pytest.mark.parametrize("threads, spelling", [(1, "cthread"), (2, "cthread"), (2, "vthread")])
def test_packed_gemm_on_the_simulator(threads, spelling):
    s, args = packed_gemm(4, 2, 4, threads, spelling=spelling)
    a, w = int8(args[0].shape), int8(args[1].shape)
    f = tc.build(s, args, target="accel")
    r = np.zeros(args[2].shape, "int8")
    result = f(a, w, r)
    np.testing.assert_array_equal(r, gemm_expected(a, w))
    assert result.stats.macs == 4 * 4 * 2 * 16 * 16
    assert "GEMM" in f.get_source("asm") and "accel.program @main" in f.get_source()
    cpu = np.zeros_like(r)
    tc.build(s, args)(a, w, cpu)  # the same schedule on the CPU (intrinsic as loops, DMAs expanded)
    np.testing.assert_array_equal(cpu, r)


def test_latency_hiding_beats_the_serial_stream():
    s, args = packed_gemm(8, 6, 4, threads=2)
    a, w = int8(args[0].shape), int8(args[1].shape)
    hidden, serial = np.zeros(args[2].shape, "int8"), np.zeros(args[2].shape, "int8")
    fast = tc.build(s, args, target="accel")(a, w, hidden)
    slow = tc.build(s, args, target="accel -force-serial")(a, w, serial)
    np.testing.assert_array_equal(hidden, gemm_expected(a, w))
    np.testing.assert_array_equal(serial, hidden)
    assert fast.cycles < slow.cycles
    assert fast.stats.gemm_busy_cycles == slow.stats.gemm_busy_cycles


def test_the_dependence_flags_are_what_keeps_the_stream_correct():
    s, args = packed_gemm(4, 3, 4, threads=2)
    f = tc.build(s, args, target="accel")
    program = f.program
    bare = [dataclasses.replace(i, pop_prev=False, pop_next=False, push_prev=False, push_next=False)
            for i in program.instructions]  # fmt: skip
    a, w = int8(args[0].shape), int8(args[1].shape)
    dram = Dram(program.dram_bytes())
    for array, buffer in zip((a, w), program.buffers):
        dram.write(buffer.byte_address(program.spec), array)
    for address, data in program.uop_segments():
        dram.write(address, data)
    with pytest.raises(SimulationError, match="race|token|nothing has written"):
        simulate(bare, dram, program.spec)


def conv_schedule(ci, co, h, w, tile_h, threads, shift, block=16):
    """3x3 conv, padding 1, VTA's NCHW1n<block>c layout, bias + relu + requantize to
    int8 on the accumulator; the padded input computed straight into the input
    buffer (padding folded into its DMA), output channels over virtual threads."""
    data = te.placeholder((1, ci, h, w, 1, block), "int8", name="data")
    kernel = te.placeholder((co, ci, 3, 3, block, block), "int8", name="kernel")
    bias = te.placeholder((co, 1, block), "int32", name="bias")
    pad = te.compute(
        (1, ci, h + 2, w + 2, 1, block),
        lambda b, c, y, x, bn, bc: te.if_then_else(
            te.all(y >= 1, y < h + 1, x >= 1, x < w + 1), data[b, c, y - 1, x - 1, bn, bc], te.const(0, "int8")
        ),
        name="pad",
    )
    ic = te.reduce_axis((0, ci), name="ic")
    kh = te.reduce_axis((0, 3), name="kh")
    kw = te.reduce_axis((0, 3), name="kw")
    icb = te.reduce_axis((0, block), name="icb")
    res = te.compute(
        (1, co, h, w, 1, block),
        lambda b, o, y, x, bn, bo: te.sum(
            pad[b, ic, y + kh, x + kw, bn, icb].astype("int32") * kernel[o, ic, kh, kw, bo, icb].astype("int32"),
            axis=[ic, kh, kw, icb],
        ),
        name="res",
    )

    def requantize(b, o, y, x, bn, bo):
        v = te.maximum(res[b, o, y, x, bn, bo] + bias[o, bn, bo], 0)
        v = (v + (1 << (shift - 1))) // (1 << shift)
        return te.minimum(te.maximum(v, -128), 127).astype("int8")

    out = te.compute(res.shape, requantize, name="out")
    s = te.create_schedule(out)
    s[pad].set_scope("inp_buffer")
    KK = s.cache_read(kernel, "wgt_buffer", [res])
    BB = s.cache_read(bias, "acc_buffer", [out])
    s[res].set_scope("acc_buffer")
    OC = s.cache_write(out, "acc_buffer")
    b, o, y, x, bn, bo = s[out].op.axis
    oo, oi = s[out].split(o, nparts=threads)
    yo, yi = s[out].split(y, tile_h)
    s[out].reorder(b, oo, yo, oi, yi, x, bn, bo)
    s[out].bind(oo, te.thread_axis("cthread"))
    for stage in (res, OC, BB):
        s[stage].compute_at(s[out], yo)
    rb, ro, ry, rx, rbn, rbo = s[res].op.axis
    ric, rkh, rkw, ricb = s[res].op.reduce_axis
    s[res].reorder(ric, rb, ro, rkh, rkw, ry, rx, rbn, rbo, ricb)
    s[pad].compute_at(s[res], ric)
    s[KK].compute_at(s[res], ric)
    s[res].tensorize(rbn, gemm_intrin())
    return s, [data, kernel, bias, out]


@pytest.mark.parametrize("ci, co, h, w, tile_h, threads", [(2, 4, 6, 5, 3, 2), (1, 2, 6, 7, 2, 1)])
def test_requantized_conv2d_on_the_simulator(ci, co, h, w, tile_h, threads):
    block, shift = 16, 7
    s, args = conv_schedule(ci, co, h, w, tile_h, threads, shift)
    x, k = int8((1, ci * block, h, w)), int8((co * block, ci * block, 3, 3))
    bias = RNG.integers(-4000, 4000, co * block).astype("int32")
    expected = ac.conv2d_reference(x, k, (1, 1), (1, 1, 1, 1), shift=shift, bias=bias, relu=True)
    inputs = (ac.pack_data(x, 1, block), ac.pack_kernel(k, block, block), bias.reshape(co, 1, block))
    got = np.zeros(args[3].shape, "int8")
    result = tc.build(s, args, target="accel")(*inputs, got)
    np.testing.assert_array_equal(ac.unpack_result(got), expected)
    assert len(np.unique(expected)) > 10
    assert result.stats.instructions.get("ALU SHR", 0) >= 1  # the requantization ran on the ALU


def test_block_32_spec_from_a_file(tmp_path):
    spec = dict(default_spec().to_dict(), LOG_BLOCK=5)
    path = tmp_path / "block32.json"
    path.write_text(json.dumps(spec))
    s, (A, W, R) = packed_gemm(2, 2, 2, threads=2, block=32, spec=load_spec(path))
    sched = s
    a, w = int8(A.shape), int8(W.shape)
    r = np.zeros(R.shape, "int8")
    f = tc.build(sched, [A, W, R], target=f"accel -spec={path}")
    f(a, w, r)
    np.testing.assert_array_equal(r, gemm_expected(a, w))
    assert f.spec.block == 32


def test_wrong_arrays_are_refused_by_name():
    s, args = packed_gemm(2, 1, 2, threads=1)
    f = tc.build(s, args, target="accel")
    a, w, r = int8(args[0].shape), int8(args[1].shape), np.zeros(args[2].shape, "int8")
    with pytest.raises(ValueError, match=r"argument 1 \(W\) of main must be a int8 array of shape"):
        f(a, w.astype("int32"), r)
    with pytest.raises(ValueError, match="takes 3 arrays, got 2"):
        f(a, w)
    with pytest.raises(ValueError, match="unknown accel target option '-fast'"):
        tc.build(s, args, target="accel -fast")
