"""Math functions in GPU kernels (`backends/nvptx/mathlib.py`): no libm, no
libdevice, so each is written out in arithmetic.

Here, without a GPU: every function's kernel compiles to PTX with no call in
it, and the same formulas, put in place of the CPU's in `backends/llvm/ops.py`'s
table and run on the CPU, agree with numpy to the CPU path's tolerances over
wide ranges and at the edges. On a GPU (marked `gpu`): the kernels themselves
against numpy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.backends.llvm import ops
from tilecraft.backends.nvptx.mathlib import GPU_HANDLERS
from tilecraft.utils.cuda_driver import device_present
from tilecraft.utils.diagnostics import OpError
from xdsl.dialects import math

NO_DEVICE = device_present()
needs_device = pytest.mark.skipif(NO_DEVICE is not None, reason=f"no CUDA device: {NO_DEVICE}")

UNARY = {
    "exp": (te.exp, np.exp, math.ExpOp),
    "log": (te.log, np.log, math.LogOp),
    "tanh": (te.tanh, np.tanh, math.TanhOp),
    "erf": (te.erf, None, math.ErfOp),
    "sigmoid": (te.sigmoid, lambda x: 1 / (1 + np.exp(-x)), math.ExpOp),
    "sqrt": (te.sqrt, np.sqrt, math.SqrtOp),
    "sin": (te.sin, np.sin, math.SinOp),
    "cos": (te.cos, np.cos, math.CosOp),
}
EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, 1e-38, 3e38, -3e38, 88.7, -103.0, 1 + 2**-23]


def _erf(x):
    import math as pymath

    return np.vectorize(pymath.erf)(x)


def _inputs(name: str, n: int = 4096) -> np.ndarray:
    rng = np.random.default_rng(7)
    if name in ("log", "sqrt"):  # positive over many decades, and some negatives
        body = np.concatenate([10.0 ** rng.uniform(-44, 38, n - 64), rng.uniform(-5, 5, 64)])
    elif name in ("sin", "cos"):  # the documented range of the reduction
        body = np.concatenate([rng.uniform(-8192, 8192, n // 2), rng.uniform(-7, 7, n - n // 2)])
    else:
        body = np.concatenate([rng.uniform(-110, 95, n // 2), rng.uniform(-5, 5, n - n // 2)])
    x = body.astype(np.float32)
    x[: len(EDGES)] = EDGES
    return x


def _expected(name: str, x: np.ndarray) -> np.ndarray:
    reference = _erf if name == "erf" else UNARY[name][1]
    with np.errstate(all="ignore"):
        expected = reference(x.astype(np.float64)).astype(np.float32)
    if name in ("sin", "cos"):  # beyond the reduction's reach: NaN, as documented
        expected[np.abs(x) >= 2**24] = np.nan
    return expected


def _check(name: str, got: np.ndarray, x: np.ndarray) -> None:
    expected = _expected(name, x)
    if name in ("sin", "cos"):  # an absolute error, from the reduction by pi/4
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=2e-6 if name == "sin" else 3e-6)
    else:  # the CPU path's tolerance (test_te_math.py), subnormal results aside
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-37)


def _power_inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(8)
    a = np.concatenate([10.0 ** rng.uniform(-6, 6, 2000), rng.uniform(-9, 9, 64)])
    b = np.concatenate([rng.uniform(-5, 5, 2000), np.round(rng.uniform(-6, 6, 64))])
    edges = [(-2.0, 3.0), (-2.0, 2.0), (-2.0, 0.5), (0.0, 2.0), (0.0, -1.0), (0.0, 0.0), (1.0, np.nan),
             (np.nan, 0.0), (np.inf, 2.0), (np.inf, -2.0), (2.0, 127.0), (2.0, -149.0), (-8.0, 1 / 3)]  # fmt: skip
    a[: len(edges)], b[: len(edges)] = zip(*edges)
    return a.astype(np.float32), b.astype(np.float32)


def _power_expected(a, b):
    with np.errstate(all="ignore"):
        return np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


def _cuda_build(f, arity: int, n: int, block: int = 64):
    args = [te.placeholder((n,), "float32", name=f"x{i}") for i in range(arity)]
    y = te.compute((n,), lambda i: f(*(a[i] for a in args)), name="y")
    s = te.create_schedule(y)
    bx, tx = s[y].split(y.op.axis[0], factor=block)
    s[y].bind(bx, te.thread_axis("blockIdx.x"))
    s[y].bind(tx, te.thread_axis("threadIdx.x"))
    return tc.build(s, [*args, y], target="cuda -arch=sm_90")


def _cpu_build_with_gpu_math(f, arity: int, n: int, monkeypatch):
    """The CPU build, its math table holding the GPU's formulas."""
    for op, handler in GPU_HANDLERS.items():
        monkeypatch.setitem(ops.HANDLERS, op, handler)
    args = [te.placeholder((n,), "float32", name=f"x{i}") for i in range(arity)]
    y = te.compute((n,), lambda i: f(*(a[i] for a in args)), name="y")
    s = te.create_schedule(y)
    _, inner = s[y].split(y.op.axis[0], factor=4)  # vectors of 4, as a GPU thread's widest
    s[y].vectorize(inner)
    built = tc.build(s, [*args, y], target="llvm")
    calls = re.findall(r"call [^(]*(@[\w.]+)", built.get_source("ll"))
    libm = [c for c in calls if not c.startswith("@llvm.") or re.match(r"@llvm\.(exp|log|sin|cos|pow|tanh)", c)]
    assert not libm, f"the CPU's math is still called: {libm}"
    return built


