"""The numpy reference evaluator against numpy written directly.

It is the oracle for everything compiled, so its tests compare it with plain
numpy code that shares nothing with it: matmul, conv2d with padding, a multi-stage
softmax, integer semantics (floor and truncated division, division by zero, wrap-around),
float comparisons with NaN, and the chunking of large reductions.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilecraft import te
from tilecraft.backends import reference
from tilecraft.backends.reference import EvaluationError, evaluate, evaluate_module
from tilecraft.driver.context import parse_text
from tilecraft.frontends.te.expr import floordiv, floormod, truncdiv, truncmod



@pytest.fixture
def rng():
    return np.random.default_rng(0)


def run(args, *inputs, schedule=None):
    return evaluate_module(te.build_module(schedule, args), "main", list(inputs))


def test_matmul_float32_and_float64(rng):
    for dtype in ("float32", "float64"):
        A = te.placeholder((33, 17), dtype, name="A")
        B = te.placeholder((17, 29), dtype, name="B")
        k = te.reduce_axis((0, 17), name="k")
        C = te.compute((33, 29), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
        a = rng.standard_normal((33, 17)).astype(dtype)
        b = rng.standard_normal((17, 29)).astype(dtype)
        (c,) = run([A, B, C], a, b)
        assert c.dtype == np.dtype(dtype)
        # A sum of 17 products whose order differs from numpy's BLAS: its error
        # scales with the products' magnitudes (~1), not with the sum, which may be ~0.
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(c, a @ b, rtol=tol, atol=tol)


def numpy_conv2d(x, w, pad, stride):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, f, oh, ow), x.dtype)
    for ky in range(kh):
        for kx in range(kw):
            window = xp[:, :, ky : ky + stride * oh : stride, kx : kx + stride * ow : stride]
            out += np.einsum("nchw,fc->nfhw", window, w[:, :, ky, kx])
    return out


@pytest.mark.parametrize("pad, stride, fused", [(1, 1, False), (2, 2, False), (1, 2, True)])
def test_conv2d_with_padding(pad, stride, fused, rng):
    N, C, H, W, F, K = 2, 3, 9, 7, 4, 3
    X = te.placeholder((N, C, H, W), "float32", name="X")
    Wt = te.placeholder((F, C, K, K), "float32", name="W")
    OH, OW = (H + 2 * pad - K) // stride + 1, (W + 2 * pad - K) // stride + 1
    rc, ry, rx = (te.reduce_axis((0, e), name=n) for e, n in ((C, "rc"), (K, "ry"), (K, "rx")))

    def padded(n, c, h, w):  # h, w index the padded image
        inside = te.all(h >= pad, h < H + pad, w >= pad, w < W + pad)
        return te.if_then_else(inside, X[n, c, h - pad, w - pad], 0.0)

    if fused:  # padding inside the reduction: masked reads on the reduce grid
        Y = te.compute(
            (N, F, OH, OW),
            lambda n, f, y, x: te.sum(
                padded(n, rc, y * stride + ry, x * stride + rx) * Wt[f, rc, ry, rx],
                axis=[rc, ry, rx],
            ),
            name="Y",
        )
    else:
        P = te.compute((N, C, H + 2 * pad, W + 2 * pad), padded, name="P")
        Y = te.compute(
            (N, F, OH, OW),
            lambda n, f, y, x: te.sum(
                P[n, rc, y * stride + ry, x * stride + rx] * Wt[f, rc, ry, rx], axis=[rc, ry, rx]
            ),
            name="Y",
        )
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((F, C, K, K)).astype(np.float32)
    (y,) = run([X, Wt, Y], x, w)
    np.testing.assert_allclose(y, numpy_conv2d(x, w, pad, stride), rtol=1e-5, atol=1e-5)


def test_softmax_multi_stage(rng):
    M, N = 7, 13
    X = te.placeholder((M, N), "float32", name="X")
    k1 = te.reduce_axis((0, N), name="k")
    mx = te.compute((M,), lambda i: te.max(X[i, k1], axis=k1), name="mx")
    e = te.compute((M, N), lambda i, j: te.exp(X[i, j] - mx[i]), name="e")
    k2 = te.reduce_axis((0, N), name="k")
    total = te.compute((M,), lambda i: te.sum(e[i, k2], axis=k2), name="total")
    out = te.compute((M, N), lambda i, j: e[i, j] / total[i], name="out")
    x = (rng.standard_normal((M, N)) * 10).astype(np.float32)
    (y,) = run([X, out], x)
    z = np.exp(x - x.max(1, keepdims=True))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, z / z.sum(1, keepdims=True), rtol=1e-5)


def test_integer_matmul_and_wraparound(rng):
    A = te.placeholder((5, 6), "int32", name="A")
    B = te.placeholder((6, 4), "int32", name="B")
    k = te.reduce_axis((0, 6), name="k")
    C = te.compute((5, 4), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    a = rng.integers(-100, 100, (5, 6)).astype(np.int32)
    b = rng.integers(-100, 100, (6, 4)).astype(np.int32)
    (c,) = run([A, B, C], a, b)
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, a @ b)
    # int8 arithmetic wraps, as the machine does; a sum of int8 stays int8.
    X = te.placeholder((4,), "int8", name="X")
    Y = te.compute((4,), lambda i: X[i] * 2 + 100, name="Y")
    r = te.reduce_axis((0, 4), name="r")
    S = te.compute((1,), lambda z: te.sum(X[r], axis=r), name="S")
    x = np.array([100, -100, 27, 127], np.int8)
    y, s = run([X, Y, S], x)
    assert y.dtype == np.int8 and s.dtype == np.int8
    np.testing.assert_array_equal(y, (x.astype(np.int64) * 2 + 100).astype(np.int8))
    np.testing.assert_array_equal(s, [x.astype(np.int64).sum().astype(np.int8)])


def test_floor_and_truncated_division_and_modulo():
    A = te.placeholder((8,), "int32", name="A")
    B = te.placeholder((8,), "int32", name="B")
    Q = te.compute((8,), lambda i: A[i] // B[i], name="Q")
    R = te.compute((8,), lambda i: A[i] % B[i], name="R")
    TQ = te.compute((8,), lambda i: truncdiv(A[i], B[i]), name="TQ")
    TR = te.compute((8,), lambda i: truncmod(A[i], B[i]), name="TR")
    a = np.array([7, -7, 7, -7, 0, 1, -1, 9], np.int32)
    b = np.array([2, 2, -2, -2, 3, 5, 5, 3], np.int32)
    q, r, tq, tr = run([A, B, Q, R, TQ, TR], a, b)
    np.testing.assert_array_equal(q, a // b)  # `//` rounds down, as in Python and TVM
    np.testing.assert_array_equal(r, a % b)  # `%` takes the divisor's sign
    np.testing.assert_array_equal(tq, np.trunc(a / b).astype(np.int32))
    np.testing.assert_array_equal(tr, np.fmod(a, b))  # truncmod takes the dividend's sign
    np.testing.assert_array_equal(q * b + r, a)
    np.testing.assert_array_equal(tq * b + tr, a)


def test_integer_division_by_zero_is_zero():
    """numpy's convention: x // 0 == x % 0 == 0, and MIN // -1 wraps to MIN."""
    A = te.placeholder((4,), "int32", name="A")
    B = te.placeholder((4,), "int32", name="B")
    outs = [te.compute((4,), lambda i, f=f: f(A[i], B[i]), name=n) for n, f in
            {"Q": floordiv, "R": floormod, "TQ": truncdiv, "TR": truncmod}.items()]
    a = np.array([5, -5, 0, -(2**31)], np.int32)
    b = np.array([0, 0, 0, -1], np.int32)
    q, r, tq, tr = run([A, B, *outs], a, b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)
    np.testing.assert_array_equal(q, [0, 0, 0, -(2**31)])
    np.testing.assert_array_equal(tq, [0, 0, 0, -(2**31)])
    np.testing.assert_array_equal(r, [0, 0, 0, 0])
    np.testing.assert_array_equal(tr, [0, 0, 0, 0])


