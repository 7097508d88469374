"""Tensorization: te.decl_tensor_intrin, s[C].tensorize, the CPU micro-kernel.

Every built function is checked against numpy; the output array starts with
garbage, so the reduction's init (emitted around the intrinsic) is checked too."""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.dialects import tensor_intrin
from tilecraft.utils.diagnostics import OpError

RNG = np.random.default_rng(9)


def matmul(M, N, K, dtype="float32"):
    A = te.placeholder((M, K), dtype, name="A")
    B = te.placeholder((K, N), dtype, name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def run_matmul(s, A, B, C, M, N, K):
    f = tc.build(s, [A, B, C])
    a = RNG.random((M, K), dtype=np.float32)
    b = RNG.random((K, N), dtype=np.float32)
    c = np.full((M, N), np.nan, dtype=np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("M,N,K", [(8, 32, 16), (64, 64, 64), (12, 48, 40)])
def test_gemm_micro_kernel_with_outer_splits(M, N, K):
    """Outer splits feed the 4x16x8 register tile; the reduction's outer loop
    encloses it (init first, then one update per k.outer)."""
    A, B, C = matmul(M, N, K)
    s = te.create_schedule(C)
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    io, jo, ii, ji = s[C].tile(i, j, 4, 16)
    ko, ki = s[C].split(k, factor=8)
    s[C].reorder(io, jo, ko, ii, ji, ki)
    s[C].tensorize(ii, "gemm_4x16x8_f32")
    assert 'loop.tensor_intrin "gemm_4x16x8_f32"' in tc.lower(s, [A, B, C])
    run_matmul(s, A, B, C, M, N, K)


def test_intrinsic_tiles_the_whole_stage():
    """The intrinsic's shape is the stage's: tensorize at the outermost axis."""
    A, B, C = matmul(4, 16, 8)
    s = te.create_schedule(C)
    s[C].tensorize(C.op.axis[0], "gemm_4x16x8_f32")
    text = tc.lower(s, [A, B, C])
    assert text.count("loop.tensor_intrin") == 1
    run_matmul(s, A, B, C, 4, 16, 8)


def test_region_holding_the_whole_reduction_gets_its_init_in_front():
    """K = 8: no reduce loop outside the region; the init nest sits right in front
    of the intrinsic inside the (io, jo) loops, a parallel outer loop around it."""
    A, B, C = matmul(32, 64, 8)
    s = te.create_schedule(C)
    i, j = C.op.axis
    io, jo, ii, ji = s[C].tile(i, j, 4, 16)
    s[C].parallel(io)
    s[C].tensorize(ii, "gemm_4x16x8_f32")
    run_matmul(s, A, B, C, 32, 64, 8)


def test_tensorize_the_cache_write_stage():
    """As VTA schedules: the accumulating stage is a cache_write, computed at the
    copy's loop, and tensorized there."""
    M, N, K = 16, 32, 32
    A, B, C = matmul(M, N, K)
    s = te.create_schedule(C)
    CL = s.cache_write(C, "local")
    i, j = C.op.axis
    io, jo, ii, ji = s[C].tile(i, j, 4, 16)
    s[CL].compute_at(s[C], jo)
    ci, cj = s[CL].op.axis
    (ck,) = s[CL].op.reduce_axis
    ko, ki = s[CL].split(ck, factor=8)
    s[CL].reorder(ko, ci, cj, ki)
    s[CL].tensorize(ci, "gemm_4x16x8_f32")
    run_matmul(s, A, B, C, M, N, K)


def test_int8_gemv_intrinsic_on_the_cpu():
    """int8 x int8 -> int32 with the VTA-shaped 1x16x16 intrinsic: the batch axis
    stays outside, the weight is read transposed as the intrinsic reads it."""
    batch, N, K = 3, 48, 64
    X = te.placeholder((batch, K), "int8", name="X")
    W = te.placeholder((N, K), "int8", name="W")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute(
        (batch, N),
        lambda b, j: te.sum(X[b, k].astype("int32") * W[j, k].astype("int32"), axis=k),
        name="C",
    )
    s = te.create_schedule(C)
    b, j = C.op.axis
    jo, ji = s[C].split(j, factor=16)
    ko, ki = s[C].split(k, factor=16)
    s[C].reorder(b, jo, ko, ji, ki)
    s[C].tensorize(ji, "gemv_1x16x16_i8")
    f = tc.build(s, [X, W, C])
    x = RNG.integers(-128, 128, (batch, K), dtype=np.int8)
    w = RNG.integers(-128, 128, (N, K), dtype=np.int8)
    c = np.full((batch, N), 12345, dtype=np.int32)
    f(x, w, c)
    np.testing.assert_array_equal(c, x.astype(np.int32) @ w.astype(np.int32).T)


def test_user_intrinsic_without_reduction_and_own_loop_kinds():
    """An elementwise intrinsic (a scaled add over 2x8) declared with its own
    LoopKernel: rows serial, lanes vectorized; assigned, not accumulated."""
    a = te.placeholder((2, 8), "float32", name="a")
    b = te.placeholder((2, 8), "float32", name="b")
    c = te.compute((2, 8), lambda i, j: a[i, j] * 2.0 + b[i, j], name="c")
    seen = {}

    def intrin_func(ins, outs):
        seen["ins"] = [(x.name, x.shape, x.dtype) for x in ins]
        seen["outs"] = [(x.name, x.shape, x.dtype) for x in outs]
        return {"llvm": te.LoopKernel(order=("i", "j"), kinds={"i": "serial", "j": "vectorized"})}

    axpy = te.decl_tensor_intrin(c.op, intrin_func, name="axpy_2x8_test")
    assert seen == {
        "ins": [("a", (2, 8), "float32"), ("b", (2, 8), "float32")],
        "outs": [("c", (2, 8), "float32")],
    }
    assert tensor_intrin.lookup("axpy_2x8_test") is axpy
    X = te.placeholder((6, 32), "float32", name="X")
    Y = te.placeholder((6, 32), "float32", name="Y")
    Z = te.compute((6, 32), lambda i, j: X[i, j] * 2.0 + Y[i, j], name="Z")
    s = te.create_schedule(Z)
    io, jo, ii, ji = s[Z].tile(*Z.op.axis, 2, 8)
    s[Z].tensorize(ii, axpy)
    f = tc.build(s, [X, Y, Z])
    x, y = RNG.random((6, 32), dtype=np.float32), RNG.random((6, 32), dtype=np.float32)
    z = np.zeros((6, 32), np.float32)
    f(x, y, z)
    np.testing.assert_allclose(z, x * 2.0 + y, rtol=1e-6)


def test_mismatch_is_reported_at_the_users_line():
    """The brief's example: the stage reads A at 2*k where the intrinsic reads A[i, k]."""
    M, N, K = 8, 16, 16
    A = te.placeholder((M, 2 * K), "float32", name="A")
    B = te.placeholder((K, N), "float32", name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k * 2] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C)
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=4)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=8)
    s[C].reorder(io, ko, ii, j, ki)
    s[C].tensorize(ii, "gemm_4x16x8_f32")
    with pytest.raises(OpError, match=r"test_tensorize.py:\d+:1: error: sched.tensorize: intrinsic "
                       r"gemm_4x16x8_f32: input A index 1 is k, the stage reads 2\*k.inner here"):
        tc.lower(s, [A, B, C])