# -- compiling, no GPU needed ---------------------------------------------------------


@pytest.mark.parametrize("name", [*UNARY, "pow"])
def test_math_kernel_ptx_calls_nothing(name):
    f = _cuda_build(te.power, 2, 1000) if name == "pow" else _cuda_build(UNARY[name][0], 1, 1000)
    ptx = f.get_source("ptx")
    assert ".entry main_kernel0" in ptx
    assert not re.search(r"\bcall\b|\.extern", ptx), "a math function called out of the kernel"


def test_vectorized_math_kernel_ptx_calls_nothing():
    A = te.placeholder((1024,), "float32", name="A")
    C = te.compute((1024,), lambda i: te.log(A[i]) + te.sin(A[i]), name="C")
    s = te.create_schedule(C)
    bx, rest = s[C].split(C.op.axis[0], factor=256)
    tx, v = s[C].split(rest, factor=4)
    s[C].bind(bx, te.thread_axis("blockIdx.x"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    s[C].vectorize(v)
    ptx = tc.build(s, [A, C], target="cuda").get_source("ptx")
    assert re.search(r"st\.global\.v4\.(f32|b32)", ptx)  # the vector code went through the formulas
    assert not re.search(r"\bcall\b", ptx)


@pytest.mark.parametrize("f", [te.exp, te.log, te.tanh, te.sin])
def test_f64_math_in_a_kernel_is_an_error_at_the_op(f):
    A = te.placeholder((64,), "float64", name="A")
    C = te.compute((64,), lambda i: f(A[i]), name="C")
    s = te.create_schedule(C)
    s[C].bind(C.op.axis[0], te.thread_axis("threadIdx.x"))
    with pytest.raises(
        OpError,
        match=r"on f64 has no GPU lowering yet .*written out for f32 only\): compute it in f32, where .*exp.*log",
    ):
        tc.build(s, [A, C], target="cuda")


def test_tan_in_a_kernel_is_an_error_at_the_op():
    A = te.placeholder((64,), "float32", name="A")
    C = te.compute((64,), lambda i: te.tan(A[i]), name="C")
    s = te.create_schedule(C)
    s[C].bind(C.op.axis[0], te.thread_axis("threadIdx.x"))
    with pytest.raises(OpError, match=r"'math.tan' on f32 has no GPU lowering yet .*it is not written out"):
        tc.build(s, [A, C], target="cuda")


@pytest.mark.parametrize("name", UNARY)
def test_gpu_math_formulas_run_on_the_cpu_match_numpy(name, monkeypatch):
    x = _inputs(name)
    f = _cpu_build_with_gpu_math(UNARY[name][0], 1, len(x), monkeypatch)
    y = np.empty_like(x)
    f(x, y)
    _check(name, y, x)


def test_gpu_pow_formula_run_on_the_cpu_matches_numpy(monkeypatch):
    a, b = _power_inputs()
    f = _cpu_build_with_gpu_math(te.power, 2, len(a), monkeypatch)
    y = np.empty_like(a)
    f(a, b, y)
    np.testing.assert_allclose(y, _power_expected(a, b), rtol=1e-5, atol=1e-37)


# -- running, on a GPU ----------------------------------------------------------------


@pytest.mark.gpu
@needs_device
@pytest.mark.parametrize("name", UNARY)
def test_math_on_the_gpu_matches_numpy(name):
    x = _inputs(name)
    f = _cuda_build(UNARY[name][0], 1, len(x), block=128)
    dev = tc.cuda(0)
    X, Y = tc.nd.array(x, dev), tc.nd.empty(x.shape, "float32", dev)
    f(X, Y)
    _check(name, Y.numpy(), x)


@pytest.mark.gpu
@needs_device
def test_pow_on_the_gpu_matches_numpy():
    a, b = _power_inputs()
    f = _cuda_build(te.power, 2, len(a), block=128)
    dev = tc.cuda(0)
    A, B, Y = tc.nd.array(a, dev), tc.nd.array(b, dev), tc.nd.empty(a.shape, "float32", dev)
    f(A, B, Y)
    np.testing.assert_allclose(Y.numpy(), _power_expected(a, b), rtol=1e-5, atol=1e-37)
