"""The ONNX backend conformance suite (`tilecraft.frontends.onnx.conformance`): every
node case of `onnx.backend.test` outside the documented exclusions, plus the
pytorch-converted, pytorch-operator and simple model cases, compiled with
`TilecraftBackend` and compared as `BackendTest` compares.

The suite runs once per session (~30-60 s); the tests read its results. A case that
passed once is listed in `onnx_conformance_passing.txt` and must keep passing
(`python -m tilecraft.frontends.onnx.conformance --write-passing tests/pytest/onnx_conformance_passing.txt`
rewrites the list).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecraft.frontends.onnx import conformance

PASSING = Path(__file__).with_name("onnx_conformance_passing.txt")
# The pass rate this suite must keep (the issue asks 0.75); raised as operators land.
PASS_RATE_FLOOR = 0.91


@pytest.fixture(scope="module")
def suite():
    cases, excluded = conformance.collect()
    return cases, excluded, conformance.run_all(cases)


def _listing(results, outcome):
    return "\n".join(f"{r.case}: {r.message}" for r in results if r.outcome == outcome)


def test_no_wrong_answers(suite):
    _, _, results = suite
    assert not _listing(results, "wrong"), _listing(results, "wrong")


def test_no_internal_errors(suite):
    _, _, results = suite
    assert not _listing(results, "error"), _listing(results, "error")


def test_pass_rate(suite):
    _, excluded, results = suite
    figures = conformance.summary(results, excluded)
    assert figures["pass_rate"] >= PASS_RATE_FLOOR, figures


def test_cases_that_passed_still_pass(suite):
    _, _, results = suite
    outcome = {r.case: r for r in results}
    listed = [line.strip() for line in PASSING.read_text().splitlines() if line.strip()]
    assert listed, "the list of passing cases is empty"
    regressed = [f"{name}: {outcome[name].outcome}: {outcome[name].message}"
                 if name in outcome else f"{name}: no longer in the suite"
                 for name in listed if name not in outcome or outcome[name].outcome != "pass"]
    assert not regressed, "\n".join(regressed)


def test_refusals_name_what_is_unsupported(suite):
    """An unsupported case says which operator, attribute, element type or opset."""
    _, _, results = suite
    vague = [f"{r.case}: {r.message}" for r in results if r.outcome == "unsupported"
             and not any(w in r.message for w in ("operator", "attribute", "element type",
                                                   "opset", "input", "output", "dtype"))]
    assert not vague, "\n".join(vague[:20])


def test_exclusions_are_the_documented_kinds(suite):
    cases, excluded, _ = suite
    kinds = {reason.split(" (")[0] for _, reason in excluded}
    assert kinds <= {*conformance.EXCLUDED_OPS, *conformance.EXCLUDED_NAMES,
                     "training operator", "sequence, optional, map or string type"}
    # What the issue names as excluded really is; ordinary operators are not.
    names = {n for n, _ in excluded}
    assert {"test_nonzero_example", "test_adam", "test_bernoulli"} <= names
    assert {c.name for c in cases} >= {"test_abs", "test_relu", "test_cast_FLOAT_to_DOUBLE"}


def test_backend_runs_under_onnx_backend_test():
    """`TilecraftBackend` is an `onnx.backend.base.Backend`: onnx's own `BackendTest`
    generates and runs its cases (a few here; the suite above runs all of them)."""
    import unittest

    from onnx.backend.test import BackendTest

    from tilecraft.frontends.onnx.backend import TilecraftBackend

    runner = BackendTest(TilecraftBackend, __name__)
    runner.include(r"^test_(relu|add_bcast|flatten_negative_axis1|matmul_2d)_cpu$")
    suite = unittest.TestSuite()
    for case in runner.test_cases.values():
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(verbosity=0).run(suite)
    ran = result.testsRun - len(result.skipped)
    assert ran == 4 and result.wasSuccessful(), (result.failures, result.errors)
