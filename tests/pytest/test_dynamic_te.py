"""te functions with `te.var` sizes built once for every size: the sizes are
`?`s of the IR, read from the arrays when the function runs, and no call
compiles anything (`modules_built` does not move). Results against numpy at
sizes 1, primes and multiples of the split factor +-1; schedules that split,
parallelize, vectorize the static inner part and compute at a loop; sizes in
body expressions and reduce ranges; what cannot be built for every size yet is
compiled per size, and says why."""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.backends.llvm.compile import modules_built

SIZES = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 64, 97]


def _uniform(*shape):
    return np.random.default_rng(sum(shape)).uniform(-1, 1, shape).astype("float32")


def _check_once(f, cases, reference):
    """Every case through `f`, against `reference`, with nothing compiled."""
    assert f._build.symbolic is not None, f._build.why_specialized
    before = modules_built()
    for arrays in cases:
        out = np.zeros_like(reference(*arrays))
        f(*arrays, out)
        np.testing.assert_allclose(out, reference(*arrays), rtol=1e-5, atol=1e-6)
    assert modules_built() == before


def test_split_parallel_vectorized_elementwise():
    n = te.var("n")
    A = te.placeholder((n, 12), name="A")
    B = te.placeholder((n, 12), name="B")
    C = te.compute((n, 12), lambda i, j: A[i, j] * B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    io, ii = s[C].split(C.op.axis[0], factor=8)
    s[C].parallel(io)
    s[C].vectorize(C.op.axis[1])
    f = tc.build(s, [A, B, C])
    _check_once(f, [(_uniform(m, 12), _uniform(m, 12)) for m in SIZES], lambda a, b: a * b + 1.0)


def test_two_sizes_a_producer_and_a_reduction():
    # A row-wise dense layer over a symbolic batch: an intermediate stage (a
    # buffer allocated with a `?` size), a static reduction, a symbolic m.
    m, k = te.var("m"), 24
    X = te.placeholder((m, k), name="X")
    W = te.placeholder((16, k), name="W")
    r = te.reduce_axis((0, k), name="r")
    Y = te.compute((m, k), lambda i, j: X[i, j] * 0.5, name="Y")
    Z = te.compute((m, 16), lambda i, j: te.sum(Y[i, r] * W[j, r], axis=r), name="Z")
    s = te.create_schedule(Z.op)
    s[Z].parallel(Z.op.axis[0])
    f = tc.build(s, [X, W, Z])
    w = _uniform(16, k)
    cases = [(_uniform(size, k), w) for size in SIZES]
    _check_once(f, cases, lambda x, w_: (x * 0.5) @ w_.T)


def test_compute_at_a_loop_over_a_symbolic_axis():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] + 2.0, name="B")
    C = te.compute((m, n), lambda i, j: B[i, j] * 3.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_at(s[C], C.op.axis[0])
    f = tc.build(s, [A, C])
    _check_once(f, [(_uniform(rows, cols),) for rows, cols in [(1, 1), (4, 5), (9, 33)]], lambda a: (a + 2) * 3)


def test_sizes_of_expressions():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n - 2,), lambda i: A[i] + A[i + 2], name="B")
    s = te.create_schedule(B.op)
    f = tc.build(s, [A, B])
    _check_once(f, [(_uniform(size),) for size in (3, 4, 10, 65)], lambda a: a[:-2] + a[2:])
    with pytest.raises(ValueError, match=r"dimension 0 of B must be \(n - 2\) = 8, got 5"):
        f(_uniform(10), np.zeros(5, "float32"))


def test_lower_shows_the_ir_for_every_size():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    s[B].split(B.op.axis[0], factor=4)
    text = tc.lower(s, [A, B])
    assert 'memref<?xf32> {tc.name = "A", tc.dims = ["n"]}' in text
    assert "memref.dim %A" in text and "arith.floordivsi" in text and "loop.guard" in text
    specialized = tc.lower(s, [A, B], sizes={"n": 12})
    assert specialized.startswith("// te.var sizes shown specialized to n = 12")
    assert "memref<12xf32>" in specialized


def test_bad_sizes_name_the_argument():
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j], name="B")
    f = tc.build(te.create_schedule(B.op), [A, B])
    with pytest.raises(ValueError, match=r"size n is 3 \(from dimension 0 of A\) but dimension 0 of B is 2"):
        f(_uniform(3, 4), np.zeros((2, 4), "float32"))
    with pytest.raises(ValueError, match=r"dimension 1 of A must be 4, got 5"):
        f(_uniform(3, 5), np.zeros((3, 5), "float32"))


def test_vectorizing_a_symbolic_axis_is_compiled_per_size():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    s = te.create_schedule(B.op)
    s[B].vectorize(B.op.axis[0])
    f = tc.build(s, [A, B])
    assert f._build.symbolic is None
    assert "a vectorized loop needs a static extent" in f._build.why_specialized
    a = _uniform(5)
    b = np.zeros(5, "float32")
    f(a, b)
    np.testing.assert_allclose(b, a + 1.0)


def test_sizes_in_expressions_and_reduce_ranges():
    # A row-normalization over a symbolic row length: a reduction to n and n itself
    # in an expression (`te.size`, read from the argument like the loop bounds).
    n = te.var("n")
    A = te.placeholder((4, n), name="A")
    k = te.reduce_axis((0, n), name="k")
    S = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="S")
    B = te.compute((4, n), lambda i, j: A[i, j] / S[i] + n.astype("float32"), name="B")
    f = tc.build(te.create_schedule(B.op), [A, B])
    cases = [(_uniform(4, size) + 2.0,) for size in (1, 5, 33)]
    _check_once(f, cases, lambda a: a / a.sum(1, keepdims=True) + a.shape[1])


def test_a_reduction_starting_at_a_size_is_compiled_per_size():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((n - 2, n), name="k")
    B = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="B")
    f = tc.build(te.create_schedule(B.op), [A, B])
    assert "starts at n - 2" in f._build.why_specialized
    for size in (2, 3):
        a, b = _uniform(size), np.zeros(1, "float32")
        f(a, b)
        np.testing.assert_allclose(b, a[-2:].sum(), rtol=1e-6)
