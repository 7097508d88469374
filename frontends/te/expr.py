"""`tilecraft.te`: TVM's tensor-expression API, producing te + sched IR.

The user describes *what* to compute with `placeholder`, `compute` and reductions,
and *how* with a `Schedule`; `build_module` turns both into one `func.func`:

```python
A = te.placeholder((64, 32), "float32", name="A")
B = te.placeholder((32, 64), "float32", name="B")
k = te.reduce_axis((0, 32), name="k")
C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
s = te.create_schedule(C)
io, ii = s[C].split(C.op.axis[0], factor=8)
s[C].vectorize(ii)
```

```mlir
// (SSA names simplified: the printer renames %i in the schedule to %i_1)
func.func @main(%A: tensor<64x32xf32> {tc.name = "A"}, %B: ...) -> tensor<64x64xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<64x64xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 32) -> f32 { ... }
    te.yield %s : f32
  }
  sched.schedule {
    %s_C = sched.stage %C : tensor<64x64xf32>
    %i = sched.axis %s_C "i"
    %i.outer, %i.inner = sched.split %i by 8
    sched.vectorize %i.inner
  }
  func.return %C : tensor<64x64xf32>
}
```

Design:
- Expressions are a small immutable tree (`Expr`). Types are checked and casts made
  explicit when a node is built, so a dtype error is raised at the user's line, and
  IR generation is one op per node. Python numbers take the other operand's dtype;
  two typed operands of different dtypes are promoted only where nothing is lost
  and nothing is surprising (int8 -> int32, float32 -> float64, an index variable
  -> the other operand's type); anything else asks for an explicit `astype`.
- `==` on expressions builds a comparison, as in TVM, so expressions have no truth
  value and this module compares IterVars by identity only (`is`, `id()` keys).
- A schedule is recorded as a list of steps and emitted into a `sched.schedule`
  region only when a function is built, so one schedule can be lowered and built
  many times. Every axis object is one SSA handle; `sched.stage`/`sched.axis` are
  emitted on first use. Steps carry the Python source location of the call that
  made them, so a schedule the verifier rejects is reported at the user's line.
- Axis naming convention shared with `tilecraft.analysis.schedule`: a compute's
  axes are named after its lambda parameters and reduce axes (suffixed `_1`, `_2`
  when two would clash); a `cache_read` stage has the spatial axis names of the
  stage it copies (`ax0, ax1, ...` for a placeholder); after
  `cache_write`, the cache stage has the compute's axis names and the original
  stage (now the copy) has fresh axes with the same spatial names. Because the
  axes are fresh, re-fetch them with `s[C].op.axis` after `cache_write`.

The module reads top to bottom: dtypes, expressions (nodes, then the functions
that build them with their type rules, then reductions), tensors and `compute`,
schedules, and IR generation (`build_module`).
"""

from __future__ import annotations

import builtins
import inspect
import math
import numbers
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tilecraft.dialects import sched as sched_ir
from tilecraft.dialects import te as te_ir
from tilecraft.utils.diagnostics import verify_module

# ---------------------------------------------------------------------------------
# dtypes

INDEX = "index"
_FLOATS = {"float32": (32, f32), "float64": (64, f64)}
_INTS = {"int8": (8, i8), "int32": (32, i32), "int64": (64, i64)}
DTYPES = ("float32", "float64", "int32", "int64", "int8", "bool")


def _check_dtype(dtype: str) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    return dtype


def _is_float(dtype: str) -> bool:
    return dtype in _FLOATS


def _is_int(dtype: str) -> bool:
    return dtype in _INTS


def _ir_type(dtype: str) -> Attribute:
    if dtype == INDEX:
        return IndexType()
    if dtype == "bool":
        return i1
    return (_FLOATS.get(dtype) or _INTS[dtype])[1]


def _width(dtype: str) -> int:
    return (_FLOATS.get(dtype) or _INTS[dtype])[0]


def _promote(a: str, b: str) -> str | None:
    """The common dtype of two typed operands, or None where it would be a guess."""
    if a == b:
        return a
    if a == INDEX and b != "bool":
        return b
    if b == INDEX and a != "bool":
        return a
    if (_is_int(a) and _is_int(b)) or (_is_float(a) and _is_float(b)):
        return a if _width(a) >= _width(b) else b
    return None


# ---------------------------------------------------------------------------------
# Expressions


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
        return _binary("mod", self, o)

    def __rmod__(self, o):
        return _binary("mod", o, self)

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
    op: str  # add sub mul div floordiv mod max min and or
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
    op: str  # neg exp log sqrt tanh erf abs
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
            "mod": "%", "and": "&", "or": "|", "lt": "<", "le": "<=", "gt": ">",
            "ge": ">=", "eq": "==", "ne": "!="}  # fmt: skip


def _format(e: Expr) -> str:
    if isinstance(e, Const):
        return repr(e.value)
    if isinstance(e, IterVar):
        return e.name
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


