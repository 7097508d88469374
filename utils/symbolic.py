"""Symbolic sizes: `SymExpr`, a dimension known by name when compiling and by value
when a model is called (`batch`, `seq * 12`, `(h + 1) floordiv 2`).

A `SymExpr` is a polynomial with integer coefficients over *atoms*: names (`batch`)
and the floor division or remainder of an expression by a positive constant
(`FloorDiv`, `Mod`), which stay opaque. The polynomial is kept in one canonical
form — monomials of sorted atoms, no zero coefficients, divisions by a constant
simplified where the constant divides every coefficient — so two sizes that are
equal as written compare equal and hash alike, as the types holding them must.

Nothing here guesses: a comparison (`<`, `<=`, `bool`) or `int()` answers only
what holds for every value of the names (each at least its lower bound, 1 by
default, as a size is), and raises `SymbolicSizeError` otherwise, so code written
for int sizes fails loudly on a symbolic one instead of computing with it.

Text uses MLIR's affine spelling: `+`, `-`, `*`, `floordiv`, `ceildiv`, `mod`,
parentheses (`parse(str(e)) == e`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Union

Atom = Union[str, "FloorDiv", "Mod"]
Monomial = tuple  # sorted atoms, repeated for powers; () is the constant term


class SymbolicSizeError(ValueError):
    """A question about a symbolic size that its names do not decide, or a size
    that cannot be bound to the values given."""


@dataclass(frozen=True)
class FloorDiv:
    expr: SymExpr
    divisor: int

    def __str__(self) -> str:
        return f"({self.expr}) floordiv {self.divisor}"


@dataclass(frozen=True)
class Mod:
    expr: SymExpr
    divisor: int

    def __str__(self) -> str:
        return f"({self.expr}) mod {self.divisor}"


def _key(atom: Atom) -> tuple[int, str]:
    return (0, atom) if isinstance(atom, str) else (1, str(atom))


class SymExpr:
    """An integer polynomial over names and divisions by constants (immutable)."""

    __slots__ = ("_terms", "_hash")

    def __init__(self, terms: Mapping[Monomial, int] | None = None):
        self._terms: dict[Monomial, int] = {m: c for m, c in (terms or {}).items() if c}
        self._hash = hash(frozenset(self._terms.items()))

    # -- making ----------------------------------------------------------------------

    @staticmethod
    def lift(value: SymExpr | int | str) -> SymExpr:
        if isinstance(value, SymExpr):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise TypeError(f"a size is an int, a name or a SymExpr, not {value!r}")
        if isinstance(value, str):
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) or value in _KEYWORDS:
                raise SymbolicSizeError(f"'{value}' is not a size name (letters, digits, _)")
            return SymExpr({(value,): 1})
        return SymExpr({(): value})

    @staticmethod
    def _atom(atom: Atom) -> SymExpr:
        return SymExpr({(atom,): 1})

    # -- arithmetic ------------------------------------------------------------------

    def __add__(self, other: SymExpr | int) -> SymExpr:
        terms = dict(self._terms)
        for m, c in SymExpr.lift(other)._terms.items():
            terms[m] = terms.get(m, 0) + c
        return SymExpr(terms)

    __radd__ = __add__

    def __neg__(self) -> SymExpr:
        return SymExpr({m: -c for m, c in self._terms.items()})

    def __sub__(self, other: SymExpr | int) -> SymExpr:
        return self + -SymExpr.lift(other)

    def __rsub__(self, other: SymExpr | int) -> SymExpr:
        return SymExpr.lift(other) - self

    def __mul__(self, other: SymExpr | int) -> SymExpr:
        terms: dict[Monomial, int] = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in SymExpr.lift(other)._terms.items():
                m = tuple(sorted(m1 + m2, key=_key))
                terms[m] = terms.get(m, 0) + c1 * c2
        return SymExpr(terms)

    __rmul__ = __mul__

    def floordiv(self, divisor: int) -> SymExpr:
        """floor(self / divisor) for a positive int divisor."""
        divisor = _divisor(divisor, "floordiv")
        if self.is_constant:
            return SymExpr.lift(self.constant // divisor)
        if all(c % divisor == 0 for c in self._terms.values()):
            return SymExpr({m: c // divisor for m, c in self._terms.items()})
        # A constant part that is a multiple of the divisor comes out: (x + 8) // 4 = x // 4 + 2.
        shift = self._terms.get((), 0) // divisor * divisor
        rest = self - shift
        return SymExpr._atom(FloorDiv(rest, divisor)) + shift // divisor

    def ceildiv(self, divisor: int) -> SymExpr:
        return -((-self).floordiv(_divisor(divisor, "ceildiv")))

    def mod(self, divisor: int) -> SymExpr:
        """self mod divisor, in [0, divisor), for a positive int divisor."""
        divisor = _divisor(divisor, "mod")
        if self.is_constant:
            return SymExpr.lift(self.constant % divisor)
        if all(c % divisor == 0 for c in self._terms.values()):
            return SymExpr()
        # Coefficients and the constant term count only modulo the divisor: (5x + 9) mod 4 = (x + 1) mod 4.
        reduced = SymExpr({m: c % divisor for m, c in self._terms.items()})
        return SymExpr._atom(Mod(reduced, divisor))

    def exact_quotient(self, divisor: SymExpr | int) -> SymExpr | None:
        """self / divisor when a monomial `divisor` divides every term (`batch * seq * 64`
        by `seq * 2` is `batch * 32`), else None."""
        d = SymExpr.lift(divisor)
        if len(d._terms) != 1:
            return None
        [(atoms, coefficient)] = d._terms.items()
        terms: dict[Monomial, int] = {}
        for m, c in self._terms.items():
            rest = list(m)
            for atom in atoms:
                if atom not in rest:
                    return None
                rest.remove(atom)
            if c % coefficient:
                return None
            terms[tuple(rest)] = c // coefficient
        return SymExpr(terms)

    def __floordiv__(self, divisor: int) -> SymExpr:
        return self.floordiv(divisor)

    def __mod__(self, divisor: int) -> SymExpr:
        return self.mod(divisor)

    # -- reading ---------------------------------------------------------------------

    @property
    def is_constant(self) -> bool:
        return all(m == () for m in self._terms)

    @property
    def constant(self) -> int:
        """The constant term."""
        return self._terms.get((), 0)

    @property
    def constant_term(self) -> int:
        return self._terms.get((), 0)

    def terms(self) -> list[tuple[Monomial, int]]:
        """The non-constant terms: (atoms multiplied, coefficient)."""
        return [(m, c) for m, c in self._terms.items() if m]

    def free_names(self) -> set[str]:
        names: set[str] = set()
        for m in self._terms:
            for atom in m:
                names |= {atom} if isinstance(atom, str) else atom.expr.free_names()
        return names

    def evaluate(self, bindings: Mapping[str, int]) -> int:
        """The value when each name has the value `bindings` gives."""
        missing = self.free_names() - set(bindings)
        if missing:
            raise SymbolicSizeError(f"no value for {', '.join(sorted(missing))} in {self}")
        total = 0
        for m, c in self._terms.items():
            total += c * math.prod(_atom_value(a, bindings) for a in m)
        return total

    def substitute(self, mapping: Mapping[str, SymExpr | int]) -> SymExpr:
        """The expression with names replaced (others kept)."""
        total = SymExpr()
        for m, c in self._terms.items():
            term = SymExpr.lift(c)
            for atom in m:
                if isinstance(atom, str):
                    term = term * (SymExpr.lift(mapping[atom]) if atom in mapping else SymExpr._atom(atom))
                elif isinstance(atom, FloorDiv):
                    term = term * atom.expr.substitute(mapping).floordiv(atom.divisor)
                else:
                    term = term * atom.expr.substitute(mapping).mod(atom.divisor)
            total = total + term
        return total

    # -- questions that must be decided -----------------------------------------------

    def nonnegative(self, lower: Mapping[str, int] | None = None) -> bool:
        """Whether self >= 0 for every value of its names at or above their lower
        bounds (1 unless `lower` says otherwise). False means "not provable"."""
        lower = lower or {}
        shifted = self.substitute({n: SymExpr.lift(n) + lower.get(n, 1) for n in self.free_names()})
        # Every name is now >= 0, and so is a floordiv of what is >= 0 and any mod.
        for m, c in shifted._terms.items():
            if c < 0:
                return False
            for atom in m:
                if isinstance(atom, FloorDiv) and not atom.expr.nonnegative({n: 0 for n in atom.expr.free_names()}):
                    return False
        return True

    def __bool__(self) -> bool:
        if self.is_constant:
            return self.constant != 0
        if (self - 1).nonnegative():
            return True
        raise SymbolicSizeError(f"whether {self} is zero depends on {', '.join(sorted(self.free_names()))}")

    def __int__(self) -> int:
        if not self.is_constant:
            raise SymbolicSizeError(f"{self} is not a number when compiling (it depends on "
                                    f"{', '.join(sorted(self.free_names()))})")  # fmt: skip
        return self.constant

    __index__ = __int__

    def _order(self, other: SymExpr | int, strict: bool) -> bool:
        gap = SymExpr.lift(other) - self - (1 if strict else 0)
        if gap.nonnegative():
            return True
        if (-gap - 1).nonnegative():
            return False
        raise SymbolicSizeError(f"whether {self} {'<' if strict else '<='} {SymExpr.lift(other)} depends on the sizes")

    def __lt__(self, other: SymExpr | int) -> bool:
        return self._order(other, strict=True)

    def __le__(self, other: SymExpr | int) -> bool:
        return self._order(other, strict=False)

    def __gt__(self, other: SymExpr | int) -> bool:
        return SymExpr.lift(other)._order(self, strict=True)

    def __ge__(self, other: SymExpr | int) -> bool:
        return SymExpr.lift(other)._order(self, strict=False)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (int, str)) and not isinstance(other, bool):
            other = SymExpr.lift(other)
        return isinstance(other, SymExpr) and self._terms == other._terms

    def __hash__(self) -> int:
        return self._hash if not self.is_constant else hash(self.constant)

    # -- text ------------------------------------------------------------------------

    def __str__(self) -> str:
        if not self._terms:
            return "0"
        parts: list[str] = []
        for m in sorted(self._terms, key=lambda m: (len(m) == 0, [_key(a) for a in m])):
            c = self._terms[m]
            alone = len(m) == 1 and c == 1  # (a division in a product or negated is parenthesized)
            factors = [a if isinstance(a, str) else str(a) if alone else f"({a})" for a in m]
            text = " * ".join(([str(abs(c))] if abs(c) != 1 or not m else []) + factors)
            parts.append(("- " if c < 0 else "+ ") + text)
        out = " ".join(parts)
        return out[2:] if out.startswith("+ ") else "-" + out[2:]

    def __repr__(self) -> str:  # (as written: a shape in a message reads `(batch, 8)`)
        return str(self)


_KEYWORDS = {"floordiv", "ceildiv", "mod"}


def _divisor(divisor: int, what: str) -> int:
    if isinstance(divisor, SymExpr):
        divisor = int(divisor)
    if isinstance(divisor, bool) or not isinstance(divisor, int) or divisor <= 0:
        raise SymbolicSizeError(f"{what} takes a positive constant, not {divisor}")
    return divisor


def _atom_value(atom: Atom, bindings: Mapping[str, int]) -> int:
    if isinstance(atom, str):
        return int(bindings[atom])
    value = atom.expr.evaluate(bindings)
    return value // atom.divisor if isinstance(atom, FloorDiv) else value % atom.divisor


def size(value: SymExpr | int | str) -> SymExpr | int:
    """A size as the types keep it: an int when it is one, else a SymExpr."""
    e = SymExpr.lift(value)
    return e.constant if e.is_constant else e


# -- parsing ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def parse(text: str) -> SymExpr:
    """A size from its text (`batch * seq`, `(h + 1) floordiv 2`); a
    SymbolicSizeError names the position of what is wrong."""
    tokens: list[tuple[str, str, int]] = []
    for match in _TOKEN.finditer(text):
        number, name, other = match.groups()
        if number is not None:
            tokens.append(("int", number, match.start(1)))
        elif name is not None:
            tokens.append(("name" if name not in _KEYWORDS else name, name, match.start(2)))
        elif other is not None and not other.isspace():
            tokens.append((other, other, match.start(3)))
    pos = 0

    def fail(message: str) -> SymbolicSizeError:
        where = tokens[pos][2] if pos < len(tokens) else len(text)
        return SymbolicSizeError(f"in size '{text}' at column {where + 1}: {message}")

    def peek() -> str | None:
        return tokens[pos][0] if pos < len(tokens) else None

    def take(kind: str) -> str:
        nonlocal pos
        if peek() != kind:
            raise fail(f"expected {kind}")
        pos += 1
        return tokens[pos - 1][1]

    def expr() -> SymExpr:
        value = term()
        while peek() in ("+", "-"):
            value = value + term() if take(str(peek())) == "+" else value - term()
        return value

    def term() -> SymExpr:
        value = factor()
        while peek() in ("*", "floordiv", "ceildiv", "mod"):
            op = take(str(peek()))
            if op == "*":
                value = value * factor()
            else:
                divisor = int(take("int"))
                value = {"floordiv": value.floordiv, "ceildiv": value.ceildiv, "mod": value.mod}[op](divisor)
        return value

    def factor() -> SymExpr:
        kind = peek()
        if kind == "int":
            return SymExpr.lift(int(take("int")))
        if kind == "name":
            return SymExpr.lift(take("name"))
        if kind == "-":
            take("-")
            return -factor()
        if kind == "(":
            take("(")
            value = expr()
            take(")")
            return value
        raise fail("expected a number, a name or '('")

    result = expr()
    if pos != len(tokens):
        raise fail("unexpected text")
    return result


def bind(declared: Sequence[SymExpr | int], actual: Sequence[int], what: str,
         bindings: dict[str, int] | None = None) -> dict[str, int]:  # fmt: skip
    """The values of the names in `declared` (a shape) given the shape `actual`
    of the array called `what`, added to `bindings` (sizes bound by earlier
    arrays); a SymbolicSizeError names the array, the dimension and the name
    when they disagree or a size is not positive."""
    bindings = dict(bindings or {})
    if len(declared) != len(actual):
        raise SymbolicSizeError(f"{what} has {len(actual)} dimensions, expected {len(declared)}")
    for k, (d, n) in enumerate(zip(declared, actual)):
        e = SymExpr.lift(d)
        names = e.free_names()
        if len(names) == 1 and e == SymExpr.lift(next(iter(names))) and next(iter(names)) not in bindings:
            if n < 1:
                raise SymbolicSizeError(f"{what}: dimension {k} ({e}) is {n}; a size is at least 1")
            bindings[str(e)] = int(n)
    for k, (d, n) in enumerate(zip(declared, actual)):
        e = SymExpr.lift(d)
        if e.free_names() - set(bindings):
            raise SymbolicSizeError(f"{what}: dimension {k} ({e}) cannot be solved for "
                                    f"{', '.join(sorted(e.free_names() - set(bindings)))}")  # fmt: skip
        expected = e.evaluate(bindings)
        if expected != n and e.is_constant:
            raise SymbolicSizeError(f"{what}: dimension {k} is {n}, expected {expected}")
        if expected != n:
            given = ", ".join(f"{name} = {bindings[name]}" for name in sorted(e.free_names()))
            raise SymbolicSizeError(f"{what}: dimension {k} is {n}, but {e} is {expected}"
                                    + (f" ({given})" if given else ""))  # fmt: skip
    return bindings
