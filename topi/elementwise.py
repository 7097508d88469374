"""Elementwise and broadcast computes: unary math, arithmetic with numpy
broadcasting, comparisons, where, clip, cast, gelu.

Each returns one `te.compute` over the output shape; the default schedule inlines
them into whatever consumes them, so a chain of them becomes one loop body.
"""

from __future__ import annotations

import math

import numpy as np
from collections.abc import Callable

from tilecraft.frontends import te
from tilecraft.frontends.te.expr import truncmod
from tilecraft.topi.common import broadcast_read, broadcast_shape, is_float


def _map(x: te.Tensor, f: Callable[[te.Expr], te.Expr], name: str) -> te.Tensor:
    return te.compute(x.shape, lambda *i: f(x[i]), name=name)


def relu(x: te.Tensor) -> te.Tensor:
    zero = 0.0 if is_float(x.dtype) else 0
    return _map(x, lambda v: te.maximum(v, zero), "relu")


def sigmoid(x: te.Tensor) -> te.Tensor:
    return _map(x, te.sigmoid, "sigmoid")


def tanh(x: te.Tensor) -> te.Tensor:
    return _map(x, te.tanh, "tanh")


def erf(x: te.Tensor) -> te.Tensor:
    return _map(x, te.erf, "erf")


def exp(x: te.Tensor) -> te.Tensor:
    return _map(x, te.exp, "exp")


def log(x: te.Tensor) -> te.Tensor:
    return _map(x, te.log, "log")


def sqrt(x: te.Tensor) -> te.Tensor:
    return _map(x, te.sqrt, "sqrt")


def negative(x: te.Tensor) -> te.Tensor:
    return _map(x, lambda v: -v, "neg")


def abs(x: te.Tensor) -> te.Tensor:  # noqa: A001 - the op's name
    return _map(x, te.abs, "abs")


def gelu(x: te.Tensor, approximate: str = "none") -> te.Tensor:
    """x * Phi(x): with erf ("none"), or the tanh approximation ("tanh")."""
    if approximate == "tanh":
        c = math.sqrt(2.0 / math.pi)
        return _map(
            x, lambda v: 0.5 * v * (1.0 + te.tanh(c * (v + 0.044715 * v * v * v))), "gelu"
        )
    if approximate != "none":
        raise ValueError(f"gelu approximate must be 'none' or 'tanh', not {approximate!r}")
    return _map(x, lambda v: 0.5 * v * (1.0 + te.erf(v * (1.0 / math.sqrt(2.0)))), "gelu")


def clip(x: te.Tensor, lo: float | None = None, hi: float | None = None) -> te.Tensor:
    def f(v):
        if lo is not None:
            v = te.maximum(v, _literal(lo, x.dtype))
        if hi is not None:
            v = te.minimum(v, _literal(hi, x.dtype))
        return v

    return _map(x, f, "clip")


def _literal(value: float, dtype: str):
    return float(value) if is_float(dtype) else int(value)


def cast(x: te.Tensor, dtype: str) -> te.Tensor:
    return _map(x, lambda v: v.astype(dtype), "cast")


def requantize(x: te.Tensor, shift: int, dtype: str) -> te.Tensor:
    """graph.requantize: round x / 2^shift half up, clip to `dtype`'s range, cast."""
    info = np.iinfo(np.dtype(dtype))

    def f(v):
        if shift:
            v = (v + (1 << (shift - 1))) // (1 << shift)
        return te.minimum(te.maximum(v, max(info.min, _int_min(x.dtype))), min(info.max, _int_max(x.dtype))).astype(dtype)

    return _map(x, f, "requantize")


def _int_min(dtype: str) -> int:
    return int(np.iinfo(np.dtype(dtype)).min)


def _int_max(dtype: str) -> int:
    return int(np.iinfo(np.dtype(dtype)).max)


def bitcast(x: te.Tensor, dtype: str) -> te.Tensor:
    return _map(x, lambda v: te.reinterpret(v, dtype), "bitcast")


def broadcast_map(
    f: Callable[..., te.Expr], *xs: te.Tensor, name: str = "elemwise"
) -> te.Tensor:
    """f applied to the elements of `xs` under numpy broadcasting."""
    shape = broadcast_shape(*(x.shape for x in xs))
    rank = len(shape)
    return te.compute(shape, lambda *i: f(*(broadcast_read(x, i, rank) for x in xs)), name=name)


