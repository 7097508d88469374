"""TVM users' code, as TVM's tensor-expression tutorials teach it, runs on tilecraft.

Each test follows the steps of one tutorial (tensor_expr_get_started, opt_gemm,
schedule_primitives, reduction, tuple_inputs, intrin_math, scan, extern_op,
tensorize without tensorize) in TVM's spelling, `import tilecraft as tvm`, with
small sizes, and compares with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tvm
from tilecraft import te

RNG = np.random.default_rng(8)


def uniform(*shape, dtype="float32"):
    return RNG.uniform(size=shape).astype(dtype)


# --- tensor_expr_get_started -------------------------------------------------------------


def test_vector_add_with_symbolic_size():
    tgt = tvm.target.Target(target="llvm", host="llvm")
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    fadd = tvm.build(s, [A, B, C], tgt, name="myadd")
    dev = tvm.device(tgt.kind.name, 0)
    for size in (1024, 77):  # one function, any size
        a = tvm.nd.array(uniform(size).astype(A.dtype), dev)
        b = tvm.nd.array(uniform(size).astype(B.dtype), dev)
        c = tvm.nd.array(np.zeros(size, dtype=C.dtype), dev)
        fadd(a, b, c)
        tvm.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())
    # The sizes are checked: the arrays must agree on n.
    with pytest.raises(ValueError, match="size n is 8 .* but dimension 0 of B is 9"):
        fadd(np.zeros(8, "float32"), np.zeros(9, "float32"), np.zeros(8, "float32"))
    timer = fadd.time_evaluator(fadd.entry_name, dev, number=3)
    assert timer(a, b, c).mean > 0


def test_vector_add_parallel_and_vectorized():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    outer, inner = s[C].split(C.op.axis[0], factor=4)
    s[C].parallel(outer)
    s[C].vectorize(inner)
    text = tvm.lower(s, [A, B, C], simple_mode=True)
    assert text.startswith("// te.var sizes shown specialized to n = 64")
    assert "loop.for" in text and "parallel" in text
    f = tvm.build(s, [A, B, C], "llvm", name="myadd_parallel")
    a, b, c = uniform(1030), uniform(1030), np.zeros(1030, "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a + b)


def test_export_library_and_load_module(tmp_path):
    A = te.placeholder((100,), name="A")
    B = te.placeholder((100,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    fadd = tvm.build(s, [A, B, C], "llvm", name="myadd")
    path = str(tmp_path / "myadd_pack.so")
    fadd.export_library(path)
    fadd2 = tvm.runtime.load_module(path)
    a, b, c = (tvm.nd.array(x) for x in (uniform(100), uniform(100), np.zeros(100, "float32")))
    fadd2(a, b, c)
    tvm.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())
    assert "define" in fadd.get_source()
    with pytest.raises(ValueError, match="was not saved by tilecraft's export_library"):
        tvm.runtime.load_module(str(tmp_path / "missing.so"))


# --- opt_gemm ------------------------------------------------------------------------


def gemm_inputs(M, K, N):
    a = tvm.nd.array(np.random.default_rng(1).random((M, K)).astype("float32"), tvm.cpu())
    b = tvm.nd.array(np.random.default_rng(2).random((K, N)).astype("float32"), tvm.cpu())
    return a, b, np.dot(a.numpy(), b.numpy())


def check_gemm(s, A, B, C, M, N, a, b, answer):
    func = tvm.build(s, [A, B, C], target="llvm", name="mmult")
    c = tvm.nd.array(np.zeros((M, N), dtype="float32"), tvm.cpu())
    func(a, b, c)
    tvm.testing.assert_allclose(c.numpy(), answer, rtol=1e-5)
    evaluator = func.time_evaluator(func.entry_name, tvm.cpu(), number=1)
    assert evaluator(a, b, c).mean > 0


def test_gemm_blocking_and_vectorization():
    M = K = N = 128
    bn = 32
    a, b, answer = gemm_inputs(M, K, N)
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C = te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C")
    s = te.create_schedule(C.op)
    check_gemm(s, A, B, C, M, N, a, b, answer)
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    (kaxis,) = s[C].op.reduce_axis
    ko, ki = s[C].split(kaxis, factor=4)
    s[C].reorder(mo, no, ko, mi, ki, ni)
    s[C].vectorize(ni)
    check_gemm(s, A, B, C, M, N, a, b, answer)
    assert "loop.for" in tvm.lower(s, [A, B, C], simple_mode=True)


def test_gemm_array_packing_and_write_cache():
    M = K = N = 96
    bn = 32
    a, b, answer = gemm_inputs(M, K, N)
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    # N / bn is a float in Python 3: the shape is cast to int, as TVM does.
    packedB = te.compute((N / bn, K, bn), lambda bigN, k, littleN: B[k, bigN * bn + littleN], name="packedB")
    C = te.compute(
        (M, N),
        lambda m, n: te.sum(A[m, k] * packedB[n // bn, k, tvm.tir.indexmod(n, bn)], axis=k),
        name="C",
    )
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "global")
    # The stage of C keeps C.op.axis after cache_write.
    mo, no, mi, ni = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    s[CC].compute_at(s[C], no)
    mc, nc = s[CC].op.axis
    (kaxis,) = s[CC].op.reduce_axis
    ko, ki = s[CC].split(kaxis, factor=4)
    s[CC].reorder(ko, mc, ki, nc)
    s[CC].vectorize(nc)
    s[CC].unroll(ki)
    s[C].parallel(mo)
    bigN, _, littleN = s[packedB].op.axis
    s[packedB].vectorize(littleN)
    s[packedB].parallel(bigN)
    check_gemm(s, A, B, C, M, N, a, b, answer)


def test_float_shape_that_is_not_whole_is_an_error():
    with pytest.raises(ValueError, match="a float that is not a whole number"):
        te.placeholder((10 / 3,), name="A")


# --- schedule_primitives -------------------------------------------------------------


def two_stage(m):
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] + 1, name="B")
    C = te.compute((m,), lambda i: B[i] * 2, name="C")
    return A, B, C


@pytest.mark.parametrize("how", ["compute_at", "compute_inline", "compute_root", "at_then_root"])
def test_attach_with_intermediate_in_args(how):
    """TVM's schedule_primitives lowers [A, B, C] where B is computed at C, inlined
    or at the root; B's values are returned in every case."""
    m = te.var("m")
    A, B, C = two_stage(m)
    s = te.create_schedule(C.op)
    if how == "compute_at":
        s[B].compute_at(s[C], C.op.axis[0])
    elif how == "compute_inline":
        s[B].compute_inline()
    elif how == "compute_root":
        s[B].compute_root()
    else:
        s[B].compute_at(s[C], C.op.axis[0])
        s[B].compute_root()
    text = tvm.lower(s, [A, B, C], simple_mode=True)
    if how == "compute_at":
        # B is computed inside C's loop (one element per iteration).
        assert 'loop.alloc "B" local' in text
    f = tvm.build(s, [A, B, C])
    a = uniform(37)
    b, c = np.zeros(37, "float32"), np.zeros(37, "float32")
    f(a, b, c)
    np.testing.assert_allclose(b, a + 1)
    np.testing.assert_allclose(c, (a + 1) * 2)


