"""Elementwise functions (`te.exp`, `te.maximum`, `te.if_then_else`, ...) and
reductions (`te.reduce_axis`, `te.sum`, `te.max`, `te.min`) over expressions."""

from __future__ import annotations

import builtins
import math

import numpy as np
from collections.abc import Callable

from tilecraft.frontends.te.dtypes import _is_float, _is_int, _is_integral, _width
from tilecraft.frontends.te.expr import (
    Binary,
    Const,
    Expr,
    IfThenElse,
    IterVar,
    Reduce,
    _default_literal,
    _binary,
    _literal,
    _no_reduce,
    _unary,
    _unify,
    _walk,
)

# --- elementwise functions --------------------------------------------------------------


def if_then_else(cond, then, orelse) -> Expr:
    """`then` where `cond` holds, else `orelse`; only the chosen side is evaluated,
    so it may guard reads that would be out of bounds (padding)."""
    cond = _default_literal(cond)
    if cond.dtype != "bool":
        raise ValueError(f"te.if_then_else needs a bool condition, not {cond.dtype}")
    _no_reduce(cond)
    then, orelse = _unify(then, orelse, "select between")
    return IfThenElse(cond, then, orelse, then.dtype)


def _elementwise(op: str) -> Callable[[Expr], Expr]:
    def apply(x):
        return _unary(op, x)

    apply.__name__ = op
    apply.__doc__ = f"Elementwise {op} (math.{op} for floats)."
    return apply


exp = _elementwise("exp")
log = _elementwise("log")
sqrt = _elementwise("sqrt")
tanh = _elementwise("tanh")
erf = _elementwise("erf")
sin = _elementwise("sin")
cos = _elementwise("cos")
tan = _elementwise("tan")
asin = _elementwise("asin")
acos = _elementwise("acos")
atan = _elementwise("atan")
sinh = _elementwise("sinh")
cosh = _elementwise("cosh")
asinh = _elementwise("asinh")
acosh = _elementwise("acosh")
atanh = _elementwise("atanh")
floor = _elementwise("floor")
ceil = _elementwise("ceil")
round = _elementwise("round")  # noqa: A001 - TVM's name; halves to even (math.roundeven)


def power(a, b) -> Expr:
    """`a ** b` of floats (math.powf, as C's pow)."""
    return _binary("pow", a, b)


def fmod(a, b) -> Expr:
    """The remainder of a / b truncated, with the sign of `a` (C's fmod), of floats."""
    return _binary("fmod", a, b)


def abs(x) -> Expr:  # noqa: A001 - TVM's name
    """Absolute value (math.absf / math.absi)."""
    return _unary("abs", x)


def sigmoid(x) -> Expr:
    """1 / (1 + exp(-x))."""
    return 1.0 / (1.0 + exp(-_default_literal(x)))


def maximum(a, b) -> Expr:
    """Elementwise maximum (NaN-propagating for floats, like numpy)."""
    a, b = _unify(a, b, "take the maximum of")
    if a.dtype == "bool":
        raise ValueError("te.maximum needs numeric operands, not bool")
    return Binary("max", a, b, a.dtype)


def minimum(a, b) -> Expr:
    """Elementwise minimum (NaN-propagating for floats, like numpy)."""
    a, b = _unify(a, b, "take the minimum of")
    if a.dtype == "bool":
        raise ValueError("te.minimum needs numeric operands, not bool")
    return Binary("min", a, b, a.dtype)


def all(*conds) -> Expr:  # noqa: A001 - TVM's name
    """The conjunction of bool expressions."""
    result = _default_literal(conds[0])
    for c in conds[1:]:
        result = result & c
    return result


def any(*conds) -> Expr:  # noqa: A001 - TVM's name
    """The disjunction of bool expressions."""
    result = _default_literal(conds[0])
    for c in conds[1:]:
        result = result | c
    return result


# --- reductions -----------------------------------------------------------------------