def test_declaration_errors():
    a = te.placeholder((4,), "float32", name="a")
    b = te.compute((4,), lambda i: a[i] + 1.0, name="b")
    c = te.compute((4,), lambda i: b[i] * 2.0, name="c")
    with pytest.raises(ValueError, match="reads b, which is computed"):
        te.decl_tensor_intrin(c.op, name="bad_intrin")
    with pytest.raises(ValueError, match="must return a dict of lowerings"):
        te.decl_tensor_intrin(b.op, lambda ins, outs: "kernel", name="bad_intrin")
    with pytest.raises(ValueError, match="may vectorize one spatial axis"):
        k = te.reduce_axis((0, 4), name="k")
        d = te.compute((1,), lambda i: te.sum(a[k], axis=k), name="d")
        te.decl_tensor_intrin(d.op, lambda ins, outs: te.LoopKernel(kinds={"k": "vectorized"}), name="bad_intrin")
    with pytest.raises(ValueError, match="no tensor intrinsic is named 'nope'"):
        s = te.create_schedule(b)
        s[b].tensorize(b.op.axis[0], "nope")
    assert tensor_intrin.lookup("bad_intrin") is None


def test_an_intrinsic_without_a_cpu_lowering_is_refused_at_build():
    """Lowerings are per target: one declared only for "accel" lowers nowhere on the CPU."""
    a = te.placeholder((16,), "int8", name="a")
    c = te.compute((16,), lambda i: a[i].astype("int32"), name="c")
    te.decl_tensor_intrin(c.op, lambda ins, outs: {"accel": object()}, name="widen_16_accel_only")
    X = te.placeholder((32,), "int8", name="X")
    Y = te.compute((32,), lambda i: X[i].astype("int32"), name="Y")
    s = te.create_schedule(Y)
    io, ii = s[Y].split(Y.op.axis[0], factor=16)
    s[Y].tensorize(ii, "widen_16_accel_only")
    assert 'loop.tensor_intrin "widen_16_accel_only"' in tc.lower(s, [X, Y])
    with pytest.raises(OpError, match="has no loop-kernel lowering for target 'llvm' \\(its lowerings: accel\\)"):
        tc.build(s, [X, Y])


