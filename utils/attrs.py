"""Builtin attributes made once and shared.

xDSL verifies an attribute's parameters each time one is constructed: an
`IntegerAttr` or a `VectorType` costs tens of microseconds, and the lowering
passes ask for the same few (a vector type per width, an icmp predicate, the
`nsw` flags) tens of thousands of times per model. Attributes are immutable,
so one instance per distinct value serves every op.
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, VectorType
from xdsl.ir import Attribute


@lru_cache(maxsize=1024)
def vector_type(element: Attribute, width: int) -> VectorType:
    """`vector<width x element>`."""
    return VectorType(element, [width])


@lru_cache(maxsize=4096)
def integer_attr(value: int, t: IntegerType | IndexType | int) -> IntegerAttr:
    """`IntegerAttr(value, t)` (`t` an integer type, index, or a width)."""
    return IntegerAttr(value, t)


@lru_cache(maxsize=64)
def integer_type(width: int) -> IntegerType:
    """The signless integer type of `width` bits."""
    return IntegerType(width)
