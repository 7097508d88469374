"""Symbolic integer index expressions: affine sums of atoms, with floor-div and mod.

Bound inference and loop generation reason about index arithmetic (`io*32 + ii`,
`(i + r) // 2`) without building IR first: which values an index takes while some
loops are fixed and others run, whether a guard can ever fail, how far a tile
reaches. An `Expr` is `sum(coeff * atom) + const`, where an atom is a loop
variable (any hashable object, compared by identity) or a `Div`/`Mod` of an Expr by
a positive constant. Expressions are immutable and simplify as they are built
(`(32*x) // 32` is `x`); `simplify` uses the atoms' ranges as well (`(32*x + y) // 32`
is `x` and `(32*x + y) % 32` is `y` when `0 <= y < 32`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by the two functions that evaluate over grids: the
    import numpy as np  # passes that only simplify expressions do not load numpy


@dataclass(frozen=True)
class Div:
    """floor(expr / divisor), divisor > 0."""

    expr: Expr
    divisor: int


@dataclass(frozen=True)
class Mod:
    """expr mod divisor (the floor-division remainder, in [0, divisor))."""

    expr: Expr
    divisor: int


class Expr:
    __slots__ = ("terms", "const", "_hash")

    def __init__(self, terms: dict[Hashable, int] | None = None, const: int = 0):
        self.terms = {a: c for a, c in (terms or {}).items() if c != 0}
        self.const = const
        self._hash = None

    @staticmethod
    def var(atom: Hashable) -> Expr:
        return Expr({atom: 1})

    @staticmethod
    def lift(value: Expr | int) -> Expr:
        return value if isinstance(value, Expr) else Expr(const=value)

    @property
    def is_const(self) -> bool:
        return not self.terms

    def __add__(self, other: Expr | int) -> Expr:
        other = Expr.lift(other)
        terms = dict(self.terms)
        for a, c in other.terms.items():
            terms[a] = terms.get(a, 0) + c
        return Expr(terms, self.const + other.const)

    __radd__ = __add__

    def __neg__(self) -> Expr:
        return Expr({a: -c for a, c in self.terms.items()}, -self.const)

    def __sub__(self, other: Expr | int) -> Expr:
        return self + (-Expr.lift(other))

    def __rsub__(self, other: Expr | int) -> Expr:
        return Expr.lift(other) - self

    def __mul__(self, k: int) -> Expr:
        if isinstance(k, Expr):
            if k.is_const:
                k = k.const
            elif self.is_const:
                return k * self.const
            else:
                raise NonAffine("product of two non-constant index expressions")
        return Expr({a: c * k for a, c in self.terms.items()}, self.const * k)

    __rmul__ = __mul__

    def _divisible_by(self, d: int) -> bool:
        return self.const % d == 0 and all(c % d == 0 for c in self.terms.values())

    def floordiv(self, d: int) -> Expr:
        if d <= 0:
            raise NonAffine("division by a non-positive constant")
        if d == 1:
            return self
        if self.is_const:
            return Expr(const=self.const // d)
        if self._divisible_by(d):
            return Expr({a: c // d for a, c in self.terms.items()}, self.const // d)
        return Expr.var(Div(self, d))

    def mod(self, d: int) -> Expr:
        if d <= 0:
            raise NonAffine("modulo by a non-positive constant")
        if d == 1 or self._divisible_by(d):
            return Expr()
        if self.is_const:
            return Expr(const=self.const % d)
        return Expr.var(Mod(self, d))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int):
            other = Expr(const=other)
        return (
            isinstance(other, Expr)
            and self.const == other.const
            and self.terms == other.terms
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((frozenset(self.terms.items()), self.const))
        return self._hash

    def __repr__(self) -> str:
        parts = [f"{c}*{a!r}" if c != 1 else f"{a!r}" for a, c in self.terms.items()]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)

    def atoms(self) -> set[Hashable]:
        """Every leaf atom (loop variable) this expression depends on."""
        out: set[Hashable] = set()
        for a in self.terms:
            if isinstance(a, (Div, Mod)):
                out |= a.expr.atoms()
            else:
                out.add(a)
        return out

    def substitute(self, mapping: Callable[[Hashable], Expr | None]) -> Expr:
        """Replace leaf atoms by expressions (`mapping` returns None to keep one)."""
        result = Expr(const=self.const)
        for a, c in self.terms.items():
            if isinstance(a, Div):
                new = a.expr.substitute(mapping).floordiv(a.divisor)
            elif isinstance(a, Mod):
                new = a.expr.substitute(mapping).mod(a.divisor)
            else:
                new = mapping(a)
                if new is None:
                    new = Expr.var(a)
            result = result + new * c
        return result


class NonAffine(Exception):
    """An index computation this analysis cannot follow (bounds fall back to the whole tensor)."""


Range = tuple[int, int]  # inclusive


def bounds(expr: Expr, atom_range: Callable[[Hashable], Range]) -> Range:
    """Inclusive [lo, hi] of `expr` when each leaf atom ranges over `atom_range(atom)`."""
    lo = hi = expr.const
    for a, c in expr.terms.items():
        if isinstance(a, Div):
            alo, ahi = bounds(a.expr, atom_range)
            alo, ahi = alo // a.divisor, ahi // a.divisor
        elif isinstance(a, Mod):
            alo, ahi = bounds(a.expr, atom_range)
            if alo >= 0 and ahi - alo + 1 < a.divisor and alo % a.divisor <= ahi % a.divisor:
                alo, ahi = alo % a.divisor, ahi % a.divisor
            else:
                alo, ahi = 0, a.divisor - 1
        else:
            alo, ahi = atom_range(a)
        if c >= 0:
            lo, hi = lo + c * alo, hi + c * ahi
        else:
            lo, hi = lo + c * ahi, hi + c * alo
    return lo, hi


def lower_bound(expr: Expr, lower: Callable[[Hashable], int | None]) -> int | None:
    """A lower bound of `expr` read from its form alone, when every term grows with
    its atom (`lower(atom)` bounds a leaf atom, None: unknown), else None."""
    lo = expr.const
    for a, c in expr.terms.items():
        if c < 0:
            return None
        if isinstance(a, Div):
            inner = lower_bound(a.expr, lower)
            alo = None if inner is None else inner // a.divisor
        elif isinstance(a, Mod):
            alo = 0
        else:
            alo = lower(a)
        if alo is None:
            return None
        lo += c * alo
    return lo


def nonnegative(expr: Expr, lower: Callable[[Hashable], int | None] = lambda a: 0) -> bool:
    """Whether `expr` is never negative, judged by `lower_bound` (by default every
    leaf atom is a normalized loop variable, >= 0); where floor and truncated
    division agree."""
    lo = lower_bound(expr, lower)
    return lo is not None and lo >= 0


def evaluate(expr: Expr, value: Callable[[Hashable], "np.ndarray | int"]):
    """`expr` evaluated with numpy (floor division and modulo, as the atoms mean),
    each leaf atom given by `value` (arrays broadcast against each other)."""
    import numpy as np

    total = expr.const
    for a, c in expr.terms.items():
        if isinstance(a, Div):
            term = np.floor_divide(evaluate(a.expr, value), a.divisor)
        elif isinstance(a, Mod):
            term = np.mod(evaluate(a.expr, value), a.divisor)
        else:
            term = value(a)
        total = total + c * term
    return total


def exact_range(expr: Expr, atom_range: Callable[[Hashable], Range], limit: int = 1 << 20) -> Range:
    """Inclusive [lo, hi] of the values `expr` takes: by evaluating it over every
    combination of its atoms' values when there are at most `limit`, else `bounds`
    (which may be wider when an atom occurs in several terms, as in `i - i // 2 * 2`)."""
    atoms = list(expr.atoms())
    ranges = [atom_range(a) for a in atoms]
    if math.prod(hi - lo + 1 for lo, hi in ranges) > limit:
        return bounds(expr, atom_range)
    import numpy as np

    grids = {}
    for n, (a, (lo, hi)) in enumerate(zip(atoms, ranges)):
        shape = [1] * len(atoms)
        shape[n] = hi - lo + 1
        grids[a] = np.arange(lo, hi + 1, dtype=np.int64).reshape(shape)
    values = np.asarray(evaluate(expr, grids.__getitem__))
    return int(values.min()), int(values.max())


def simplify(expr: Expr, atom_range: Callable[[Hashable], Range]) -> Expr:
    """`expr` with each floor-div and mod by d of `d*q + r` rewritten to `q` and `r`
    where `0 <= r < d` for every value of the atoms (what splitting an axis and
    indexing a blocked tensor with the split parts produces). `atom_range` may raise
    KeyError for an atom it does not know; such terms stay as they are."""
    if all(not isinstance(a, (Div, Mod)) for a in expr.terms):
        return expr
    result = Expr(const=expr.const)
    for a, c in expr.terms.items():
        new = Expr.var(a)
        if isinstance(a, (Div, Mod)):
            inner, d = simplify(a.expr, atom_range), a.divisor
            quotient = Expr({t: k // d for t, k in inner.terms.items() if k % d == 0}, inner.const // d)
            rest = Expr({t: k for t, k in inner.terms.items() if k % d != 0}, inner.const % d)
            try:
                lo, hi = bounds(rest, atom_range)
            except KeyError:
                lo, hi = -1, d
            if 0 <= lo and hi < d:
                new = quotient if isinstance(a, Div) else rest
            else:
                new = inner.floordiv(d) if isinstance(a, Div) else inner.mod(d)
        result = result + new * c
    return result


def split_range(
    expr: Expr, is_free: Callable[[Hashable], bool], atom_range: Callable[[Hashable], Range]
) -> tuple[Expr, int]:
    """The values of `expr` as `(min, extent)` while free atoms run over their ranges
    and the others stay fixed: `min` is an expression in the fixed atoms, `extent`
    a constant that covers every fixed value (exact for affine expressions)."""
    fixed = Expr(const=expr.const)
    lo_free = hi_free = 0
    for a, c in expr.terms.items():
        if isinstance(a, (Div, Mod)):
            inner_min, inner_extent = split_range(a.expr, is_free, atom_range)
            if inner_extent == 1:
                sub = inner_min.floordiv(a.divisor) if isinstance(a, Div) else inner_min.mod(a.divisor)
                fixed = fixed + sub * c
                continue
            if isinstance(a, Div):
                exact = inner_min._divisible_by(a.divisor)
                span = (inner_extent - 1) // a.divisor + (1 if exact else 2)
                fixed = fixed + inner_min.floordiv(a.divisor) * c
                lo_a, hi_a = 0, span - 1
            else:
                lo_a, hi_a = 0, a.divisor - 1
            lo_free, hi_free = _accumulate(lo_free, hi_free, c, lo_a, hi_a)
        elif is_free(a):
            lo_a, hi_a = atom_range(a)
            lo_free, hi_free = _accumulate(lo_free, hi_free, c, lo_a, hi_a)
        else:
            fixed = fixed + Expr({a: c})
    return fixed + lo_free, hi_free - lo_free + 1


def _accumulate(lo: int, hi: int, c: int, alo: int, ahi: int) -> tuple[int, int]:
    if c >= 0:
        return lo + c * alo, hi + c * ahi
    return lo + c * ahi, hi + c * alo


def sum_exprs(items: Iterable[Expr]) -> Expr:
    total = Expr()
    for e in items:
        total = total + e
    return total
