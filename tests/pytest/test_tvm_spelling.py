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
    # One function for every n: n is a `?` size, read from the arrays.
    assert 'memref<?xf32> {tc.name = "A", tc.dims = ["n"]}' in text
    assert "loop.for" in text and "parallel" in text
    f = tvm.build(s, [A, B, C], "llvm", name="myadd_parallel")
    for size in (1030, 3, 4):
        a, b, c = uniform(size), uniform(size), np.zeros(size, "float32")
        f(a, b, c)
        np.testing.assert_allclose(c, a + b)


def test_nd_arrays_are_copies_that_start_on_a_cache_line():
    """As TVM's allocator, tvm.nd gives 64-byte aligned buffers (numpy's are 16)."""
    strided = np.arange(12, dtype="float32").reshape(3, 4)[:, ::2]
    a = tvm.nd.array(strided, tvm.cpu(0))
    assert a.ctypes.data % 64 == 0 and a.flags.c_contiguous and a.dtype == np.float32
    np.testing.assert_array_equal(a.numpy(), strided)
    strided[0, 0] = 99.0
    assert a.numpy()[0, 0] == 0.0  # a copy
    assert tvm.nd.array([1, 2]).dtype == np.array([1, 2]).dtype and tvm.nd.array(2.5).shape == ()
    e = tvm.nd.empty((5, 3), "int8")
    assert e.ctypes.data % 64 == 0 and e.shape == (5, 3) and e.dtype == np.int8


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


def test_symbolic_function_saved_for_every_size():
    """get_started saves `fadd` (built with n = te.var): one native function
    whose n is read from the arrays, saved before or after any call, takes
    every size when loaded back."""
    from tilecraft.contrib import cc, utils

    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    fadd = tvm.build(s, [A, B, C], "llvm", name="myadd")
    temp = utils.tempdir()
    fadd.export_library(temp.relpath("before_any_call.so"))
    for size in (16, 40):
        fadd(uniform(size), uniform(size), np.zeros(size, "float32"))
    fadd.save(temp.relpath("myadd.o"))
    cc.create_shared(temp.relpath("myadd.so"), [temp.relpath("myadd.o")])
    assert "myadd.so" in temp.listdir()
    fadd1 = tvm.runtime.load_module(temp.relpath("myadd.so"))
    fadd.export_library(temp.relpath("myadd_pack.so"))
    fadd2 = tvm.runtime.load_module(temp.relpath("myadd_pack.so"))
    fadd3 = tvm.runtime.load_module(temp.relpath("before_any_call.so"))
    for f in (fadd1, fadd2, fadd3):
        for size in (16, 40, 7, 1):
            a, b, c = uniform(size), uniform(size), np.zeros(size, "float32")
            f(a, b, c)
            np.testing.assert_allclose(c, a + b)
        with pytest.raises(ValueError, match="none matches these arrays"):
            f(uniform(7), uniform(8), np.zeros(7, "float32"))


def test_symbolic_function_saved_for_the_sizes_it_ran(tmp_path):
    """A computation that cannot be built for every size yet (here a reduction
    that starts at a te.var) is compiled per size: the library holds one variant
    per size it ran with."""
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((n - 2, n), name="k")
    C = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="C")
    s = te.create_schedule(C.op)
    ftail = tvm.build(s, [A, C], "llvm", name="tail")
    with pytest.raises(NotImplementedError, match="export_library of a function with te.var sizes before any call"):
        ftail.export_library(str(tmp_path / "never.so"))
    for size in (16, 40):
        a, c = uniform(size), np.zeros(1, "float32")
        ftail(a, c)
        np.testing.assert_allclose(c, a[-2:].sum(), rtol=1e-6)
    path = str(tmp_path / "tail.so")
    ftail.export_library(path)
    loaded = tvm.runtime.load_module(path)
    c = np.zeros(1, "float32")
    loaded(np.ones(40, "float32"), c)
    np.testing.assert_allclose(c, 2.0)
    with pytest.raises(ValueError, match="saved for the sizes it had been called with; none matches"):
        loaded(uniform(7), np.zeros(1, "float32"))


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


# --- tensorize ---------------------------------------------------------------------------