def add(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    return broadcast_map(lambda x, y: x + y, a, b, name="add")


def subtract(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    return broadcast_map(lambda x, y: x - y, a, b, name="sub")


def multiply(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    return broadcast_map(lambda x, y: x * y, a, b, name="mul")


def divide(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    if is_float(a.dtype):
        return broadcast_map(lambda x, y: x / y, a, b, name="div")
    # ONNX Div on integers truncates toward zero; te's // floors, so fix the sign.
    def trunc_div(x, y):
        q = x // y
        fix = ((x % y) != 0) & ((x < 0) != (y < 0))
        return te.if_then_else(fix, q + 1, q)

    return broadcast_map(trunc_div, a, b, name="div")


def power(a: te.Tensor, b: te.Tensor, exponent: float | None = None) -> te.Tensor:
    """a ** b; a known small integer `exponent` (a constant b) becomes products."""
    if exponent is not None and float(exponent).is_integer() and 0 <= exponent <= 4:
        n = int(exponent)

        def ipow(x, y):
            if n == 0:
                return te.const(_literal(1, a.dtype), a.dtype)
            r = x
            for _ in range(n - 1):
                r = r * x
            return r

        return broadcast_map(ipow, a, b, name="pow")
    if exponent == 0.5:
        return broadcast_map(lambda x, y: te.sqrt(x), a, b, name="pow")
    if not is_float(a.dtype):
        return broadcast_map(lambda x, y: integer_power(x, y, a.dtype), a, b, name="pow")
    if exponent is not None and not float(exponent).is_integer() and a.dtype == "float32":
        # A constant fractional exponent (LRN's 0.75): exp(y * log(x)), which stays a
        # vector (mathfuncs.exp_f32), NaN for a negative x as pow is.
        return broadcast_map(lambda x, y: te.exp(y * te.log(x)), a, b, name="pow")
    # C's pow (math.powf; numpy's for floats): negative bases with integral
    # exponents, 0 ** 0 = 1, 1 ** NaN = 1...
    return broadcast_map(te.power, a, b, name="pow")


def integer_power(x: te.Expr, y: te.Expr, dtype: str) -> te.Expr:
    """x ** y of integers by repeated squaring over every bit of y (the products
    wrap, as numpy's). A negative y gives the exact power truncated toward zero:
    1 for x = 1, +-1 for x = -1 (by y's parity), and 0 otherwise, x = 0 included
    (numpy raises there; onnxruntime truncates 1 / x ** -y the same way)."""
    width = int(dtype.removeprefix("int"))
    zero, one, two = (te.const(v, dtype) for v in (0, 1, 2))
    e = te.maximum(y, zero)
    result, square = one, x
    for bit in range(width - 1):  # y >= 0 has width - 1 value bits
        odd = e % two  # 0 or 1
        result = result * (one + odd * (square - one))  # * square where the bit is set
        if bit < width - 2:
            square = square * square
            e = e // two
    minus_one_power = one - two * (y % two)  # (-1) ** y: 1 or -1
    tiny = te.if_then_else(x == one, one, te.if_then_else(x == -one, minus_one_power, zero))
    return te.if_then_else(y < zero, tiny, result)


def maximum(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    return broadcast_map(te.maximum, a, b, name="maximum")


def minimum(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    return broadcast_map(te.minimum, a, b, name="minimum")


_COMPARES = {
    "less": lambda x, y: x < y,
    "less_equal": lambda x, y: x <= y,
    "greater": lambda x, y: x > y,
    "greater_equal": lambda x, y: x >= y,
    "equal": lambda x, y: x == y,
    "not_equal": lambda x, y: x != y,
}


def compare(kind: str, a: te.Tensor, b: te.Tensor) -> te.Tensor:
    """A bool tensor: `kind` is less, less_equal, greater, greater_equal, equal, not_equal."""
    return broadcast_map(_COMPARES[kind], a, b, name=kind)


def where(cond: te.Tensor, a: te.Tensor, b: te.Tensor) -> te.Tensor:
    return broadcast_map(te.if_then_else, cond, a, b, name="where")


def broadcast_to(x: te.Tensor, shape) -> te.Tensor:
    """`x` broadcast to `shape` (the broadcast of both, as ONNX Expand)."""
    out = broadcast_shape(x.shape, tuple(shape))
    return te.compute(out, lambda *i: broadcast_read(x, i, len(out)), name="broadcast_to")


# -- bitwise logic and integer mod (graph.bitwise_*, graph.mod) -------------------------
# te has & and | on integers and bools; xor and not are written with them exactly:
# a ^ b = (a | b) - (a & b) (the two never share a bit, so no carry), ~a = -a - 1
# (two's complement, wrapping); on bools, a ^ b = a != b and not a = a == false.


def bitwise_and(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    return broadcast_map(lambda x, y: x & y, a, b, name="bitwise_and")


def bitwise_or(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    return broadcast_map(lambda x, y: x | y, a, b, name="bitwise_or")


def bitwise_xor(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    if a.dtype == "bool":
        return broadcast_map(lambda x, y: x != y, a, b, name="bitwise_xor")
    return broadcast_map(lambda x, y: (x | y) - (x & y), a, b, name="bitwise_xor")


def bitwise_not(x: te.Tensor) -> te.Tensor:
    if x.dtype == "bool":
        return _map(x, lambda v: v == te.const(False, "bool"), "bitwise_not")
    return _map(x, lambda v: te.const(0, x.dtype) - v - te.const(1, x.dtype), "bitwise_not")


def mod(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    """Integer remainder with the divisor's sign (numpy's %): a - floor(a / b) * b.
    A divisor of 0 gives 0 (numpy's choice), as does -1 (also where the division
    itself would overflow: INT_MIN // -1); neither is ever divided by. Floats: see
    `float_mod`."""
    if is_float(a.dtype):
        return float_mod(a, b)
    if a.dtype == "bool":
        raise ValueError(f"mod of {a.dtype} elements is not supported (integers or floats)")

    def floor_mod(x, y):
        zero, one = te.const(0, a.dtype), te.const(1, a.dtype)
        trivial = (y == zero) | (y == te.const(-1, a.dtype))
        d = te.if_then_else(trivial, one, y)
        return te.if_then_else(trivial, zero, x - (x // d) * d)

    return broadcast_map(floor_mod, a, b, name="mod")


# -- unary math, fmod, float mod (graph.sin ... graph.round, graph.fmod, graph.mod) ------


def _float_map(f: Callable[[te.Expr], te.Expr], name: str) -> Callable[[te.Tensor], te.Tensor]:
    def compute(x: te.Tensor) -> te.Tensor:
        return _map(x, f, name)

    compute.__name__ = name
    return compute


sin = _float_map(te.sin, "sin")
cos = _float_map(te.cos, "cos")
tan = _float_map(te.tan, "tan")
asin = _float_map(te.asin, "asin")
acos = _float_map(te.acos, "acos")
atan = _float_map(te.atan, "atan")
sinh = _float_map(te.sinh, "sinh")
cosh = _float_map(te.cosh, "cosh")
asinh = _float_map(te.asinh, "asinh")
acosh = _float_map(te.acosh, "acosh")
atanh = _float_map(te.atanh, "atanh")
floor = _float_map(te.floor, "floor")
ceil = _float_map(te.ceil, "ceil")
round_even = _float_map(te.round, "round")


def fmod(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    """The remainder with the dividend's sign (C's fmod, numpy's fmod). Integers:
    te's truncmod (a zero divisor gives 0, as numpy)."""
    if a.dtype == "bool":
        raise ValueError("fmod of bool elements is not supported (integers or floats)")
    f = te.fmod if is_float(a.dtype) else truncmod
    return broadcast_map(f, a, b, name="fmod")


def float_mod(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    """numpy's mod of floats: C's fmod moved to the divisor's sign (r + b where r is
    nonzero and its sign differs from b's; a zero takes b's sign). NaN for a zero
    divisor or an infinite dividend (fmod's), and -3 mod inf is inf, as numpy."""

    def floor_mod(x, y):
        r = te.fmod(x, y)
        zero = te.const(0.0, a.dtype)
        differ = (r != zero) & ((r < zero) != (y < zero))
        # -zero, not a constant -0.0: equal constants are emitted once, 0.0 == -0.0
        signed_zero = te.if_then_else(y < zero, -zero, zero)
        return te.if_then_else(r == zero, signed_zero, te.if_then_else(differ, r + y, r))

    return broadcast_map(floor_mod, a, b, name="mod")
