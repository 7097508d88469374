"""`tilecraft.tir`: the scalar functions of TVM's `tvm.tir` that te programs use.

Index arithmetic (`indexdiv`, `indexmod`, `floordiv`, `floormod`, `truncdiv`,
`truncmod`), math (`exp`, `log`, ...), `const`, `Select`, `min_value` /
`max_value`, `call_pure_extern` for the C math functions LLVM knows, and
`call_packed` for `te.extern` bodies. Anything else of `tvm.tir` raises
`NotImplementedError` naming it.
"""

from __future__ import annotations

from tilecraft.utils.unsupported import UnsupportedError
from tilecraft.frontends.te.expr import (
    Expr,
    const,
    floordiv,
    floormod,
    indexdiv,
    indexmod,
    truncdiv,
    truncmod,
)
from tilecraft.frontends.te.extern import PackedCall, call_packed
from tilecraft.frontends.te.ops import (
    abs,
    erf,
    exp,
    if_then_else,
    log,
    max_value,
    min_value,
    maximum,
    minimum,
    sigmoid,
    sqrt,
    tanh,
)

__all__ = [
    "PackedCall", "Select", "abs", "call_packed", "call_pure_extern", "const", "erf", "exp", "floordiv",
    "floormod", "if_then_else", "indexdiv", "indexmod", "log", "max_value", "min_value",
    "reinterpret", "sigmoid", "sqrt", "tanh", "truncdiv", "truncmod",
]  # fmt: skip


def max(a, b) -> Expr:  # noqa: A001 - TVM's name; elementwise, unlike te.max
    return maximum(a, b)


def min(a, b) -> Expr:  # noqa: A001 - TVM's name
    return minimum(a, b)


def reinterpret(dtype: str, value) -> Expr:
    """`tvm.tir.reinterpret(dtype, x)`: x's bits read as `dtype` (te.reinterpret)."""
    from tilecraft.frontends.te.expr import reinterpret as te_reinterpret

    return te_reinterpret(value, dtype)


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
    raise UnsupportedError(f"tvm.tir.{name} is not supported by tilecraft (see docs/guide/compatibility.md)")