def test_matmul_with_transposed_operand_split_and_reordered():
    N, M, L = 64, 48, 32
    A = te.placeholder((N, L), name="A")
    B = te.placeholder((M, L), name="B")
    k = te.reduce_axis((0, L), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=16)
    s[C].reorder(x, yo, yi, z)
    assert "loop.for" in tvm.lower(s, [A, B, C], simple_mode=True)
    func = tvm.build(s, [A, B, C], target="llvm", name="gemv")
    dev = tvm.device("cpu", 0)
    a, b = uniform(N, L), uniform(M, L)
    c = tvm.nd.array(np.zeros((N, M), dtype=C.dtype), dev)
    func(tvm.nd.array(a, dev), tvm.nd.array(b, dev), c)
    tvm.testing.assert_allclose(c.numpy(), np.dot(a, b.T), rtol=1e-5)
    with pytest.raises(ValueError, match="no tensor intrinsic is named 'None'"):
        s[C].tensorize(yi, None)


def intrin_gemv(m, l):
    """The tutorial's gemv intrinsic; `intrin_func` returns tilecraft's lowering
    per target instead of TIR calling an extern function."""
    a = te.placeholder((l,), name="a")
    b = te.placeholder((m, l), name="b")
    k = te.reduce_axis((0, l), name="k")
    c = te.compute((m,), lambda i: te.sum(a[k] * b[i, k], axis=k), name="c")

    def intrin_func(ins, outs):
        assert [x.shape for x in ins] == [(l,), (m, l)] and outs[0].shape == (m,)
        return {"llvm": te.LoopKernel()}

    return te.decl_tensor_intrin(c.op, intrin_func, name=f"gemv_{m}x{l}")


def test_tensorize_tutorial_gemv():
    N, M, L = 64, 48, 32
    A = te.placeholder((N, L), name="A")
    B = te.placeholder((M, L), name="B")
    k = te.reduce_axis((0, L), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C")
    s = te.create_schedule(C.op)
    x, y = C.op.axis
    (z,) = C.op.reduce_axis
    yo, yi = s[C].split(y, factor=16)
    s[C].reorder(x, yo, yi, z)
    gemv = intrin_gemv(16, L)
    s[C].tensorize(yi, gemv)
    assert 'loop.tensor_intrin "gemv_16x32"' in tvm.lower(s, [A, B, C], simple_mode=True)
    func = tvm.build(s, [A, B, C], target="llvm")
    a, b = uniform(N, L), uniform(M, L)
    c = tvm.nd.array(np.full((N, M), 7.0, dtype=C.dtype))
    func(tvm.nd.array(a), tvm.nd.array(b), c)
    tvm.testing.assert_allclose(c.numpy(), np.dot(a, b.T), rtol=1e-5)


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
    s[B].fuse(xi, yi)
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
    with pytest.raises(NotImplementedError, match=r"s\[C\]\.bind takes a te.thread_axis, not None"):
        s[C].bind(C.op.axis[0], None)
    with pytest.raises(NotImplementedError, match="te.thread_axis: unknown thread tag 'warpIdx.x'"):
        te.thread_axis("warpIdx.x")
    with pytest.raises(NotImplementedError, match="tvm.tir.decl_buffer: buffers are declared for tensorize"):
        tvm.tir.decl_buffer((8,), "float32")
    with pytest.raises(ValueError, match="unknown target 'opencl'"):
        tvm.build(s, [A, C], target="opencl")


# --- reduction -------------------------------------------------------------------------


def test_row_sum_with_split_reduce_axis():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    xo, xi = s[B].split(B.op.axis[0], factor=32)
    assert "loop.for" in tvm.lower(s, [A, B], simple_mode=True)
    f = tvm.build(s, [A, B])
    a, b = uniform(40, 50), np.zeros(40, "float32")
    f(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_convolution_with_symbolic_size():
    n = te.var("n")
    Input = te.placeholder((n, n), name="Input")
    Filter = te.placeholder((3, 3), name="Filter")
    di = te.reduce_axis((0, 3), name="di")
    dj = te.reduce_axis((0, 3), name="dj")
    Output = te.compute(
        (n - 2, n - 2),
        lambda i, j: te.sum(Input[i + di, j + dj] * Filter[di, dj], axis=[di, dj]),
        name="Output",
    )
    s = te.create_schedule(Output.op)
    f = tvm.build(s, [Input, Filter, Output])
    x, w = uniform(12, 12), uniform(3, 3)
    out = np.zeros((10, 10), "float32")
    f(x, w, out)
    want = sum(x[a : a + 10, b : b + 10] * w[a, b] for a in range(3) for b in range(3))
    np.testing.assert_allclose(out, want, rtol=1e-5)
    with pytest.raises(ValueError, match=r"dimension 0 of Output must be \(n - 2\) = 10, got 9"):
        f(x, w, np.zeros((9, 10), "float32"))


def test_comm_reducer_product():
    n, m = te.var("n"), te.var("m")
    product = te.comm_reducer(lambda x, y: x * y, lambda t: tvm.tir.const(1, dtype=t), name="product")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), name="k")
    B = te.compute((n,), lambda i: product(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    f = tvm.build(s, [A, B])
    a, b = (uniform(6, 7) + 0.5), np.zeros(6, "float32")
    f(a, b)
    np.testing.assert_allclose(b, a.prod(axis=1), rtol=1e-5)


def test_comm_reducer_that_is_not_supported_says_so():
    odd = te.comm_reducer(lambda x, y: x * y + 1.0, lambda t: tvm.tir.const(0, dtype=t), name="odd")
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(ValueError, match="te.comm_reducer 'odd': tilecraft reduces with x \\+ y"):
        te.compute((4,), lambda i: odd(A[i, k], axis=k))


# --- tuple_inputs ----------------------------------------------------------------------


def test_tuple_valued_compute():
    n, m = te.var("n"), te.var("m")
    A0 = te.placeholder((m, n), name="A0")
    A1 = te.placeholder((m, n), name="A1")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A1[i, j] * 3), name="B")
    s = te.create_schedule(B0.op)
    assert "B.v1" in tvm.lower(s, [A0, A1, B0, B1], simple_mode=True)
    f = tvm.build(s, [A0, A1, B0, B1])
    a0, a1 = uniform(5, 6), uniform(5, 6)
    b0, b1 = np.zeros((5, 6), "float32"), np.zeros((5, 6), "float32")
    f(a0, a1, b0, b1)
    np.testing.assert_allclose(b0, a0 + 2)
    np.testing.assert_allclose(b1, a1 * 3)


