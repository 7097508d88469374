"""The machine probe (autotune/machine.py) and how a measurement uses it: a repeat
timed while the cores were shared is taken again, within a bound. Whether this
machine's cores are shared at a given moment is not asserted (it is what the probe
measures); the mechanism is, with the probe scripted."""

from __future__ import annotations

import pytest
from tilecraft.autotune import machine, templates
from tilecraft.autotune.templates import measure

DENSE = ([4, 64], [64, 64], "NK")  # x [4, 64], weight [64 out, 64 in]


def test_one_thread_never_shares_cores():
    assert machine.cores_shared(1) is False


def test_the_probe_answers_for_every_thread_count():
    assert machine.cores_shared(2) in (True, False)
    assert machine.cores_shared() in (True, False)  # the parallel runtime's threads


def test_the_fma_loop_computes_at_a_plausible_rate():
    rate = machine.fma_gflops(0.05)
    assert 0.1 < rate < 10_000  # GFLOP/s of one core: positive, finite, not absurd


def _scripted(monkeypatch, answers):
    """Replace the probe measure() calls by `answers` (then False); returns the log of calls."""
    calls = []

    def probe(threads=None):
        calls.append(threads)
        return answers[len(calls) - 1] if len(calls) <= len(answers) else False

    monkeypatch.setattr(templates, "cores_shared", probe)
    monkeypatch.setattr(templates, "RETRY_PAUSE_SECONDS", 0.001)
    return calls


def test_quiet_cores_cost_one_probe_per_repeat_and_one_before(monkeypatch):
    calls = _scripted(monkeypatch, [])
    costs = measure("dense", list(DENSE), None, repeat=4, cold=False)
    assert len(costs) == 4 and all(c > 0 for c in costs)
    assert len(calls) == 4 + 1


def test_a_repeat_timed_while_cores_were_shared_is_taken_again(monkeypatch):
    # before the first repeat: quiet; after it: shared (so it is taken again: one
    # probe before the retry, quiet, one after, quiet); then quiet to the end.
    calls = _scripted(monkeypatch, [False, True, False, False])
    costs = measure("dense", list(DENSE), None, repeat=3, cold=False)
    assert len(costs) == 3
    assert len(calls) == 1 + 1 + 2 + 2  # first probe, repeat 1 (shared), its retry (2), repeats 2 and 3


def test_cores_shared_all_along_cost_a_bounded_wait(monkeypatch):
    calls = _scripted(monkeypatch, [True] * 10_000)
    monkeypatch.setattr(templates, "MAX_RETRY_SECONDS", 0.05)
    costs = measure("dense", list(DENSE), None, repeat=3, cold=False)
    assert len(costs) == 3  # measured as the machine is, once the wait is spent
    assert 4 < len(calls) < 10_000


@pytest.mark.parametrize("threads", [None, 2])
def test_the_probe_leaves_no_thread_behind(threads):
    import threading

    before = threading.active_count()
    machine.cores_shared(threads)
    assert threading.active_count() == before
