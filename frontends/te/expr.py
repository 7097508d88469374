"""Expressions: the immutable `Expr` tree and the functions that build its nodes.

Building a node checks its operands' dtypes and makes casts explicit, so a dtype
error is raised at the user's line (the rules are in the package docstring).
`tilecraft.frontends.te.ops` builds the elementwise functions and reductions on
these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tilecraft.frontends.te.dtypes import (
    INDEX,
    _check_dtype,
    _is_float,
    _is_int,
    _is_storage,
    _promote,
    _width,
)

if TYPE_CHECKING:
    from tilecraft.frontends.te.tensor import Tensor


class Expr:
    """A scalar expression of one dtype (`index` for index arithmetic)."""

    dtype: str
    # `==` builds a comparison, so keep identity hashing for use as a dict key.
    __hash__ = object.__hash__

    def children(self) -> tuple[Expr, ...]:
        return ()

    def astype(self, dtype: str) -> Expr:
        return cast(self, dtype)

    def __bool__(self):
        raise TypeError(
            "a te expression has no truth value; use te.if_then_else(cond, a, b) "
            "instead of `if`, and `&`/`|` instead of `and`/`or`"
        )

    def __add__(self, o):
        return _binary("add", self, o)

    def __radd__(self, o):
        return _binary("add", o, self)

    def __sub__(self, o):
        return _binary("sub", self, o)

    def __rsub__(self, o):
        return _binary("sub", o, self)

    def __mul__(self, o):
        return _binary("mul", self, o)

    def __rmul__(self, o):
        return _binary("mul", o, self)

    def __truediv__(self, o):
        return _binary("div", self, o)

    def __rtruediv__(self, o):
        return _binary("div", o, self)

    def __floordiv__(self, o):
        return _binary("floordiv", self, o)

    def __rfloordiv__(self, o):
        return _binary("floordiv", o, self)

    def __mod__(self, o):
        return _binary("floormod", self, o)

    def __rmod__(self, o):
        return _binary("floormod", o, self)

    def __and__(self, o):
        return _binary("and", self, o)

    def __rand__(self, o):
        return _binary("and", o, self)

    def __or__(self, o):
        return _binary("or", self, o)

    def __ror__(self, o):
        return _binary("or", o, self)

    def __neg__(self):
        return _unary("neg", self)

    def __lt__(self, o):
        return _compare("lt", self, o)

    def __le__(self, o):
        return _compare("le", self, o)

    def __gt__(self, o):
        return _compare("gt", self, o)

    def __ge__(self, o):
        return _compare("ge", self, o)

    def __eq__(self, o):  # type: ignore[override]
        return _compare("eq", self, o)

    def __ne__(self, o):  # type: ignore[override]
        return _compare("ne", self, o)

    def __repr__(self) -> str:
        return _format(self)


@dataclass(eq=False, repr=False)
class Const(Expr):
    value: int | float | bool
    dtype: str


@dataclass(eq=False, repr=False)
class IterVar(Expr):
    """A loop variable: a compute's spatial axis or a reduce axis, over [lo, hi)."""

    name: str
    dom: tuple[int, int]
    kind: str = "spatial"  # or "reduce"
    dtype: str = INDEX

    @property
    def var(self) -> IterVar:  # TVM spells the variable of an IterVar `.var`
        return self

    @property
    def extent(self) -> int:
        return self.dom[1] - self.dom[0]


@dataclass(eq=False, repr=False)
class Binary(Expr):
    op: str  # add sub mul div floordiv floormod truncdiv truncmod max min and or pow fmod
    lhs: Expr
    rhs: Expr
    dtype: str

    def children(self):
        return (self.lhs, self.rhs)


@dataclass(eq=False, repr=False)
class Compare(Expr):
    op: str  # lt le gt ge eq ne
    lhs: Expr
    rhs: Expr
    dtype: str = "bool"

    def children(self):
        return (self.lhs, self.rhs)