# --- building nodes: all type rules live here --------------------------------------


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
    common = _promote(a.dtype, b.dtype)
    if common is None:
        raise ValueError(
            f"cannot {what} {a.dtype} and {b.dtype} without an explicit cast "
            f"({_format(a)} and {_format(b)}); use .astype(...) on one of them"
        )
    return cast(a, common), cast(b, common)


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
    elif op in ("floordiv", "mod") and _is_float(t):
        raise ValueError(
            f"'{_SYMBOLS[op]}' needs integer operands (floor division, truncated "
            f"remainder), not {t}"
        )
    return Binary(op, a, b, t)


_OP_VERBS = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
             "floordiv": "floor-divide", "mod": "take the remainder of",
             "max": "take the maximum of", "min": "take the minimum of",
             "and": "combine", "or": "combine", "cmp": "compare",
             "select": "select between"}  # fmt: skip


def _compare(op: str, a, b) -> Expr:
    a, b = _unify(a, b, "compare")
    if a.dtype == "bool" and op not in ("eq", "ne"):
        raise ValueError("bool values can only be compared with == and !=")
    return Compare(op, a, b)


def _unary(op: str, x) -> Expr:
    x = _default_literal(x)
    _no_reduce(x)
    if x.dtype == "bool":
        raise ValueError(f"cannot apply {op} to a bool value; cast it with .astype(...)")
    if op in ("exp", "log", "sqrt", "tanh", "erf") and not _is_float(x.dtype):
        raise ValueError(
            f"te.{op} needs a float operand, not {x.dtype}; use x.astype('float32')"
        )
    return Unary(op, x, x.dtype)


def const(value, dtype: str | None = None) -> Expr:
    """A constant; without a dtype, Python ints are int32 and floats float32 (as TVM)."""
    if dtype is None:
        return _default_literal(value)
    return _literal(value, _check_dtype(dtype))


def cast(x, dtype: str) -> Expr:
    """`x` converted to `dtype` (numpy's astype: floats truncate toward zero)."""
    if dtype != INDEX:
        _check_dtype(dtype)
    x = _default_literal(x)
    _no_reduce(x)
    if x.dtype == dtype:
        return x
    if isinstance(x, Const) and dtype != "bool" and x.dtype != "bool":
        return Const(float(x.value) if _is_float(dtype) else int(x.value), dtype)
    return Cast(x, dtype)


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
    if not (
        isinstance(dom, (tuple, list))
        and len(dom) == 2
        and builtins.all(_is_integral(d) for d in dom)
    ):
        raise ValueError(f"te.reduce_axis takes a range (lo, hi) of ints, not {dom!r}")
    lo, hi = int(dom[0]), int(dom[1])
    if hi <= lo:
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


# ---------------------------------------------------------------------------------
# Tensors and operations


@dataclass(eq=False)
class PlaceholderOp:
    name: str
    axis: tuple[IterVar, ...] = ()
    reduce_axis: tuple[IterVar, ...] = ()
    input_tensors: tuple[Tensor, ...] = ()


@dataclass(eq=False)
class ComputeOp:
    """What `te.compute` made: its axes, its body and the names the IR gives them."""

    name: str
    axis: tuple[IterVar, ...]
    reduce_axis: tuple[IterVar, ...]
    body: Expr
    axis_names: dict[int, str]  # id(IterVar) -> name in the IR, unique in this compute
    location: FileLineColLoc | None = None

    @property
    def input_tensors(self) -> list[Tensor]:
        found: dict[int, Tensor] = {}
        for e in _walk(self.body):
            if isinstance(e, Read):
                found.setdefault(id(e.tensor), e.tensor)
        return list(found.values())


@dataclass(eq=False)
class Tensor:
    """A placeholder or the result of a compute; `A[i, j]` reads one element."""

    shape: tuple[int, ...]
    dtype: str
    op: PlaceholderOp | ComputeOp

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, key) -> Expr:
        indices = key if isinstance(key, tuple) else (key,)
        # `lambda *i: A[i]` passes a tuple; allow one level of nesting.
        flat = [x for i in indices for x in (i if isinstance(i, (tuple, list)) else (i,))]
        if len(flat) != len(self.shape):
            raise ValueError(
                f"tensor {self.name} has rank {len(self.shape)} but is indexed with "
                f"{len(flat)} indices"
            )
        checked = tuple(_index(x, n, self.name) for x, n in zip(flat, self.shape))
        return Read(self, checked, self.dtype)

    def __call__(self, *indices) -> Expr:
        return self[indices]

    def __repr__(self) -> str:
        return f"Tensor({self.name}, shape={self.shape}, dtype={self.dtype})"


def _index(x, extent: int, tensor: str) -> Expr:
    if _is_integral(x):
        if not 0 <= x < extent:
            raise ValueError(f"constant index {x} is out of bounds [0, {extent}) of {tensor}")
        return Const(int(x), INDEX)
    if not isinstance(x, Expr):
        raise ValueError(f"index of {tensor} must be an integer expression, not {x!r}")
    _no_reduce(x)
    if x.dtype == INDEX:
        return x
    if _is_int(x.dtype):
        return Cast(x, INDEX)
    raise ValueError(f"index of {tensor} must be an integer expression, not {x.dtype}")


