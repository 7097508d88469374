"""dtypes of te expressions: their names, their IR types and the promotion rule."""

from __future__ import annotations

import numbers

from xdsl.dialects.builtin import IndexType, IntegerType, Signedness, f16, f32, f64, i1, i8, i16, i32, i64
from xdsl.ir import Attribute

INDEX = "index"
_FLOATS = {"float16": (16, f16), "float32": (32, f32), "float64": (64, f64)}
_INTS = {"int8": (8, i8), "int16": (16, i16), "int32": (32, i32), "int64": (64, i64)}
# Unsigned integers are storage types: te reads and writes them and converts them
# with casts (zero-extending), but computes only on signed or float values.
_UINTS = {f"uint{n}": (n, IntegerType(n, Signedness.UNSIGNED)) for n in (8, 16, 32, 64)}
DTYPES = ("float32", "float64", "float16", "int32", "int64", "int8", "int16", "bool", *_UINTS)


def _check_dtype(dtype: str) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"unsupported dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    return dtype


def _is_float(dtype: str) -> bool:
    return dtype in _FLOATS


def _is_int(dtype: str) -> bool:
    return dtype in _INTS


def _is_unsigned(dtype: str) -> bool:
    return dtype in _UINTS


def _ir_type(dtype: str) -> Attribute:
    if dtype == INDEX:
        return IndexType()
    if dtype == "bool":
        return i1
    return (_FLOATS.get(dtype) or _INTS.get(dtype) or _UINTS[dtype])[1]


def _width(dtype: str) -> int:
    return (_FLOATS.get(dtype) or _INTS.get(dtype) or _UINTS[dtype])[0]


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


def _is_integral(x) -> bool:
    """An int or numpy integer, not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)