@dataclass(eq=False, repr=False)
class Unary(Expr):
    op: str  # neg abs reinterpret (to dtype), and the float functions of FLOAT_FUNCTIONS
    operand: Expr
    dtype: str

    def children(self):
        return (self.operand,)


@dataclass(eq=False, repr=False)
class Cast(Expr):
    operand: Expr
    dtype: str

    def children(self):
        return (self.operand,)


@dataclass(eq=False, repr=False)
class IfThenElse(Expr):
    cond: Expr
    then: Expr
    orelse: Expr
    dtype: str

    def children(self):
        return (self.cond, self.then, self.orelse)


@dataclass(eq=False, repr=False)
class Checked(Expr):
    """`value`, computed after checking `cond` at run time: where `cond` is false
    the call fails with `message` (`te.assert` in the IR)."""

    value: Expr
    cond: Expr
    message: str
    dtype: str

    def children(self):
        return (self.cond, self.value)


@dataclass(eq=False, repr=False)
class Read(Expr):
    tensor: Tensor
    indices: tuple[Expr, ...]
    dtype: str

    def children(self):
        return self.indices


@dataclass(eq=False, repr=False)
class Reduce(Expr):
    kind: str  # sum max min
    body: Expr
    axes: tuple[IterVar, ...]
    dtype: str

    def children(self):
        return (self.body,)


def _walk(expr: Expr):
    """Every node of an expression, each shared node once, in source order (pre-order,
    left to right)."""
    seen: set[int] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) not in seen:
            seen.add(id(e))
            yield e
            stack.extend(reversed(e.children()))


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//",
            "floormod": "%", "and": "&", "or": "|", "lt": "<", "le": "<=", "gt": ">",
            "ge": ">=", "eq": "==", "ne": "!="}  # fmt: skip


def _format(e: Expr) -> str:
    if isinstance(e, Const):
        return repr(e.value)
    if isinstance(e, IterVar) or (not e.children() and isinstance(getattr(e, "name", None), str)):
        return e.name  # an axis, or another named leaf (te.var)
    if isinstance(e, (Binary, Compare)) and e.op in _SYMBOLS:
        return f"({_format(e.lhs)} {_SYMBOLS[e.op]} {_format(e.rhs)})"
    if isinstance(e, Read):
        return f"{e.tensor.name}[{', '.join(_format(i) for i in e.indices)}]"
    if isinstance(e, Reduce):
        axes = ", ".join(a.name for a in e.axes)
        return f"{e.kind}({_format(e.body)}, axis=[{axes}])"
    if isinstance(e, Cast):
        return f"{_format(e.operand)}.astype({e.dtype!r})"
    return f"{getattr(e, 'op', type(e).__name__)}({', '.join(map(_format, e.children()))})"


# --- building nodes: the type rules (ops.py builds on them) ------------------------


def _no_reduce(*operands: Expr):
    for e in operands:
        if isinstance(e, Reduce):
            raise ValueError(
                f"a reduction must be the whole body of a te.compute (as in TVM), but "
                f"{_format(e)} is used inside a larger expression; compute it in its "
                "own te.compute and read that tensor here"
            )


def _literal(value, dtype: str) -> Const:
    """A Python number taking the dtype of the expression it meets."""
    if isinstance(value, bool):
        if dtype != "bool":
            raise ValueError(f"cannot mix Python bool {value} with a {dtype} expression")
        return Const(value, "bool")
    if isinstance(value, int):
        if dtype == "bool":
            raise ValueError(f"cannot mix Python int {value} with a bool expression")
        if _is_float(dtype):
            return Const(float(value), dtype)
        if _is_int(dtype):
            lo, hi = -(2 ** (_width(dtype) - 1)), 2 ** (_width(dtype) - 1)
            if not lo <= value < hi:
                raise ValueError(f"constant {value} does not fit in {dtype}")
        return Const(value, dtype)
    if isinstance(value, float):
        if not _is_float(dtype):
            raise ValueError(
                f"mixing the Python float {value} with a {dtype} expression is "
                f"ambiguous; cast the expression explicitly, e.g. x.astype('float32')"
            )
        return Const(value, dtype)
    raise TypeError(f"expected a te expression or a Python number, got {value!r}")


