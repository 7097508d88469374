"""Symbolic sizes (utils/symbolic.py): random expressions evaluate as the same
integer arithmetic does, print and parse back to themselves, compare equal when
they are the same polynomial; questions the names do not decide raise; binding a
shape to an array's names its dimension."""

from __future__ import annotations

import random

import pytest

from tilecraft.utils.symbolic import SymbolicSizeError, SymExpr, bind, parse, size

NAMES = ("batch", "seq", "h")


def random_expr(rng: random.Random, depth: int = 3):
    """(SymExpr, the same as a function of the names' values)."""
    if depth == 0 or rng.random() < 0.3:
        if rng.random() < 0.5:
            k = rng.randint(-9, 9)
            return SymExpr.lift(k), lambda v, k=k: k
        name = rng.choice(NAMES)
        return SymExpr.lift(name), lambda v, name=name: v[name]
    a, fa = random_expr(rng, depth - 1)
    op = rng.choice(["+", "-", "*", "floordiv", "ceildiv", "mod", "neg"])
    if op == "neg":
        return -a, lambda v: -fa(v)
    if op in ("floordiv", "ceildiv", "mod"):
        d = rng.randint(1, 7)
        if op == "floordiv":
            return a.floordiv(d), lambda v: fa(v) // d
        if op == "ceildiv":
            return a.ceildiv(d), lambda v: -(-fa(v) // d)
        return a.mod(d), lambda v: fa(v) % d
    b, fb = random_expr(rng, depth - 1)
    if op == "+":
        return a + b, lambda v: fa(v) + fb(v)
    if op == "-":
        return a - b, lambda v: fa(v) - fb(v)
    return a * b, lambda v: fa(v) * fb(v)


@pytest.mark.parametrize("seed", range(200))
def test_random_expressions_evaluate_print_and_parse(seed):
    rng = random.Random(seed)
    e, f = random_expr(rng)
    assert parse(str(e)) == e, str(e)
    assert hash(parse(str(e))) == hash(e)
    for _ in range(5):
        values = {n: rng.randint(1, 40) for n in NAMES}
        assert e.evaluate(values) == f(values), (str(e), values)
        assert parse(str(e)).evaluate(values) == f(values)


def test_canonical_forms_compare_equal():
    b, s = SymExpr.lift("batch"), SymExpr.lift("seq")
    assert b * s * 12 == 12 * s * b == parse("seq * 12 * batch")
    assert (b * 4 + 8).floordiv(4) == b + 2  # a divisor of every coefficient divides out
    assert (b * 6).mod(3) == 0 and (b + 9).mod(4) == (b + 1).mod(4)
    assert b - b == 0 and size(b - b + 7) == 7 and isinstance(size(b + 0), SymExpr)
    assert {b * s: 1}[parse("batch * seq")] == 1 and hash(SymExpr.lift(5)) == hash(5)
    assert str(parse("(h + 1) floordiv 2")) == "(h + 1) floordiv 2"
    assert str(12 * b * s - 4) == "12 * batch * seq - 4"


def test_questions_are_answered_only_when_every_size_agrees():
    b, s = SymExpr.lift("batch"), SymExpr.lift("seq")
    assert b >= 1 and b * s >= b and bool(b) and b + 1 > b
    assert (b - 1).nonnegative() and not (b - 2).nonnegative()
    assert (b - 2).nonnegative({"batch": 2})
    with pytest.raises(SymbolicSizeError, match="whether batch < seq depends on the sizes"):
        _ = b < s
    with pytest.raises(SymbolicSizeError, match="whether batch - 1 is zero depends on batch"):
        bool(b - 1)
    with pytest.raises(SymbolicSizeError, match=r"batch \* seq is not a number when compiling"):
        int(b * s)
    assert int(SymExpr.lift(3) * 4) == 12


def test_bad_text_and_bad_divisors_name_the_place():
    with pytest.raises(SymbolicSizeError, match="in size 'batch \\* \\* 2' at column 9: expected a number"):
        parse("batch * * 2")
    with pytest.raises(SymbolicSizeError, match="at column 7: unexpected text"):
        parse("batch seq")
    with pytest.raises(SymbolicSizeError, match="floordiv takes a positive constant, not 0"):
        SymExpr.lift("batch").floordiv(0)
    with pytest.raises(SymbolicSizeError, match="'mod' is not a size name"):
        SymExpr.lift("mod")


def test_bind_solves_names_and_checks_the_rest():
    b, s = SymExpr.lift("batch"), SymExpr.lift("seq")
    sizes = bind([b, s, 768], (2, 7, 768), "input_ids")
    assert sizes == {"batch": 2, "seq": 7}
    assert bind([b, s * 12], (2, 84), "scores", sizes) == sizes
    with pytest.raises(SymbolicSizeError, match=r"scores: dimension 1 is 80, but 12 \* seq is 84 \(seq = 7\)"):
        bind([b, s * 12], (2, 80), "scores", sizes)
    with pytest.raises(SymbolicSizeError, match="mask: dimension 0 is 3, but batch is 2"):
        bind([b], (3,), "mask", sizes)
    with pytest.raises(SymbolicSizeError, match=r"x: dimension 0 \(batch\) is 0; a size is at least 1"):
        bind([b], (0,), "x")
    with pytest.raises(SymbolicSizeError, match=r"x: dimension 0 \(2 \* batch\) cannot be solved for batch"):
        bind([b * 2], (4,), "x")
    with pytest.raises(SymbolicSizeError, match="x has 1 dimensions, expected 2"):
        bind([b, 3], (4,), "x")


def test_exact_quotient_divides_by_a_monomial_or_says_none():
    total = parse("batch * seq * 64 + batch * 128")
    assert total.exact_quotient(parse("batch * 64")) == parse("seq + 2")
    assert total.exact_quotient(64) == parse("batch * seq + 2 * batch")
    assert total.exact_quotient(parse("seq")) is None  # (batch * 128 has no seq)
    assert total.exact_quotient(48) is None
    assert total.exact_quotient(parse("batch + 1")) is None  # (not a monomial)
    assert SymExpr.lift(12).exact_quotient(4) == SymExpr.lift(3)