def test_negative_index_arithmetic_is_floor():
    """`(i - 1) % 4` is 3 at i = 0, so it reads the last element (TVM and Python)."""
    X = te.placeholder((4,), "float32", name="X")
    Y = te.compute((6,), lambda i: X[(i - 1) % 4] + X[(i - 5) // 2 + 3], name="Y")
    x = np.arange(4, dtype=np.float32) * 10
    (y,) = run([X, Y], x)
    i = np.arange(6)
    np.testing.assert_array_equal(y, x[(i - 1) % 4] + x[(i - 5) // 2 + 3])


def test_index_arithmetic_and_index_values():
    X = te.placeholder((10,), "float32", name="X")
    Y = te.compute((5, 4), lambda i, j: X[(i * 2 + j) % 10] + (i - j).astype("float32"), name="Y")
    x = np.arange(10, dtype=np.float32) * 10
    (y,) = run([X, Y], x)
    i, j = np.indices((5, 4))
    np.testing.assert_array_equal(y, x[(i * 2 + j) % 10] + (i - j))


def test_casts_follow_numpy():
    X = te.placeholder((6,), "float32", name="X")
    T = te.compute((6,), lambda i: X[i].astype("int32"), name="T")
    Bo = te.compute((6,), lambda i: X[i].astype("bool").astype("int8"), name="Bo")
    G = te.compute((6,), lambda i: (X[i] > 0.0).astype("float64") + X[i].astype("float64"), name="G")
    x = np.array([-2.7, -0.5, 0, 0.5, 2.7, 3], np.float32)
    t, bo, g = run([X, T, Bo, G], x)
    np.testing.assert_array_equal(t, x.astype(np.int32))
    np.testing.assert_array_equal(bo, x.astype(bool).astype(np.int8))
    np.testing.assert_array_equal(g, (x > 0).astype(np.float64) + x.astype(np.float64))


def test_nan_comparisons_and_maximum():
    X = te.placeholder((3,), "float32", name="X")
    Y = te.placeholder((3,), "float32", name="Y")
    lt = te.compute((3,), lambda i: (X[i] < Y[i]).astype("int32"), name="lt")
    ne = te.compute((3,), lambda i: (X[i] != Y[i]).astype("int32"), name="ne")
    mx = te.compute((3,), lambda i: te.maximum(X[i], Y[i]), name="mx")
    x = np.array([1.0, np.nan, 3.0], np.float32)
    y = np.array([2.0, 1.0, np.nan], np.float32)
    r_lt, r_ne, r_mx = run([X, Y, lt, ne, mx], x, y)
    np.testing.assert_array_equal(r_lt, (x < y).astype(np.int32))
    np.testing.assert_array_equal(r_ne, (x != y).astype(np.int32))
    np.testing.assert_array_equal(r_mx, np.maximum(x, y))


def test_math_functions():
    X = te.placeholder((5,), "float32", name="X")
    fns = {"exp": np.exp, "tanh": np.tanh, "abs": np.abs, "sigmoid": lambda v: 1 / (1 + np.exp(-v))}
    outs = [te.compute((5,), lambda i, f=f: getattr(te, f)(X[i]), name=f) for f in fns]
    Er = te.compute((5,), lambda i: te.erf(X[i]), name="erf")
    Sq = te.compute((5,), lambda i: te.sqrt(te.abs(X[i])) + te.log(te.abs(X[i]) + 1.0), name="sq")
    x = np.array([-2.0, -0.3, 0.0, 0.7, 3.0], np.float32)
    results = run([X, *outs, Er, Sq], x)
    for (name, fn), r in zip(fns.items(), results):
        assert r.dtype == np.float32
        np.testing.assert_allclose(r, fn(x), rtol=1e-6, err_msg=name)
    import math

    np.testing.assert_allclose(results[-2], [math.erf(v) for v in x], rtol=1e-6)
    np.testing.assert_allclose(results[-1], np.sqrt(np.abs(x)) + np.log(np.abs(x) + 1), rtol=1e-6)


def test_schedule_is_ignored(rng):
    A = te.placeholder((32, 16), "float32", name="A")
    B = te.compute((32, 16), lambda i, j: A[i, j] * 2.0, name="B")
    s = te.create_schedule(B)
    o, n = s[B].split(B.op.axis[0], factor=5)
    s[B].parallel(o)
    a = rng.standard_normal((32, 16)).astype(np.float32)
    np.testing.assert_array_equal(run([A, B], a, schedule=s)[0], run([A, B], a)[0])


def test_chunked_reduction_matches(monkeypatch, rng):
    A = te.placeholder((9, 50), "float32", name="A")
    B = te.placeholder((50, 7), "float32", name="B")
    k = te.reduce_axis((3, 50), name="k")  # a reduce range not starting at 0
    C = te.compute((9, 7), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    M = te.compute((9,), lambda i: te.max(A[i, k], axis=k), name="M")
    a = rng.standard_normal((9, 50)).astype(np.float64)
    b = rng.standard_normal((50, 7)).astype(np.float64)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    whole = run([A, B, C, M], a32, b32)
    monkeypatch.setattr(reference, "CHUNK_ELEMENTS", 100)  # chunks of 1 or 2 rows of k
    chunked = run([A, B, C, M], a32, b32)
    for w, c in zip(whole, chunked):
        np.testing.assert_allclose(w, c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(chunked[0], a32[:, 3:] @ b32[3:], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(chunked[1], a32[:, 3:].max(1))


def test_term_independent_of_a_reduce_axis_counts_every_iteration():
    X = te.placeholder((4,), "float32", name="X")
    k = te.reduce_axis((0, 5), name="k")
    S = te.compute((4,), lambda i: te.sum(X[i], axis=k), name="S")
    (s,) = run([X, S], np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(s, np.arange(4) * 5)


def test_large_matmul_memory_is_bounded(rng):
    # 512^3: the whole grid would be 512 MiB of float32; chunks keep it at 32 MiB.
    n = 512
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    (c,) = run([A, B, C], a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)


# --- IR written by hand ----------------------------------------------------------------

OUT_OF_BOUNDS = """
func.func @f(%A: tensor<4xf32>) -> tensor<4xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    %a = te.read %A[%j] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %B : tensor<4xf32>
}
"""


def test_read_out_of_bounds_is_an_error():
    with pytest.raises(EvaluationError, match=r"te.read index 4 is out of bounds \[0, 4\)"):
        evaluate_module(parse_text(OUT_OF_BOUNDS), "f", [np.zeros(4, np.float32)])


UNKNOWN_OP = """
func.func @f(%A: tensor<4xf32>) -> tensor<4xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<4xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    %b = math.cbrt %a : f32
    te.yield %b : f32
  }
  func.return %B : tensor<4xf32>
}
"""


def test_unknown_op_is_named():
    with pytest.raises(EvaluationError, match="does not know 'math.cbrt'"):
        evaluate_module(parse_text(UNKNOWN_OP), "f", [np.zeros(4, np.float32)])


SIGNED_BITS = """
func.func @f(%A: tensor<4xi8>) -> tensor<4xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<4xf32> {
    %a = te.read %A[%i] : tensor<4xi8>
    %c0 = arith.constant 0 : i8
    %neg = arith.cmpi slt, %a, %c0 : i8
    %u = arith.cmpi ult, %a, %c0 : i8
    %x = arith.extui %a : i8 to i32
    %y = arith.sitofp %neg : i1 to f32
    %z = arith.uitofp %u : i1 to f32
    %w = arith.sitofp %x : i32 to f32
    %s1 = arith.addf %y, %z : f32
    %s2 = arith.addf %s1, %w : f32
    te.yield %s2 : f32
  }
  func.return %B : tensor<4xf32>
}
"""


def test_signedness_of_casts_and_predicates():
    a = np.array([-1, 0, 5, -128], np.int8)
    (b,) = evaluate_module(parse_text(SIGNED_BITS), "f", [a])
    neg = -(a < 0).astype(np.float32)  # sitofp of i1: true is -1
    ult = np.zeros(4, np.float32)  # nothing is unsigned-less than 0
    np.testing.assert_array_equal(b, neg + ult + a.view(np.uint8).astype(np.float32))


def test_input_checks():
    A = te.placeholder((4,), "float32", name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    module = te.build_module(None, [A, B])
    with pytest.raises(ValueError, match=r"must be a \(4,\) float32 array, not \(4,\) float64"):
        evaluate_module(module, "main", [np.zeros(4)])
    with pytest.raises(ValueError, match="takes 1 inputs, got 0"):
        evaluate_module(module, "main", [])
    with pytest.raises(ValueError, match="no function @nope"):
        evaluate_module(module, "nope", [np.zeros(4, np.float32)])
    func_op = next(iter(module.ops))
    np.testing.assert_array_equal(evaluate(func_op, [np.ones(4, np.float32)])[0], 2 * np.ones(4))


# --- properties --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 12),
    k=st.integers(1, 4),
    pad=st.integers(0, 3),
    stride=st.integers(1, 3),
    dilation=st.integers(1, 2),
)
def test_conv1d_any_padding_stride_dilation(n, k, pad, stride, dilation):
    span = dilation * (k - 1) + 1
    out = (n + 2 * pad - span) // stride + 1
    if out <= 0:
        return
    X = te.placeholder((n,), "float64", name="X")
    W = te.placeholder((k,), "float64", name="W")
    r = te.reduce_axis((0, k), name="r")

    def body(o):
        pos = o * stride + r * dilation - pad
        return te.sum(te.if_then_else((pos >= 0) & (pos < n), X[pos], 0.0) * W[r], axis=r)

    Y = te.compute((out,), body, name="Y")
    x = np.arange(1, n + 1, dtype=np.float64)
    w = np.arange(1, k + 1, dtype=np.float64) * 10
    (y,) = run([X, W, Y], x, w)
    xp = np.pad(x, pad)
    expected = [sum(xp[o * stride + t * dilation] * w[t] for t in range(k)) for o in range(out)]
    np.testing.assert_array_equal(y, expected)


@settings(max_examples=60, deadline=None)
@given(
    a=st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=8),
    b=st.lists(st.integers(-(2**31), 2**31 - 1).filter(lambda v: v != 0), min_size=1, max_size=8),
)
def test_int32_ops_match_numpy(a, b):
    size = min(len(a), len(b))
    av, bv = np.array(a[:size], np.int32), np.array(b[:size], np.int32)
    A = te.placeholder((size,), "int32", name="A")
    B = te.placeholder((size,), "int32", name="B")
    ops = {
        "add": lambda x, y: x + y,
        "mul": lambda x, y: x * y,
        "max": te.maximum,
        "lt": lambda x, y: (x < y).astype("int32"),
    }
    outs = [te.compute((size,), lambda i, f=f: f(A[i], B[i]), name=n) for n, f in ops.items()]
    results = run([A, B, *outs], av, bv)
    with np.errstate(over="ignore"):
        expected = [av + bv, av * bv, np.maximum(av, bv), (av < bv).astype(np.int32)]
    for r, e in zip(results, expected):
        np.testing.assert_array_equal(r, e)
    # Floor division and remainder agree where numpy's int32 does not overflow.
    safe = bv != -1
    if safe.any():
        Q = te.compute((size,), lambda i: A[i] // B[i], name="Q")
        R = te.compute((size,), lambda i: A[i] % B[i], name="R")
        q, r = run([A, B, Q, R], av, bv)
        np.testing.assert_array_equal(q[safe], (av // bv)[safe])
        np.testing.assert_array_equal(r[safe], (av % bv)[safe])
