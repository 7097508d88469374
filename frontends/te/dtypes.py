"""dtypes of te expressions: their names, their IR types and the promotion rule."""

from __future__ import annotations

import numbers

from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    Signedness,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

from tilecraft.utils.dtypes import NARROW_FLOATS

INDEX = "index"
_FLOATS = {"float16": (16, f16), "float32": (32, f32), "float64": (64, f64)}
_INTS = {"int8": (8, i8), "int16": (16, i16), "int32": (32, i32), "int64": (64, i64)}
# Unsigned integers are storage types: te reads and writes them and converts them
# with casts (zero-extending), but computes only on signed or float values.
_UINTS = {f"uint{n}": (n, IntegerType(n, Signedness.UNSIGNED)) for n in (2, 4, 8, 16, 32, 64)}
# So are the narrow types of ml_dtypes (one array element per byte, two for
# bfloat16): int4/int2 convert like the other integers (sign-extending), the
# floats by bit arithmetic (narrow.py): round to nearest even, NaN and infinity
# as each format has them.
_NARROW_INTS = {"int4": (4, IntegerType(4)), "int2": (2, IntegerType(2))}
# (named as ml_dtypes names them: te's dtype is the port's numpy dtype)
_NARROW_FLOATS = {dtype.name: (cls().bitwidth, cls()) for cls, dtype in NARROW_FLOATS.items()}
DTYPES = ("float32", "float64", "float16", "int32", "int64", "int8", "int16", "bool", *_UINTS,
          *_NARROW_INTS, *_NARROW_FLOATS)  # fmt: skip


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


def _is_narrow_float(dtype: str) -> bool:
    return dtype in _NARROW_FLOATS


def _is_storage(dtype: str) -> bool:
    """Read, written and cast, never computed on (see _UINTS and _NARROW_FLOATS)."""
    return dtype in _UINTS or dtype in _NARROW_INTS or dtype in _NARROW_FLOATS


def _ir_type(dtype: str) -> Attribute:
    if dtype == INDEX:
        return IndexType()
    if dtype == "bool":
        return i1
    return _table(dtype)[1]


def _width(dtype: str) -> int:
    return _table(dtype)[0]


def _table(dtype: str) -> tuple[int, Attribute]:
    for table in (_FLOATS, _INTS, _UINTS, _NARROW_INTS, _NARROW_FLOATS):
        if dtype in table:
            return table[dtype]
    raise KeyError(dtype)


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
