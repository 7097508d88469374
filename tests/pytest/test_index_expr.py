"""analysis/expr.py: `simplify` rewrites div/mod by what the atoms' ranges allow,
and never changes a value. Checked exhaustively on small ranges, for random
expressions nested one level (a split of a split, a fused axis read back)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tilecraft.analysis.expr import Div, Expr, Mod, simplify


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
