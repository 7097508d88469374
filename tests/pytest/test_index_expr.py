"""analysis/expr.py: `simplify` rewrites div/mod by what the atoms' ranges allow,
and never changes a value. Checked exhaustively on small ranges, for random
expressions nested one level (a split of a split, a fused axis read back)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tilecraft.analysis.expr import (
    Div,
    Expr,
    Mod,
    bounds,
    evaluate as evaluate_expr,
    exact_range,
    lower_bound,
    nonnegative,
    simplify,
)


def evaluate(e: Expr, values: dict) -> int:
    total = e.const
    for a, c in e.terms.items():
        if isinstance(a, Div):
            v = evaluate(a.expr, values) // a.divisor
        elif isinstance(a, Mod):
            v = evaluate(a.expr, values) % a.divisor
        else:
            v = values[a]
        total += c * v
    return total


def test_split_parts_come_back():
    o, n = Expr.var("o"), Expr.var("n")
    ranges = {"o": (0, 3), "n": (0, 15)}
    i = o * 16 + n
    assert simplify(i.floordiv(16), ranges.__getitem__) == o
    assert simplify(i.mod(16), ranges.__getitem__) == n
    assert simplify((i + 32).floordiv(16), ranges.__getitem__) == o + 2
    # n + 1 may reach 16: nothing to simplify.
    assert simplify((i + 1).floordiv(16), ranges.__getitem__) == (i + 1).floordiv(16)


def test_unknown_atoms_are_left_alone():
    e = (Expr.var("x") * 4 + Expr.var("y")).floordiv(4)
    assert simplify(e, {"x": (0, 9)}.__getitem__) == e


@settings(max_examples=200, deadline=None)
@given(
    coeffs=st.lists(st.integers(-8, 8), min_size=2, max_size=2),
    const=st.integers(-20, 20),
    extents=st.lists(st.integers(1, 6), min_size=2, max_size=2),
    d1=st.integers(1, 8),
    d2=st.integers(1, 8),
    outer=st.integers(-3, 3),
)
def test_simplify_keeps_values(coeffs, const, extents, d1, d2, outer):
    atoms = ["a", "b"]
    ranges = {a: (0, n - 1) for a, n in zip(atoms, extents)}
    base = Expr({a: c for a, c in zip(atoms, coeffs)}, const)
    e = base.floordiv(d1) * outer + base.mod(d2) + (base.floordiv(d1) * d2 + Expr.var("b")).mod(d2)
    s = simplify(e, ranges.__getitem__)
    for values in itertools.product(*(range(n) for n in extents)):
        env = dict(zip(atoms, values))
        assert evaluate(s, env) == evaluate(e, env)


def test_floor_semantics_of_div_and_mod_atoms():
    """Div and Mod are floor division and floor modulo, as `//` and `%` in te."""
    i = Expr.var("i")
    e = (i - 1).mod(4) + (i - 5).floordiv(2)
    for v in range(-3, 8):
        assert evaluate_expr(e, {"i": v}.__getitem__) == (v - 1) % 4 + (v - 5) // 2
    assert Expr(const=-1).mod(4) == 3 and Expr(const=-1).floordiv(4) == -1


def test_lower_bound_and_nonnegative():
    i, j = Expr.var("i"), Expr.var("j")
    assert nonnegative(i * 3 + j.floordiv(2) + (i - 7).mod(4))
    assert not nonnegative(i - 1)
    assert not nonnegative((i - 1).floordiv(4))
    assert lower_bound(i + 2, {"i": -1}.get) == 1
    assert lower_bound(i + 2, {}.get) is None  # an atom of unknown range


def test_exact_range_enumerates_small_domains():
    i = Expr.var("i")
    ranges = {"i": (0, 7)}.__getitem__
    # Interval arithmetic cannot see that i - 2*(i // 2) is i % 2.
    e = i - i.floordiv(2) * 2
    assert bounds(e, ranges) == (-6, 7)
    assert exact_range(e, ranges) == (0, 1)
    assert exact_range((i - 1).mod(4) + 1, {"i": (0, 0)}.__getitem__) == (4, 4)
    # Past the enumeration limit it falls back to bounds.
    assert exact_range(e, ranges, limit=4) == (-6, 7)