def _shape(shape, what: str) -> tuple[int, ...]:
    shape = (shape,) if _is_integral(shape) else tuple(shape)
    if not shape or not builtins.all(_is_integral(d) and d > 0 for d in shape):
        raise ValueError(f"{what} needs a static shape of positive ints, not {shape!r}")
    return tuple(int(d) for d in shape)


def _is_integral(x) -> bool:
    """An int or numpy integer, not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def placeholder(shape, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor: `te.placeholder((M, K), "float32", name="A")`."""
    return Tensor(_shape(shape, "te.placeholder"), _check_dtype(dtype), PlaceholderOp(name))


def compute(shape, fcompute: Callable[..., Expr], name: str = "compute") -> Tensor:
    """A tensor defined element by element: `te.compute((M, N), lambda i, j: ...)`.

    The lambda's parameter names name the axes; `lambda *i:` gives `i0, i1, ...`.
    """
    shape = _shape(shape, "te.compute")
    names = _lambda_names(fcompute, len(shape))
    axes = tuple(IterVar(n, (0, d)) for n, d in zip(names, shape))
    body = fcompute(*axes)
    if isinstance(body, (tuple, list)):
        raise ValueError("te.compute with several outputs is not supported")
    body = _default_literal(body)
    if body.dtype == INDEX:  # `lambda i: i`: a tensor of int32, as TVM's index vars
        body = cast(body, "int32")
    reduce_axes = body.axes if isinstance(body, Reduce) else ()
    _check_free_axes(name, body, axes, reduce_axes)
    axis_names: dict[int, str] = {}
    taken: set[str] = set()
    for a in axes + reduce_axes:
        unique, n = a.name, 0
        while unique in taken:
            n += 1
            unique = f"{a.name}_{n}"
        taken.add(unique)
        axis_names[id(a)] = unique
    op = ComputeOp(name, axes, reduce_axes, body, axis_names, _caller_location())
    return Tensor(shape, body.dtype, op)


def _lambda_names(fcompute, rank: int) -> list[str]:
    params = list(inspect.signature(fcompute).parameters.values())
    if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return [f"{params[0].name}{d}" for d in range(rank)]
    # Parameters with defaults are not indices (`lambda i, f=f: ...` binds a value).
    indices = [p for p in params if p.default is p.empty and p.kind is not p.KEYWORD_ONLY]
    if len(indices) != rank:
        raise ValueError(
            f"te.compute of a rank-{rank} shape needs a function of {rank} indices, "
            f"but it takes {len(indices)}"
        )
    positional = indices
    return [p.name for p in positional]


def _check_free_axes(name, body: Expr, axes, reduce_axes):
    allowed = {id(a) for a in axes}
    inner = body.body if isinstance(body, Reduce) else None
    inner_vars = {id(e) for e in _walk(inner)} if inner is not None else set()
    for e in _walk(body):
        if not isinstance(e, IterVar) or id(e) in allowed:
            continue
        if e.kind == "reduce" and builtins.any(e is r for r in reduce_axes) and id(e) in inner_vars:
            continue
        if e.kind == "reduce":
            raise ValueError(
                f"te.compute {name!r} uses reduce axis {e.name!r} outside a reduction "
                f"over it; wrap the body in te.sum/te.max/te.min(..., axis={e.name})"
            )
        raise ValueError(
            f"te.compute {name!r} uses axis {e.name!r}, which belongs to another compute"
        )