def test_argmax_comm_reducer():
    def fcombine(x, y):
        lhs = tvm.tir.Select((x[1] >= y[1]), x[0], y[0])
        rhs = tvm.tir.Select((x[1] >= y[1]), x[1], y[1])
        return lhs, rhs

    def fidentity(t0, t1):
        return tvm.tir.const(-1, t0), tvm.te.min_value(t1)

    argmax = te.comm_reducer(fcombine, fidentity, name="argmax")
    m, n = te.var("m"), te.var("n")
    idx = te.placeholder((m, n), name="idx", dtype="int32")
    val = te.placeholder((m, n), name="val", dtype="int32")
    k = te.reduce_axis((0, n), "k")
    T0, T1 = te.compute((m,), lambda i: argmax((idx[i, k], val[i, k]), axis=k), name="T")
    s = te.create_schedule(T0.op)
    f = tvm.build(s, [idx, val, T0, T1])
    rng = np.random.default_rng(5)
    ids = rng.integers(0, 100, (9, 13)).astype("int32")
    vals = rng.integers(-5, 5, (9, 13)).astype("int32")  # ties: the first one wins
    t0, t1 = np.zeros(9, "int32"), np.zeros(9, "int32")
    f(ids, vals, t0, t1)
    first = vals.argmax(axis=1)
    np.testing.assert_array_equal(t1, vals.max(axis=1))
    np.testing.assert_array_equal(t0, ids[np.arange(9), first])


def test_tuple_output_computed_at_consumer():
    n, m = te.var("n"), te.var("m")
    A0 = te.placeholder((m, n), name="A0")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] + 2, A0[i, j] * 3), name="B")
    A1 = te.placeholder((m, n), name="A1")
    C = te.compute((m, n), lambda i, j: A1[i, j] + B0[i, j], name="C")
    s = te.create_schedule(C.op)
    s[B0].compute_at(s[C], C.op.axis[0])
    f = tvm.build(s, [A0, A1, C])
    a0, a1, c = uniform(4, 5), uniform(4, 5), np.zeros((4, 5), "float32")
    f(a0, a1, c)
    np.testing.assert_allclose(c, a1 + a0 + 2, rtol=1e-6)


# --- intrin_math -----------------------------------------------------------------------