def _default_literal(value) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return Const(value, "bool")
    if isinstance(value, int):
        return _literal(value, "int32")
    if isinstance(value, float):
        return Const(value, "float32")
    raise TypeError(f"expected a te expression or a Python number, got {value!r}")


def _unify(a, b, what: str) -> tuple[Expr, Expr]:
    """Give two operands one dtype, or explain why that would be a guess."""
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        # Two Python numbers (te.if_then_else(c, 1, 0.5)): float32 if either is a float.
        is_float = isinstance(a, float) or isinstance(b, float)
        a, b = (const(v, "float32") if is_float else _default_literal(v) for v in (a, b))
    elif not isinstance(a, Expr):
        a = _literal(a, b.dtype)
    elif not isinstance(b, Expr):
        b = _literal(b, a.dtype)
    _no_reduce(a, b)
    _computable(a.dtype, what)
    _computable(b.dtype, what)
    common = _promote(a.dtype, b.dtype)
    if common is None:
        raise ValueError(
            f"cannot {what} {a.dtype} and {b.dtype} without an explicit cast "
            f"({_format(a)} and {_format(b)}); use .astype(...) on one of them"
        )
    return cast(a, common), cast(b, common)


def _computable(dtype: str, what: str) -> None:
    if _is_storage(dtype):
        raise ValueError(
            f"cannot {what} {dtype} values: te keeps unsigned and narrow (4-, 2-bit, "
            f"bfloat16, float8, float4) types for storage; cast them to a signed or "
            f"float type first, e.g. x.astype('int64') or x.astype('float32')"
        )


def _binary(op: str, a, b) -> Expr:
    a, b = _unify(a, b, _OP_VERBS[op])
    t = a.dtype
    if op in ("and", "or"):
        if not (t == "bool" or _is_int(t)):
            raise ValueError(f"'{_SYMBOLS[op]}' needs bool or integer operands, not {t}")
    elif t == "bool":
        raise ValueError(f"cannot {_OP_VERBS[op]} bool values; cast them with .astype(...)")
    elif op == "div" and not _is_float(t):
        raise ValueError(
            f"'/' on {t} values is ambiguous; use '//' for floor division or cast to "
            "a float type first"
        )
    elif op in FLOAT_BINARY_FUNCTIONS and not _is_float(t):
        raise ValueError(f"te.{'power' if op == 'pow' else op} needs float operands, not {t}")
    elif op in _INTEGER_DIVISIONS and _is_float(t):
        spelling = f"'{_SYMBOLS[op]}'" if op in _SYMBOLS else f"te.{op}"
        raise ValueError(f"{spelling} needs integer operands ({_INTEGER_DIVISIONS[op]}), not {t}")
    return Binary(op, a, b, t)


_OP_VERBS = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
             "floordiv": "floor-divide", "floormod": "take the remainder of",
             "truncdiv": "divide", "truncmod": "take the remainder of",
             "max": "take the maximum of", "min": "take the minimum of",
             "and": "combine", "or": "combine", "cmp": "compare",
             "select": "select between", "pow": "raise to the power of",
             "fmod": "take the remainder of"}  # fmt: skip


_INTEGER_DIVISIONS = {
    "floordiv": "floor division", "floormod": "floor modulo",
    "truncdiv": "truncated division", "truncmod": "truncated remainder",
}  # fmt: skip


def floordiv(a, b) -> Expr:
    """`a // b` rounded toward minus infinity (Python's and TVM's `//`): `-1 // 4 == -1`.

    Integer division by zero gives 0 (numpy's convention), never a trap."""
    return _binary("floordiv", a, b)


def floormod(a, b) -> Expr:
    """`a % b` with the sign of `b` (Python's and TVM's `%`): `-1 % 4 == 3`, so
    `a == floordiv(a, b) * b + floormod(a, b)`. Modulo zero gives 0 (numpy)."""
    return _binary("floormod", a, b)