def _caller_location() -> FileLineColLoc | None:
    """The user's source line that called into this module (for diagnostics)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None:
        return None
    return FileLineColLoc(StringAttr(frame.f_code.co_filename), IntAttr(frame.f_lineno), IntAttr(1))


# ---------------------------------------------------------------------------------
# Schedules


@dataclass(eq=False)
class StageView:
    """What `s[T].op` gives for a stage whose axes are not the compute's own
    (a cache stage, or a stage after cache_write)."""

    name: str
    axis: tuple[IterVar, ...]
    reduce_axis: tuple[IterVar, ...] = ()


@dataclass(eq=False)
class CacheTensor:
    """The tensor of a cache stage: usable with `s[...]`, not in expressions."""

    shape: tuple[int, ...]
    dtype: str
    op: StageView
    scope: str

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, key):
        raise ValueError(
            f"{self.name} is a cache stage, only for scheduling; computes read the "
            "original tensor and the schedule redirects the reads"
        )


# A step emits one schedule op through an `_ScheduleEmitter`.
_Step = Callable[["_ScheduleEmitter"], None]


@dataclass(eq=False)
class Stage:
    """The schedule of one tensor: TVM's `s[C]`. Primitives are recorded as steps."""

    schedule: Schedule
    tensor: Tensor | CacheTensor
    op: ComputeOp | PlaceholderOp | StageView
    root_names: dict[int, str]  # id(root IterVar) -> name in sched.axis
    leaf_iter_vars: list[IterVar] = field(default_factory=list)
    _retired: dict[int, str] = field(default_factory=dict)  # id -> why it is gone
    _touched: bool = False

    def __post_init__(self):
        self.leaf_iter_vars = list(self.op.axis) + list(self.op.reduce_axis)

    # --- bookkeeping that gives errors at the user's line ---------------------------

    def _leaf(self, axis) -> int:
        for n, a in enumerate(self.leaf_iter_vars):
            if a is axis:
                return n
        name = getattr(axis, "name", repr(axis))
        why = self._retired.get(id(axis))
        if why:
            raise ValueError(f"axis {name!r} of stage {self.tensor.name} {why}")
        raise ValueError(f"axis {name!r} is not an axis of stage {self.tensor.name}")

    def _record(self, step: _Step):
        self._touched = True
        self.schedule._steps.append((step, _caller_location()))

    # --- primitives ---------------------------------------------------------------

    def split(self, axis: IterVar, factor: int | None = None, nparts: int | None = None):
        """Split `axis` into (outer, inner): inner extent `factor`, or `nparts` outer."""
        pos = self._leaf(axis)
        if (factor is None) == (nparts is None):
            raise ValueError("split takes exactly one of factor= or nparts=")
        value = factor if factor is not None else nparts
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"split factor/nparts must be a positive int, not {value!r}")
        ext = axis.extent  # a split that does not divide it gets a guarded tail
        if factor is not None:
            outer_ext, inner_ext = -(-ext // factor), factor
        else:
            outer_ext, inner_ext = nparts, -(-ext // nparts)
        outer = IterVar(f"{axis.name}.outer", (0, outer_ext), axis.kind)
        inner = IterVar(f"{axis.name}.inner", (0, inner_ext), axis.kind)
        self.leaf_iter_vars[pos : pos + 1] = [outer, inner]
        self._retired[id(axis)] = "was already split; use the axes split returned"

        def step(e: _ScheduleEmitter):
            op = e.add(sched_ir.SplitOp(e.axis(self, axis), factor=factor, nparts=nparts))
            e.bind(self, outer, op.outer)
            e.bind(self, inner, op.inner)

        self._record(step)
        return outer, inner

    def tile(self, x: IterVar, y: IterVar, x_factor: int, y_factor: int):
        """Split x and y and order the four (xo, yo, xi, yi); returns them."""
        px, py = self._leaf(x), self._leaf(y)
        if x is y:
            raise ValueError("tile takes two different axes")
        for f in (x_factor, y_factor):
            if not isinstance(f, int) or f <= 0:
                raise ValueError(f"tile factors must be positive ints, not {f!r}")
        xo = IterVar(f"{x.name}.outer", (0, -(-x.extent // x_factor)), x.kind)
        xi = IterVar(f"{x.name}.inner", (0, x_factor), x.kind)
        yo = IterVar(f"{y.name}.outer", (0, -(-y.extent // y_factor)), y.kind)
        yi = IterVar(f"{y.name}.inner", (0, y_factor), y.kind)
        # As TVM: split both, then put the four in the places they occupy, in order.
        leaves = self.leaf_iter_vars
        leaves[px : px + 1] = [xo, xi]
        py = py + 1 if py > px else py
        leaves[py : py + 1] = [yo, yi]
        self._place([xo, yo, xi, yi])
        for a in (x, y):
            self._retired[id(a)] = "was already tiled; use the axes tile returned"

        def step(e: _ScheduleEmitter):
            op = e.add(sched_ir.TileOp(e.axis(self, x), e.axis(self, y), x_factor, y_factor))
            for iv, res in zip((xo, yo, xi, yi), op.results):
                e.bind(self, iv, res)

        self._record(step)
        return xo, yo, xi, yi

    def _place(self, order: Sequence[IterVar]):
        positions = sorted(self._leaf(a) for a in order)
        for pos, a in zip(positions, order):
            self.leaf_iter_vars[pos] = a

    def reorder(self, *axes: IterVar):
        """Put these axes, in this order, in the places they occupy."""
        axes = _flatten_axes(axes)
        if len({id(a) for a in axes}) != len(axes):
            raise ValueError("reorder names an axis twice")
        self._place(axes)

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.ReorderOp([e.axis(self, a) for a in axes]))

        self._record(step)

    def fuse(self, *axes: IterVar) -> IterVar:
        """Fuse adjacent axes (outer first) into one."""
        axes = _flatten_axes(axes)
        if len(axes) < 2:
            raise ValueError("fuse takes at least two axes")
        positions = [self._leaf(a) for a in axes]
        if positions != list(range(positions[0], positions[0] + len(axes))):
            raise ValueError(
                "fuse needs adjacent axes, outer first; the current order is "
                + ", ".join(a.name for a in self.leaf_iter_vars)
            )
        kinds = {a.kind for a in axes}
        if len(kinds) != 1:
            raise ValueError("fuse cannot mix spatial and reduce axes")
        fused = IterVar(
            ".".join(a.name for a in axes) + ".fused",
            (0, math.prod(a.extent for a in axes)),
            axes[0].kind,
        )
        self.leaf_iter_vars[positions[0] : positions[-1] + 1] = [fused]
        for a in axes:
            self._retired[id(a)] = "was already fused; use the axis fuse returned"

        def step(e: _ScheduleEmitter):
            op = e.add(sched_ir.FuseOp([e.axis(self, a) for a in axes]))
            e.bind(self, fused, op.fused)

        self._record(step)
        return fused

    def compute_at(self, parent: Stage, axis: IterVar):
        """Compute this stage inside `parent`'s loop over `axis`."""
        if not isinstance(parent, Stage):
            raise ValueError("compute_at takes the consumer's stage, e.g. s[C]")
        parent._leaf(axis)
        parent._touched = True

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.ComputeAtOp(e.stage(self), e.axis(parent, axis)))

        self._record(step)

    def compute_inline(self):
        """Substitute this (injective) stage's expression into its readers."""

        def step(e: _ScheduleEmitter):
            e.add(sched_ir.ComputeInlineOp(e.stage(self)))

        self._record(step)

    def _annotate(self, op_class, axis: IterVar):
        self._leaf(axis)

        def step(e: _ScheduleEmitter):
            e.add(op_class(e.axis(self, axis)))

        self._record(step)

    def vectorize(self, axis: IterVar):
        """Run `axis` as SIMD lanes."""
        self._annotate(sched_ir.VectorizeOp, axis)

    def parallel(self, axis: IterVar):
        """Run `axis`'s iterations on all cores."""
        self._annotate(sched_ir.ParallelOp, axis)

    def unroll(self, axis: IterVar):
        """Unroll `axis` completely."""
        self._annotate(sched_ir.UnrollOp, axis)


def _flatten_axes(axes) -> list[IterVar]:
    if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
        return list(axes[0])
    return list(axes)


def _root_names(op) -> dict[int, str]:
    if isinstance(op, ComputeOp):
        return dict(op.axis_names)
    return {id(a): a.name for a in tuple(op.axis) + tuple(op.reduce_axis)}


class Schedule:
    """TVM's schedule: `s = te.create_schedule(C)`, then `s[C].split(...)` etc."""

    def __init__(self, outputs: Sequence[Tensor]):
        self.outputs = list(outputs)
        self._stages: dict[int, Stage] = {}
        self._steps: list[tuple[_Step, FileLineColLoc | None]] = []
        self._known: dict[int, Tensor | CacheTensor] = {}
        for t in _reachable(self.outputs):
            self._known[id(t)] = t

    def __getitem__(self, tensor) -> Stage:
        if isinstance(tensor, ComputeOp):
            tensor = next((t for t in self._known.values() if t.op is tensor), tensor)
        if id(tensor) not in self._known:
            name = getattr(tensor, "name", repr(tensor))
            raise ValueError(f"tensor {name} is not part of this schedule")
        stage = self._stages.get(id(tensor))
        if stage is None:
            stage = Stage(self, tensor, tensor.op, _root_names(tensor.op))
            self._stages[id(tensor)] = stage
        return stage

    @property
    def stages(self) -> list[Stage]:
        return [self[t] for t in self._known.values()]

    def cache_read(self, tensor, scope: str, readers) -> CacheTensor:
        """A copy of `tensor` in `scope` that `readers` read instead of it."""
        _check_scope(scope)
        readers = list(readers) if isinstance(readers, (list, tuple)) else [readers]
        if not readers:
            raise ValueError("cache_read needs at least one reader")
        src = self[tensor]
        reader_stages = [self[r] for r in readers]
        # The copy's axes are named like the source's spatial axes (ax0, ... for inputs).
        names = [src.root_names[id(a)] for a in src.op.axis]
        names = names or [f"ax{d}" for d in range(tensor.ndim)]
        axes = tuple(IterVar(n, (0, d)) for n, d in zip(names, tensor.shape))
        view = StageView(f"{tensor.name}.{scope}", axes)
        cache = CacheTensor(tensor.shape, tensor.dtype, view, scope)
        cache_stage = self._add_cache_stage(cache)

        def step(e: _ScheduleEmitter):
            readers = [e.stage(r) for r in reader_stages]
            op = e.add(sched_ir.CacheReadOp(e.stage(src), scope, readers))
            e.bind_stage(cache_stage, op.cache)

        src._record(step)
        return cache

    def cache_write(self, tensor, scope: str) -> CacheTensor:
        """Compute `tensor` into a `scope` buffer (the returned cache's stage), then
        copy it out; `tensor`'s stage becomes that copy, with fresh axes: re-fetch
        them with `s[tensor].op.axis`."""
        _check_scope(scope)
        stage = self[tensor]
        if not isinstance(stage.op, ComputeOp):
            raise ValueError(f"cache_write needs a computed tensor, not {tensor.name}")
        if stage._touched:
            raise ValueError(
                f"cache_write of {tensor.name} must come before any other scheduling "
                "of its stage"
            )
        op = stage.op
        names = op.axis_names
        fresh = tuple(IterVar(names[id(a)], a.dom, a.kind) for a in op.axis)
        fresh_red = tuple(IterVar(names[id(a)], a.dom, a.kind) for a in op.reduce_axis)
        view = StageView(f"{tensor.name}.{scope}", fresh, fresh_red)
        cache = CacheTensor(tensor.shape, tensor.dtype, view, scope)
        cache_stage = self._add_cache_stage(cache)
        # The original stage becomes the copy out of the cache, with fresh axes.
        stage.op = StageView(tensor.name, tuple(IterVar(a.name, a.dom) for a in fresh))
        stage.root_names = _root_names(stage.op)
        for a in stage.leaf_iter_vars:
            stage._retired[id(a)] = (
                "belongs to the stage before cache_write; re-fetch the axes with "
                f"s[{tensor.name}].op.axis"
            )
        stage.leaf_iter_vars = list(stage.op.axis)

        def step(e: _ScheduleEmitter):
            cw = e.add(sched_ir.CacheWriteOp(e.stage(stage), scope))
            e.bind_stage(cache_stage, cw.cache)

        stage._record(step)
        return cache

    def _add_cache_stage(self, cache: CacheTensor) -> Stage:
        self._known[id(cache)] = cache
        return self[cache]


def _check_scope(scope: str):
    if scope not in sched_ir.MEMORY_SCOPES:
        raise ValueError(
            f"memory scope must be one of {', '.join(sched_ir.MEMORY_SCOPES)}, not {scope!r}"
        )


def create_schedule(outputs) -> Schedule:
    """A schedule for the output tensor(s) and everything they read."""
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    for t in outputs:
        if not isinstance(t, Tensor) or not isinstance(t.op, ComputeOp):
            raise ValueError(f"create_schedule takes computed tensors, not {t!r}")
    return Schedule(outputs)


def _reachable(outputs: Sequence[Tensor]) -> list[Tensor]:
    """Tensors the outputs read, producers before consumers (depth-first post-order)."""
    order: list[Tensor] = []
    done: set[int] = set()

    def visit(t: Tensor):
        if id(t) in done:
            return
        done.add(id(t))
        for src in t.op.input_tensors:
            visit(src)
        order.append(t)

    for t in outputs:
        visit(t)
    return order


# ---------------------------------------------------------------------------------
# IR generation


def _tensor_type(t: Tensor | CacheTensor) -> TensorType:
    return TensorType(_ir_type(t.dtype), t.shape)


def _hint(name: str) -> str:
    """A valid SSA name hint from a tensor or axis name."""
    clean = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    return clean if clean and not clean[0].isdigit() and clean[0] != "." else f"v{clean}"


class _ScheduleEmitter:
    """Replays recorded steps into a sched.schedule block, handles made on first use."""

    def __init__(self, block: Block, values: dict[int, SSAValue]):
        self.block = block
        self.values = values  # id(Tensor) -> its SSA value in the function
        self.stages: dict[int, SSAValue] = {}
        self.axes: dict[tuple[int, int], SSAValue] = {}
        self.location: FileLineColLoc | None = None

    def add(self, op: Operation):
        if self.location is not None:
            op.location = self.location
        self.block.add_op(op)
        return op

    def stage(self, stage: Stage) -> SSAValue:
        handle = self.stages.get(id(stage))
        if handle is None:
            value = self.values.get(id(stage.tensor))
            if value is None:
                raise ValueError(
                    f"the schedule names tensor {stage.tensor.name}, which is not part "
                    "of the function built from these args"
                )
            handle = self.add(sched_ir.StageOp(value)).stage
            handle.name_hint = _hint(f"s_{stage.tensor.name}")
            self.stages[id(stage)] = handle
        return handle

    def bind_stage(self, stage: Stage, handle: SSAValue):
        handle.name_hint = _hint(f"s_{stage.tensor.name}")
        self.stages[id(stage)] = handle

    def axis(self, stage: Stage, iv: IterVar) -> SSAValue:
        handle = self.axes.get((id(stage), id(iv)))
        if handle is None:
            name = stage.root_names[id(iv)]
            handle = self.add(sched_ir.AxisOp(self.stage(stage), name)).axis
            handle.name_hint = _hint(name)
            self.axes[(id(stage), id(iv))] = handle
        return handle

    def bind(self, stage: Stage, iv: IterVar, handle: SSAValue):
        handle.name_hint = _hint(iv.name)
        self.axes[(id(stage), id(iv))] = handle


class _BodyEmitter:
    """Emits one compute's expression tree as arith/math/scf/te ops."""

    def __init__(self, tensors: dict[int, SSAValue]):
        self.tensors = tensors
        self.axes: dict[int, SSAValue] = {}
        self.scopes: list[dict[object, SSAValue]] = [{}]  # one per region; for CSE
        self.block: Block | None = None

    def _add(self, op: Operation) -> SSAValue:
        assert self.block is not None
        self.block.add_op(op)
        return op.results[0]

    def region(self, block: Block, expr: Expr, yield_op=te_ir.YieldOp) -> Region:
        """Fill `block` with `expr` and the op that yields it. Values made here are
        forgotten afterwards: they do not dominate code outside this region."""
        outer = self.block
        self.block = block
        self.scopes.append({})
        block.add_op(yield_op(self.emit(expr)))
        self.scopes.pop()
        self.block = outer
        return Region(block)

    def emit(self, e: Expr) -> SSAValue:
        # Equal constants are shared too; 1, 1.0 and True stay apart.
        key: object = ("const", type(e.value), e.value, e.dtype) if isinstance(e, Const) else id(e)
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        value = self._emit(e)
        self.scopes[-1][key] = value
        return value

    def _emit(self, e: Expr) -> SSAValue:
        if isinstance(e, IterVar):
            return self.axes[id(e)]
        if isinstance(e, Const):
            return self._const(e.value, e.dtype)
        if isinstance(e, Read):
            idx = [self.emit(i) for i in e.indices]
            return self._add(te_ir.ReadOp(self.tensors[id(e.tensor)], idx))
        if isinstance(e, Binary):
            return self._binary(e)
        if isinstance(e, Compare):
            return self._compare(e)
        if isinstance(e, Unary):
            return self._unary(e)
        if isinstance(e, Cast):
            return self._cast(self.emit(e.operand), e.operand.dtype, e.dtype)
        if isinstance(e, IfThenElse):
            return self._if(e)
        if isinstance(e, Reduce):
            return self._reduce(e)
        raise AssertionError(f"unknown expression node {type(e).__name__}")

    def _const(self, value, dtype: str) -> SSAValue:
        t = _ir_type(dtype)
        if _is_float(dtype):
            return self._add(arith.ConstantOp(FloatAttr(float(value), t)))
        return self._add(arith.ConstantOp(IntegerAttr(int(value), t)))

    def _binary(self, e: Binary) -> SSAValue:
        a, b = self.emit(e.lhs), self.emit(e.rhs)
        op = _FLOAT_BINARY[e.op] if _is_float(e.dtype) else _INT_BINARY[e.op]
        return self._add(op(a, b))

    def _compare(self, e: Compare) -> SSAValue:
        a, b = self.emit(e.lhs), self.emit(e.rhs)
        if _is_float(e.lhs.dtype):
            return self._add(arith.CmpfOp(a, b, _CMPF[e.op]))
        return self._add(arith.CmpiOp(a, b, _CMPI[e.op]))

    def _unary(self, e: Unary) -> SSAValue:
        x = self.emit(e.operand)
        if e.op == "neg":
            if _is_float(e.dtype):
                return self._add(arith.NegfOp(x))
            return self._add(arith.SubiOp(self._const(0, e.dtype), x))
        if e.op == "abs":
            return self._add(xmath.AbsFOp(x) if _is_float(e.dtype) else xmath.AbsIOp(x))
        return self._add(_MATH[e.op](x))

    def _cast(self, x: SSAValue, src: str, dst: str) -> SSAValue:
        if src == "bool":  # true -> 1, like numpy (extui/uitofp would do, select is plainer)
            return self._add(arith.SelectOp(x, self._const(1, dst), self._const(0, dst)))
        if dst == "bool":  # nonzero -> true, like numpy (NaN is nonzero)
            zero = self._const(0, src)
            if _is_float(src):
                return self._add(arith.CmpfOp(x, zero, "une"))
            return self._add(arith.CmpiOp(x, zero, "ne"))
        if src == INDEX:
            if _is_int(dst):
                return self._add(arith.IndexCastOp(x, _ir_type(dst)))
            return self._add(arith.SIToFPOp(self._add(arith.IndexCastOp(x, i64)), _ir_type(dst)))
        if dst == INDEX:
            if _is_float(src):
                x, src = self._add(arith.FPToSIOp(x, i64)), "int64"
            return self._add(arith.IndexCastOp(x, IndexType()))
        t = _ir_type(dst)
        if _is_float(src) and _is_float(dst):
            op = arith.ExtFOp if _width(dst) > _width(src) else arith.TruncFOp
        elif _is_int(src) and _is_int(dst):
            op = arith.ExtSIOp if _width(dst) > _width(src) else arith.TruncIOp
        else:
            op = arith.SIToFPOp if _is_float(dst) else arith.FPToSIOp
        return self._add(op(x, t))

    def _if(self, e: IfThenElse) -> SSAValue:
        cond = self.emit(e.cond)
        then_region = self.region(Block(), e.then, scf.YieldOp)
        else_region = self.region(Block(), e.orelse, scf.YieldOp)
        return self._add(scf.IfOp(cond, [_ir_type(e.dtype)], then_region, else_region))

    def _reduce(self, e: Reduce) -> SSAValue:
        names = [self.axis_names[id(a)] for a in e.axes]
        block = te_ir.new_block(len(e.axes))
        for a, arg, n in zip(e.axes, block.args, names):
            arg.name_hint = _hint(n)
            self.axes[id(a)] = arg
        body = self.region(block, e.body)
        op = te_ir.ReduceOp(e.kind, names, [a.dom for a in e.axes], _ir_type(e.dtype), body)
        return self._add(op)

    def compute(self, t: Tensor, name: str) -> te_ir.ComputeOp:
        op = t.op
        assert isinstance(op, ComputeOp)
        self.axis_names = op.axis_names
        block = te_ir.new_block(len(op.axis))
        for a, arg in zip(op.axis, block.args):
            arg.name_hint = _hint(op.axis_names[id(a)])
            self.axes[id(a)] = arg
        body = self.region(block, op.body)
        names = [op.axis_names[id(a)] for a in op.axis]
        compute_op = te_ir.ComputeOp(name, names, _tensor_type(t), body)
        if op.location is not None:
            compute_op.location = op.location
        return compute_op


_FLOAT_BINARY = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp,
                 "div": arith.DivfOp, "max": arith.MaximumfOp,
                 "min": arith.MinimumfOp}  # fmt: skip
_INT_BINARY = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp,
               "floordiv": arith.FloorDivSIOp, "mod": arith.RemSIOp, "max": arith.MaxSIOp,
               "min": arith.MinSIOp, "and": arith.AndIOp, "or": arith.OrIOp}  # fmt: skip
# Ordered predicates for floats, except != (unordered, so NaN != x as in numpy).
_CMPF = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_CMPI = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_MATH = {"exp": xmath.ExpOp, "log": xmath.LogOp, "sqrt": xmath.SqrtOp,
         "tanh": xmath.TanhOp, "erf": xmath.ErfOp}  # fmt: skip


def _unique_names(tensors: Sequence[Tensor]) -> dict[int, str]:
    """Tensor names made unique in one function (`compute`, `compute_1`, ...)."""
    taken: set[str] = set()
    names: dict[int, str] = {}
    for t in tensors:
        name, n = t.name, 0
        while name in taken:
            n += 1
            name = f"{t.name}_{n}"
        taken.add(name)
        names[id(t)] = name
    return names


def build_module(s: Schedule | None, args: Sequence[Tensor], name: str = "main") -> ModuleOp:
    """The te + sched IR of `args`' computes, scheduled by `s`, as one function.

    The function takes the placeholders in `args` (in order) and returns the computed
    tensors in `args` (in order); it holds every compute they need, producers first,
    and the schedule at the end. The module is verified before it is returned.
    """
    args = list(args)
    for t in args:
        if isinstance(t, CacheTensor):
            raise ValueError(f"{t.name} is a cache stage, not a tensor the function can take")
        if not isinstance(t, Tensor):
            raise ValueError(f"args must be te tensors, not {t!r}")
    if len({id(t) for t in args}) != len(args):
        raise ValueError("a tensor appears twice in args")
    inputs = [t for t in args if isinstance(t.op, PlaceholderOp)]
    outputs = [t for t in args if isinstance(t.op, ComputeOp)]
    if not outputs:
        raise ValueError("args must include at least one computed tensor (an output)")
    order = _reachable(outputs)
    input_ids = {id(t) for t in inputs}
    for t in order:
        if isinstance(t.op, PlaceholderOp) and id(t) not in input_ids:
            raise ValueError(
                f"placeholder {t.name} is read by the computation but not listed in args"
            )
    computes = [t for t in order if isinstance(t.op, ComputeOp)]
    names = _unique_names(inputs + computes)

    arg_attrs = ArrayAttr([DictionaryAttr({"tc.name": StringAttr(names[id(t)])}) for t in inputs])
    function = func.FuncOp(
        name,
        ([_tensor_type(t) for t in inputs], [_tensor_type(t) for t in outputs]),
        arg_attrs=arg_attrs,
    )
    body = function.body.block
    values: dict[int, SSAValue] = {}
    for t, arg in zip(inputs, body.args):
        arg.name_hint = _hint(names[id(t)])
        values[id(t)] = arg
    for t in computes:
        op = _BodyEmitter(values).compute(t, names[id(t)])
        body.add_op(op)
        op.result.name_hint = _hint(names[id(t)])
        values[id(t)] = op.result

    if s is not None and s._steps:
        sched_block = Block()
        emitter = _ScheduleEmitter(sched_block, values)
        for step, location in s._steps:
            emitter.location = location
            step(emitter)
        body.add_op(sched_ir.ScheduleOp(Region(sched_block)))
    body.add_op(func.ReturnOp(*[values[id(t)] for t in outputs]))
    module = ModuleOp([function])
    verify_module(module)
    return module


# te.sum/max/min shadow Python builtins; bound last, and the code above uses
# `builtins.` for the Python ones (abs, all and any are shadowed too).
sum = reduce_sum  # noqa: A001
max = reduce_max  # noqa: A001
min = reduce_min  # noqa: A001