def test_intrinsics_and_extern_math():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: te.exp(A[i]), name="B")
    C = te.compute(A.shape, lambda i: tvm.tir.call_pure_extern("float32", "expf", A[i]), name="C")
    D = te.compute(A.shape, lambda i: te.log(A[i]), name="D")
    s = te.create_schedule([B.op, C.op, D.op])
    f = tvm.build(s, [A, B, C, D], "llvm")
    a = uniform(33) + 0.1
    b, c, d = (np.zeros(33, "float32") for _ in range(3))
    f(a, b, c, d)
    np.testing.assert_allclose(b, np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(c, np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(d, np.log(a), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="call_pure_extern\\('mylog'\\)"):
        tvm.tir.call_pure_extern("float32", "mylog", A[0])


def test_tir_index_functions():
    A = te.placeholder((24,), name="A", dtype="int32")
    B = te.compute((4, 6), lambda i, j: A[tvm.tir.indexdiv(i * 6 + j, 6) * 6 + tvm.tir.indexmod(j, 6)], name="B")
    C = te.compute((24,), lambda i: tvm.tir.floordiv(i, 5) * 10 + tvm.tir.floormod(i, 5), name="C")
    s = te.create_schedule([B.op, C.op])
    f = tvm.build(s, [A, B, C])
    a = np.arange(24, dtype="int32")
    b, c = np.zeros((4, 6), "int32"), np.zeros(24, "int32")
    f(a, b, c)
    np.testing.assert_array_equal(b, a.reshape(4, 6))
    np.testing.assert_array_equal(c, (a // 5) * 10 + a % 5)
    with pytest.raises(NotImplementedError, match="tvm.tir.Allocate is not supported"):
        tvm.tir.Allocate


def test_tir_division_functions_on_negative_operands():
    """TVM's floordiv/floormod round toward minus infinity, truncdiv/truncmod toward 0."""
    X = te.placeholder((12,), name="X", dtype="int32")
    ops = {
        "fd": (tvm.tir.floordiv, np.floor_divide), "fm": (tvm.tir.floormod, np.mod),
        "td": (tvm.tir.truncdiv, lambda a, b: np.trunc(a / b).astype("int32")), "tm": (tvm.tir.truncmod, np.fmod),
        "id": (tvm.tir.indexdiv, np.floor_divide), "im": (tvm.tir.indexmod, np.mod),
    }  # fmt: skip
    outs = [te.compute((12,), lambda i, f=f: f(X[i], 5), name=key) for key, (f, _) in ops.items()]
    f = tvm.build(te.create_schedule([t.op for t in outs]), [X, *outs])
    x = np.arange(-6, 6, dtype="int32")
    results = [np.zeros(12, "int32") for _ in outs]
    f(x, *results)
    for (key, (_, reference)), got in zip(ops.items(), results):
        np.testing.assert_array_equal(got, reference(x, 5), err_msg=key)


# --- extern_op -------------------------------------------------------------------------


def test_extern_cblas_matmul_with_scalar_parameter():
    n, l, m = 32, 16, 23
    bias = te.var("bias", dtype="float32")
    A = te.placeholder((n, l), name="A")
    B = te.placeholder((l, m), name="B")
    C = te.extern(
        (n, m),
        [A, B],
        lambda ins, outs: tvm.tir.call_packed("tvm.contrib.cblas.matmul", ins[0], ins[1], outs[0], False, False),
        name="C",
    )
    D = te.compute(C.shape, lambda i, j: C[i, j] + bias, name="D")
    s = te.create_schedule(D.op)
    f = tvm.build(s, [A, B, D, bias], "llvm")
    a, b = tvm.nd.array(uniform(n, l)), tvm.nd.array(uniform(l, m))
    d = tvm.nd.array(np.zeros((n, m), dtype=D.dtype))
    f(a, b, d, 10.0)
    tvm.testing.assert_allclose(d.numpy(), np.dot(a.numpy(), b.numpy()) + 10, rtol=1e-5)
    from tilecraft.contrib import cblas

    C = cblas.matmul(A, B)
    D = te.compute(C.shape, lambda i, j: C[i, j] + bias, name="D")
    f = tvm.build(te.create_schedule(D.op), [A, B, D, bias], "llvm")
    f(a, b, d, -1.5)
    tvm.testing.assert_allclose(d.numpy(), np.dot(a.numpy(), b.numpy()) - 1.5, rtol=1e-5)


def test_extern_registered_python_function():
    seen = []

    @tvm.register_func("tests.tvm_spelling.addone", override=True)
    def my_addone(x, y):
        seen.append((type(x), type(y)))
        tvm.nd.array(x.numpy() + 1).copyto(y)

    n = 50
    A = te.placeholder((n,), name="A")
    B = te.extern(A.shape, [A], lambda ins, outs: tvm.tir.call_packed("tests.tvm_spelling.addone", ins[0], outs[0]), name="C")
    C = te.compute((n,), lambda i: B[i] * 2, name="D")
    s = te.create_schedule(C.op)
    text = tvm.lower(s, [A, B, C], simple_mode=True)
    assert "// part 0: te.extern C: tests.tvm_spelling.addone(...) fills C\n// part 1: D" in text
    f = tvm.build(s, [A, B, C], "llvm")
    a, b, c = uniform(n), np.zeros(n, "float32"), np.zeros(n, "float32")
    f(a, b, c)
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)
    np.testing.assert_allclose(c, (a + 1) * 2, rtol=1e-6)
    assert seen == [(tvm.nd.NDArray, tvm.nd.NDArray)]
    with pytest.raises(ValueError, match="no global function 'not.there' is registered"):
        tvm.get_global_func("not.there")


# --- reduction: rfactor --------------------------------------------------------------


@pytest.mark.parametrize("rows,cols", [(40, 50), (7, 64)])
def test_rfactor_then_compute_at_the_factored_axis(rows, cols):
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(B.op.reduce_axis[0], factor=16)
    BF = s.rfactor(B, ki)
    text = tvm.lower(s, [A, B], simple_mode=True)
    assert "B.rf" in text
    assert repr(s[B].op.body) == "sum(B.rf[k.inner, i], axis=[k.inner])"
    assert [a.name for a in BF.op.axis] == ["k.inner", "i"] and [a.name for a in BF.op.reduce_axis] == ["k.outer"]
    xo, xi = s[B].split(s[B].op.axis[0], factor=32)
    s[BF].compute_at(s[B], s[B].op.reduce_axis[0])
    f = tvm.build(s, [A, B])
    a, b = uniform(rows, cols), np.zeros(rows, "float32")
    f(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_rfactor_of_a_static_max_with_factor_axis():
    A = te.placeholder((6, 20), name="A")
    k = te.reduce_axis((0, 20), "k")
    B = te.compute((6,), lambda i: te.max(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    ko, ki = s[B].split(k, nparts=4)
    BF = s.rfactor(B, ko, factor_axis=1)
    assert BF.shape == (6, 4)
    f = tvm.build(s, [A, B])
    a, b = uniform(6, 20) - 0.5, np.zeros(6, "float32")
    f(a, b)
    np.testing.assert_allclose(b, a.max(axis=1))


def test_rfactor_errors():
    A = te.placeholder((6, 20), name="A")
    k = te.reduce_axis((0, 20), "k")
    B = te.compute((6,), lambda i: te.sum(A[i, k], axis=k), name="B")
    s = te.create_schedule(B.op)
    with pytest.raises(ValueError, match="rfactor factors over a reduce axis, and 'i' is spatial"):
        s.rfactor(B, B.op.axis[0])
    with pytest.raises(ValueError, match="rfactor over 'k' leaves no axis to reduce"):
        s.rfactor(B, k)


# --- scan ------------------------------------------------------------------------------


def test_scan_cumulative_sum():
    m, n = te.var("m"), te.var("n")
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
    s_scan = tvm.te.scan(s_init, s_update, s_state, inputs=[X])
    s = te.create_schedule(s_scan.op)
    xo, xi = s[s_update].split(s_update.op.axis[1], factor=32)
    assert "part 1: row t of scan" in tvm.lower(s, [X, s_scan], simple_mode=True)
    fscan = tvm.build(s, [X, s_scan], "llvm", name="myscan")
    a_np = uniform(10, 70).astype(s_scan.dtype)
    b = tvm.nd.array(np.zeros((10, 70), dtype=s_scan.dtype))
    fscan(tvm.nd.array(a_np), b)
    tvm.testing.assert_allclose(b.numpy(), np.cumsum(a_np, axis=0), rtol=1e-5)


def test_scan_multi_stage_cell_and_two_states():
    m, n, l = te.var("m"), te.var("n"), te.var("l")
    X = te.placeholder((m, n), name="X")
    s_state = te.placeholder((m, n))
    s_init = te.compute((1, n), lambda _, i: X[0, i])
    s1 = te.compute((m, n), lambda t, i: s_state[t - 1, i] * 2, name="s1")
    s2 = te.compute((m, n), lambda t, i: s1[t, i] + X[t, i], name="s2")
    cell = tvm.te.scan(s_init, s2, s_state, inputs=[X])
    s = te.create_schedule(cell.op)
    xo, xi = s[s2].split(s2.op.axis[1], factor=32)
    s[s1].compute_at(s[s2], xo)
    f = tvm.build(s, [X, cell])
    a = uniform(6, 40)
    out = np.zeros((6, 40), "float32")
    f(a, out)
    want = np.zeros_like(a)
    want[0] = a[0]
    for t in range(1, 6):
        want[t] = want[t - 1] * 2 + a[t]
    np.testing.assert_allclose(out, want, rtol=1e-5)

    state1, state2 = te.placeholder((m, n)), te.placeholder((m, l))
    init1 = te.compute((1, n), lambda _, i: X[0, i])
    init2 = te.compute((1, l), lambda _, i: 0.0)
    update1 = te.compute((m, n), lambda t, i: state1[t - 1, i] + X[t, i])
    update2 = te.compute((m, l), lambda t, i: state2[t - 1, i] + state1[t - 1, 0])
    scan1, scan2 = tvm.te.scan([init1, init2], [update1, update2], [state1, state2], inputs=[X])
    s = te.create_schedule(scan1.op)
    f = tvm.build(s, [X, scan1, scan2])
    r1, r2 = np.zeros((6, 40), "float32"), np.zeros((6, 3), "float32")
    f(a, r1, r2)
    c = np.cumsum(a, axis=0)
    np.testing.assert_allclose(r1, c, rtol=1e-5)
    want2 = np.zeros((6, 3), "float32")
    for t in range(1, 6):
        want2[t] = want2[t - 1] + c[t - 1, 0]
    np.testing.assert_allclose(r2, want2, rtol=1e-5)


def test_unsupported_tvm_names_are_named():
    A, B, C = two_stage(8)
    s = te.create_schedule(C.op)
    assert s.normalize() is s
    with pytest.raises(NotImplementedError, match="s.create_group: not supported by tilecraft"):
        s.create_group(outputs=C, inputs=A)
    with pytest.raises(NotImplementedError, match="s\\[C\\].double_buffer: double_buffer is not supported"):
        s[C].double_buffer()
    with pytest.raises(NotImplementedError, match="tvm.relay: Relay is not supported"):
        tvm.relay
    with pytest.raises(NotImplementedError, match="te.hybrid: hybrid scripts are not supported"):
        te.hybrid
    with pytest.raises(NotImplementedError, match="tvm.contrib.nvcc is not supported"):
        tvm.contrib.nvcc
    with pytest.raises(NotImplementedError, match="tvm.ir: IR objects and intrinsic lowering rules"):
        tvm.ir.register_intrin_lowering
    with pytest.raises(NotImplementedError, match="tvm.target.intrin is not supported"):
        tvm.target.intrin
    assert not hasattr(te, "no_such_function")  # still an AttributeError for hasattr


def test_symbolic_sizes_are_checked_at_each_call():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    B = te.compute((n,), lambda i: A[i, 0] + A[i, m - 1], name="B")
    f = tvm.build(te.create_schedule(B.op), [A, B, n])
    a, b = uniform(5, 7), np.zeros(5, "float32")
    f(a, b, 5)  # a size passed explicitly is checked too
    np.testing.assert_allclose(b, a[:, 0] + a[:, 6])
    with pytest.raises(ValueError, match="size n is 5, got 6"):
        f(a, b, 6)
    with pytest.raises(ValueError, match=r"argument A has rank 2, got an array of shape \(35,\)"):
        f(a.reshape(35), b, 5)
    with pytest.raises(ValueError, match="size n is 5 .* but dimension 0 of B is 4"):
        f(a, np.zeros(4, "float32"), 5)
    C = te.compute((n + 1,), lambda i: A[0, 0] * 2.0, name="C")
    g = tvm.build(te.create_schedule(C.op), [A, C])
    with pytest.raises(ValueError, match=r"dimension 0 of C must be \(n \+ 1\) = 6, got 5"):
        g(a, np.zeros(5, "float32"))
    D = te.compute((n * 2,), lambda i: 1.0, name="D")
    h = tvm.build(te.create_schedule(D.op), [D])
    with pytest.raises(ValueError, match="dimension 0 of D is \\(n \\* 2\\), but no argument has n as a whole dimension"):
        h(np.zeros(8, "float32"))
