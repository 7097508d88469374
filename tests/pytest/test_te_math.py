"""te's math functions in TVM's spelling (te.sin ... te.round, te.power, te.fmod):
built with tc.build under a vectorized schedule and compared with numpy; the
reference evaluator agrees; integer operands are refused with a message."""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.backends.reference import evaluate_module
from tilecraft.driver.context import parse_text

UNARY = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil, "round": np.rint,
}  # fmt: skip


def _build(f, dtype: str, arity: int):
    n = 70  # a 64-lane body and a tail
    args = [te.placeholder((n,), dtype, name=f"x{i}") for i in range(arity)]
    y = te.compute((n,), lambda i: f(*(a[i] for a in args)), name="y")
    s = te.create_schedule(y)
    s[y].vectorize(y.op.axis[0])
    return tc.build(s, [*args, y], target="llvm"), te.build_module(s, [*args, y], name="main")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-3, 3, 64), [np.nan, np.inf, -np.inf, 0.5, 2.5, -1.5]]).astype(dtype)
    f, module = _build(getattr(te, name), dtype, 1)
    y = np.empty_like(x)
    f(x, y)
    with np.errstate(all="ignore"):
        expected = UNARY[name](x)
    np.testing.assert_allclose(y, expected, rtol=2e-6 if dtype == "float32" else 1e-14)
    (reference,) = evaluate_module(parse_text(str(module)), "main", [x])
    np.testing.assert_allclose(reference, expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_power_and_fmod(dtype):
    rng = np.random.default_rng(2)
    a = np.concatenate([rng.uniform(-9, 9, 64), [-2.0, 0.0, 1.0, np.inf, 1e30, -8.0]]).astype(dtype)
    b = np.concatenate([rng.uniform(-3, 3, 64), [3.0, 0.0, np.nan, 0.0, 3.0, 1 / 3]]).astype(dtype)
    with np.errstate(all="ignore"):
        for f, expected in ((te.power, np.power(a, b)), (te.fmod, np.fmod(a, b))):
            built, _ = _build(f, dtype, 2)
            y = np.empty_like(a)
            built(a, b, y)
            np.testing.assert_allclose(y, expected, rtol=1e-5 if dtype == "float32" else 1e-13)


def test_integer_operands_are_refused():
    i = te.placeholder((4,), "int32", name="i")
    with pytest.raises(ValueError, match="te.sin needs a float operand, not int32"):
        te.compute((4,), lambda k: te.sin(i[k]))
    with pytest.raises(ValueError, match="te.power needs float operands, not int32"):
        te.compute((4,), lambda k: te.power(i[k], i[k]))
    with pytest.raises(ValueError, match="te.fmod needs float operands, not int32"):
        te.compute((4,), lambda k: te.fmod(i[k], 2))