def test_region_starting_at_a_reduce_loop():
    """Tensorized at k.inner (outside i.inner, j.inner): the init nest is the
    stage's own, before k.outer."""
    A, B, C = matmul(8, 32, 16)
    s = te.create_schedule(C)
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=4)
    jo, ji = s[C].split(j, factor=16)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=8)
    s[C].reorder(io, jo, ko, ki, ii, ji)
    s[C].tensorize(ki, "gemm_4x16x8_f32")
    run_matmul(s, A, B, C, 8, 32, 16)


def test_batch_split_by_one_inside_the_region():
    """The intrinsic's extent-1 batch axis matches a loop of extent 1."""
    X = te.placeholder((3, 32), "int8", name="X")
    W = te.placeholder((16, 32), "int8", name="W")
    r = te.reduce_axis((0, 32), name="k")
    Y = te.compute(
        (3, 16), lambda b, j: te.sum(X[b, r].astype("int32") * W[j, r].astype("int32"), axis=r), name="Y"
    )
    s = te.create_schedule(Y)
    bo, bi = s[Y].split(Y.op.axis[0], factor=1)
    ro, ri = s[Y].split(r, factor=16)
    s[Y].reorder(bo, ro, bi, Y.op.axis[1], ri)
    s[Y].tensorize(bi, "gemv_1x16x16_i8")
    f = tc.build(s, [X, W, Y])
    x = RNG.integers(-128, 128, (3, 32), dtype=np.int8)
    w = RNG.integers(-128, 128, (16, 32), dtype=np.int8)
    y = np.full((3, 16), 7, np.int32)
    f(x, w, y)
    np.testing.assert_array_equal(y, x.astype(np.int32) @ w.astype(np.int32).T)


def test_a_redeclared_intrinsic_object_is_refused():
    a = te.placeholder((16,), "float32", name="a")
    c = te.compute((16,), lambda i: a[i] * 3.0, name="c")
    old = te.decl_tensor_intrin(c.op, name="triple_16_test")
    te.decl_tensor_intrin(c.op, name="triple_16_test")
    X = te.placeholder((32,), "float32", name="X")
    Y = te.compute((32,), lambda i: X[i] * 3.0, name="Y")
    s = te.create_schedule(Y)
    io, ii = s[Y].split(Y.op.axis[0], factor=16)
    with pytest.raises(ValueError, match="was declared again since"):
        s[Y].tensorize(ii, old)


def test_binds_ask_for_a_memory_scope():
    """`binds` names the scope an operand must live in (VTA binds its inputs to
    on-chip buffers): a stage reading the input from global memory is refused,
    one reading a cache_read copy in that scope is accepted."""
    a = te.placeholder((16,), "float32", name="a")
    c = te.compute((16,), lambda i: a[i] + 1.0, name="c")
    te.decl_tensor_intrin(c.op, name="inc_16_local_test", binds={a: "local"})
    X = te.placeholder((32,), "float32", name="X")
    Y = te.compute((32,), lambda i: X[i] + 1.0, name="Y")

    def schedule(cached: bool):
        s = te.create_schedule(Y)
        if cached:
            s.cache_read(X, "local", [Y])
        io, ii = s[Y].split(Y.op.axis[0], factor=16)
        s[Y].tensorize(ii, "inc_16_local_test")
        return s

    with pytest.raises(OpError, match="a must live in scope local, but 'X' is in global"):
        tc.lower(schedule(False), [X, Y])
    f = tc.build(schedule(True), [X, Y])
    x, y = RNG.random(32, dtype=np.float32), np.zeros(32, np.float32)
    f(x, y)
    np.testing.assert_allclose(y, x + 1.0)
