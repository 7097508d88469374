"""`tilecraft.tir`: the scalar functions of TVM's `tvm.tir` that te programs use.

Index arithmetic (`indexdiv`, `indexmod`, `floordiv`, `floormod`, `truncdiv`,
`truncmod`), math (`exp`, `log`, ...), `const`, `Select`, `min_value` /
`max_value`, `call_pure_extern` for the C math functions LLVM knows, and
`call_packed` for `te.extern` bodies. Anything else of `tvm.tir` raises
`NotImplementedError` naming it.
"""

from __future__ import annotations

from tilecraft.compat import UnsupportedError

from tilecraft.frontends.te import expr as _expr
from tilecraft.frontends.te.dtypes import _is_float
from tilecraft.frontends.te.expr import Expr, _default_literal, const
from tilecraft.frontends.te.extern import PackedCall, call_packed
from tilecraft.frontends.te.ops import (
    abs,
    erf,
    exp,
    if_then_else,
    log,
    max_value,
    min_value,
    max as _reduce_max,
    maximum,
    min as _reduce_min,
    minimum,
    sigmoid,
    sqrt,
    tanh,
)

__all__ = [
    "Select", "abs", "call_packed", "call_pure_extern", "const", "erf", "exp", "floordiv",
    "floormod", "if_then_else", "indexdiv", "indexmod", "log", "max_value", "min_value",
    "sigmoid", "sqrt", "tanh", "truncdiv", "truncmod",
]  # fmt: skip

del _reduce_max, _reduce_min  # tvm.tir.max/min are elementwise: see max/min below


def max(a, b) -> Expr:  # noqa: A001 - TVM's name
    return maximum(a, b)


def min(a, b) -> Expr:  # noqa: A001 - TVM's name
    return minimum(a, b)


def _division(name: str, fallback):
    """The te frontend's `name` (floor/trunc division, defined in `te.expr`), or the
    Python operator that means the same where the frontend has no function yet."""

    def apply(a, b) -> Expr:
        own = getattr(_expr, name, None)
        if own is not None:
            return own(a, b)
        if fallback is None:
            raise NotImplementedError(f"tvm.tir.{name} is not available in this tilecraft")
        return fallback(_default_literal(a), b) if not isinstance(a, Expr) else fallback(a, b)

    apply.__name__ = name
    return apply


floordiv = _division("floordiv", lambda a, b: a // b)
floormod = _division("floormod", lambda a, b: a % b)
truncdiv = _division("truncdiv", None)
truncmod = _division("truncmod", None)
# TVM's index division is floor division (its `indexdiv` / `indexmod` lower to it).
indexdiv = floordiv
indexmod = floormod


def Select(cond, true_value, false_value) -> Expr:  # noqa: N802 - TVM's name
    """`tvm.tir.Select(c, a, b)`: a where c holds, else b."""
    return if_then_else(cond, true_value, false_value)


# C math functions by name (float and double spellings, CUDA's fast ones too).
_EXTERN_MATH = {
    "exp": exp, "expf": exp, "__expf": exp, "log": log, "logf": log, "__logf": log,
    "sqrt": sqrt, "sqrtf": sqrt, "tanh": tanh, "tanhf": tanh, "erf": erf, "erff": erf,
    "fabs": abs, "fabsf": abs,
}  # fmt: skip


def call_pure_extern(dtype: str, func_name: str, *args) -> Expr:
    """`tvm.tir.call_pure_extern("float32", "expf", x)`: a C math function LLVM knows."""
    f = _EXTERN_MATH.get(func_name)
    if f is None:
        raise NotImplementedError(
            f"tvm.tir.call_pure_extern({func_name!r}): tilecraft knows the C math functions "
            f"{', '.join(sorted(_EXTERN_MATH))}"
        )
    if len(args) != 1:
        raise ValueError(f"{func_name} takes one argument, got {len(args)}")
    result = f(args[0])
    if result.dtype != dtype:
        raise ValueError(f"{func_name} of a {result.dtype} value is {result.dtype}, not {dtype}")
    return result


call_extern = call_pure_extern


def _unsupported(name: str, why: str):
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"tvm.tir.{name}: {why}")

    refuse.__name__ = name
    return refuse


decl_buffer = _unsupported(
    "decl_buffer",
    "buffers are declared for tensorize (te.decl_tensor_intrin), which belongs to the "
    "accelerator flow; tilecraft's te functions take numpy arrays directly",
)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedError(f"tvm.tir.{name} is not supported by tilecraft (see the README's Compatibility section)")