def test_split_tile_fuse_reorder_with_symbolic_sizes():
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j], name="B")
    s = te.create_schedule(B.op)
    xo, yo, xi, yi = s[B].tile(B.op.axis[0], B.op.axis[1], x_factor=10, y_factor=5)
    fused = s[B].fuse(xi, yi)
    assert "loop.for" in tvm.lower(s, [A, B], simple_mode=True)
    f = tvm.build(s, [A, B])
    a = uniform(23, 17)
    b = np.zeros((23, 17), "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a)


def test_split_by_nparts():
    m = te.var("m")
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] * 2, name="B")
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(B.op.axis[0], nparts=32)
    f = tvm.build(s, [A, B])
    a, b = uniform(100), np.zeros(100, "float32")
    f(a, b)
    np.testing.assert_allclose(b, a * 2)


def test_gpu_only_primitives_say_so():
    A, B, C = two_stage(8)
    s = te.create_schedule(C.op)
    with pytest.raises(NotImplementedError, match=r"s\[C\]\.bind: tilecraft compiles for the CPU"):
        s[C].bind(C.op.axis[0], None)
    with pytest.raises(NotImplementedError, match="te.thread_axis: GPU thread axes are not supported"):
        te.thread_axis("blockIdx.x")
    with pytest.raises(NotImplementedError, match="tvm.tir.decl_buffer: buffers are declared for tensorize"):
        tvm.tir.decl_buffer((8,), "float32")
    with pytest.raises(ValueError, match="unknown target 'cuda'"):
        tvm.build(s, [A, C], target="cuda")