def truncdiv(a, b) -> Expr:
    """`a / b` rounded toward zero (C's integer division): `-1 / 4 == 0`.
    Division by zero gives 0."""
    return _binary("truncdiv", a, b)


def truncmod(a, b) -> Expr:
    """The remainder of `truncdiv`, with the sign of `a` (C's `%`, numpy's `fmod`):
    `-1 truncmod 4 == -1`. Modulo zero gives 0."""
    return _binary("truncmod", a, b)


def checked(value, cond, message: str) -> Expr:
    """`value`, with a run-time check: computing an element where `cond` is false
    makes the call fail with `message` (an exception from the Python call, exit 1
    from the tools). `value` is still computed there, so it must not read out of
    bounds by itself: check an index and clamp it, as `topi.gather` does."""
    value = _default_literal(value)
    cond = _default_literal(cond)
    _no_reduce(value, cond)
    if cond.dtype != "bool":
        raise ValueError(f"the condition of a check must be bool, not {cond.dtype}")
    return Checked(value, cond, str(message), value.dtype)


# TVM's names for the index forms of floor division and modulo.
indexdiv = floordiv
indexmod = floormod


def _compare(op: str, a, b) -> Expr:
    a, b = _unify(a, b, "compare")
    if a.dtype == "bool" and op not in ("eq", "ne"):
        raise ValueError("bool values can only be compared with == and !=")
    return Compare(op, a, b)


# Elementwise functions of floats (math.<name>; "round" is math.roundeven: halves
# to even, as TVM's round and numpy's rint).
FLOAT_FUNCTIONS = (
    "exp", "log", "sqrt", "tanh", "erf", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil", "round",
)  # fmt: skip
# Binary functions of floats: x ** y (math.powf) and C's fmod (sign of x).
FLOAT_BINARY_FUNCTIONS = ("pow", "fmod")


def _unary(op: str, x) -> Expr:
    x = _default_literal(x)
    _no_reduce(x)
    if x.dtype == "bool":
        raise ValueError(f"cannot apply {op} to a bool value; cast it with .astype(...)")
    _computable(x.dtype, f"apply {op} to")
    if op in FLOAT_FUNCTIONS and not _is_float(x.dtype):
        raise ValueError(
            f"te.{op} needs a float operand, not {x.dtype}; use x.astype('float32')"
        )
    return Unary(op, x, x.dtype)


def const(value, dtype: str | None = None) -> Expr:
    """A constant; without a dtype, Python ints are int32 and floats float32 (as TVM)."""
    if dtype is None:
        return _default_literal(value)
    _computable(_check_dtype(dtype), "make constants of")
    return _literal(value, dtype)


def reinterpret(x, dtype: str) -> Expr:
    """The bits of `x` read as `dtype`, of the same width (TVM's tir.reinterpret):
    float32 <-> int32, float64 <-> int64, float16 <-> int16, bfloat16 <-> uint16..."""
    _check_dtype(dtype)
    x = _default_literal(x)
    _no_reduce(x)
    if x.dtype in (INDEX, "bool") or dtype == "bool" or _width(x.dtype) != _width(dtype):
        raise ValueError(f"cannot reinterpret {x.dtype} as {dtype}: they are not of one bit width")
    if x.dtype == dtype:
        return x
    return Unary("reinterpret", x, dtype)


def cast(x, dtype: str) -> Expr:
    """`x` converted to `dtype` (numpy's astype: floats truncate toward zero)."""
    if dtype != INDEX:
        _check_dtype(dtype)
    x = _default_literal(x)
    _no_reduce(x)
    if x.dtype == dtype:
        return x
    if isinstance(x, Const) and dtype != "bool" and x.dtype != "bool" and not _is_storage(dtype):
        return Const(float(x.value) if _is_float(dtype) else int(x.value), dtype)
    return Cast(x, dtype)
