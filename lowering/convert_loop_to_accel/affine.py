"""convert-loop-to-accel's view of index functions: an index of a compute nest as
an affine function of its loop variables (`Affine`), found by finite differences
and checked on corners and sample points, or `NotAffine`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xdsl.ir import SSAValue


@dataclass
class _Loop:
    var: SSAValue
    extent: int


class _Affine:
    """f(v) = base + sum(coeff[k] * v[k]) over a nest's loop variables, found by finite
    differences and checked at the far corner and sample points."""

    def __init__(self, base: int, coeffs: list[int]):
        self.base, self.coeffs = base, coeffs

    def at(self, point: Sequence[int]) -> int:
        return self.base + sum(c * v for c, v in zip(self.coeffs, point))


class _NotAffine(Exception):
    pass


def _zero(n: int) -> _Affine:
    return _Affine(0, [0] * n)


def _project(fit: _Affine, keep: list[int], n: int) -> _Affine:
    return _Affine(fit.base, [fit.coeffs[k] if k in keep else 0 for k in range(n)])