def reduce_axis(dom: tuple[int, int], name: str = "rv") -> IterVar:
    """A reduce axis over [lo, hi): `te.reduce_axis((0, K), name="k")`."""
    def is_size(d) -> bool:  # an int, or an int expression of te.var sizes
        return _is_integral(d) or (isinstance(d, Expr) and _is_int(d.dtype))

    if not (isinstance(dom, (tuple, list)) and len(dom) == 2 and builtins.all(is_size(d) for d in dom)):
        raise ValueError(f"te.reduce_axis takes a range (lo, hi) of ints or te.var sizes, not {dom!r}")
    lo, hi = (int(d) if _is_integral(d) else d for d in dom)
    if _is_integral(lo) and _is_integral(hi) and hi <= lo:
        raise ValueError(f"te.reduce_axis {name!r} has an empty range [{lo}, {hi})")
    return IterVar(name, (lo, hi), "reduce")


def _reduction(kind: str, expr, axis, where) -> Reduce:
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    if not axes:
        raise ValueError(f"te.{kind} needs at least one reduce axis")
    for a in axes:
        if not (isinstance(a, IterVar) and a.kind == "reduce"):
            hint = f"; for two values use te.{kind}imum(a, b)" if kind != "sum" else ""
            raise ValueError(
                f"te.{kind} reduces over axes made by te.reduce_axis, not {a!r}{hint}"
            )
    if len({id(a) for a in axes}) != len(axes):
        raise ValueError(f"te.{kind} names a reduce axis twice")
    body = _default_literal(expr)
    if builtins.any(isinstance(e, Reduce) for e in _walk(body)):
        raise ValueError(
            f"te.{kind} contains another reduction; a reduction must be the whole body "
            "of a te.compute, so compute the inner one in its own te.compute"
        )
    if body.dtype == "bool":
        raise ValueError(f"te.{kind} of bool values: cast them with .astype(...) first")
    if where is not None:
        body = if_then_else(where, body, _identity(kind, body.dtype))
    return Reduce(kind, body, axes, body.dtype)


def _identity(kind: str, dtype: str) -> Const:
    if kind == "sum":
        return _literal(0, dtype)
    if kind == "prod":
        return _literal(1, dtype)
    sign = -1 if kind == "max" else 1
    if _is_float(dtype):
        return Const(sign * math.inf, dtype)
    w = _width(dtype)
    return Const(-(2 ** (w - 1)) if sign < 0 else 2 ** (w - 1) - 1, dtype)


def reduce_sum(expr, axis, where=None) -> Expr:
    """`te.sum(A[i, k], axis=k)`: the sum over reduce axes (a list for several)."""
    return _reduction("sum", expr, axis, where)


def reduce_max(expr, axis, where=None) -> Expr:
    """`te.max(A[i, k], axis=k)`; for two values use `te.maximum`."""
    return _reduction("max", expr, axis, where)


def reduce_min(expr, axis, where=None) -> Expr:
    """`te.min(A[i, k], axis=k)`; for two values use `te.minimum`."""
    return _reduction("min", expr, axis, where)



# --- limits --------------------------------------------------------------------------


def _limit(dtype: str, lowest: bool) -> Expr:
    dtype = str(dtype)
    if _is_float(dtype):
        info = np.finfo(dtype)
        return Const(float(info.min if lowest else info.max), dtype)
    if dtype == "bool":
        return Const(not lowest, "bool")
    info = np.iinfo(dtype)
    return Const(int(info.min if lowest else info.max), dtype)


def min_value(dtype: str) -> Expr:
    """The lowest finite value of `dtype` (as TVM: -3.4e38 for float32, not -inf)."""
    return _limit(dtype, True)


def max_value(dtype: str) -> Expr:
    """The largest finite value of `dtype`."""
    return _limit(dtype, False)


# te.sum/max/min shadow Python builtins; bound last, and the code above uses
# `builtins.` for the Python ones (abs, all and any are shadowed too).
sum = reduce_sum  # noqa: A001
max = reduce_max  # noqa: A001
min = reduce_min  # noqa: A001
