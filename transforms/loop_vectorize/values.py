"""The three forms of a value while loop-vectorize writes a loop: uniform (a plain
SSA value), `Affine` (an index `base + stride * lane`) and `Vec` (a vector).
"""

from __future__ import annotations

from dataclasses import dataclass
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
)
from xdsl.ir import SSAValue


# Writing vector code ----------------------------------------------------------


@dataclass(frozen=True)
class Affine:
    """An index whose value in lane `l` is `base + stride * l`."""

    base: SSAValue
    stride: int


@dataclass(frozen=True)
class Vec:
    """A value that differs between lanes, as a `vector<W x T>`."""

    value: SSAValue


Lowered = SSAValue | Affine | Vec


def is_uniform(x: Lowered) -> bool:
    return isinstance(x, SSAValue)


def row_major_strides(shape: tuple[int, ...]) -> list[int]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def constant_of(value: SSAValue) -> int | float | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr | FloatAttr):
        return owner.value.value.data
    return None
