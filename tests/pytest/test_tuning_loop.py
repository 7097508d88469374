"""A small tuning run (autotune/tuner.py + templates.py): it beats the untuned
schedule, its records replay as sched IR, and a second run resumes from the log."""

from __future__ import annotations

import statistics

from tilecraft.autotune.measure import Job, LocalExecutor
from tilecraft.autotune.records import TuningLog
from tilecraft.autotune.templates import sched_ir, workload_key
from tilecraft.autotune.tuner import tune

SHAPE = (128, 128, 128)


def test_a_small_tuning_run_beats_the_default_and_resumes(tmp_path):
    log = TuningLog(tmp_path / "tune.jsonl")
    with LocalExecutor(1) as executor:
        best = tune("matmul", SHAPE, log, trials=8, executor=executor, batch=4)
        assert best is not None and best.error is None
        (default,) = executor.run([Job("tilecraft.autotune.templates:measure",
                                       {"template": "matmul", "shape": list(SHAPE), "config": None, "repeat": 5})])
        assert best.cost < statistics.median(default.costs)
        key = workload_key("matmul", SHAPE)
        assert len(log.measured(key, "llvm")) == 8 and log.finished(key, "llvm")
        # more trials: the 8 measured are not measured again
        tune("matmul", SHAPE, log, trials=12, executor=executor, batch=4)
        records = [r for r in log.records() if r.kind == "measure"]
        assert len(log.measured(key, "llvm")) == 12 and len({str(sorted(r.config.items())) for r in records}) == 12
        # the first run confirmed its fastest 3 and the default: each measured at most twice
        counts = log.measurements(key, "llvm")
        assert 3 <= sum(n == 2 for n in counts.values()) <= 4 and max(counts.values()) == 2
        assert len(records) == 12 + sum(n == 2 for n in counts.values())
    text = sched_ir("matmul", SHAPE, best.config)
    assert "sched.schedule" in text and "sched.split" in text


def test_transfer_learns_from_other_workloads_of_the_template_in_the_log(tmp_path):
    import numpy as np

    from tilecraft.autotune.features import LENGTH
    from tilecraft.autotune.tuner import _transfer_groups

    log = TuningLog(tmp_path / "tune.jsonl")
    with LocalExecutor(1) as executor:
        # confirm=0: the prior is made of the 4 configs, not of how often each was timed
        tune("matmul", (64, 64, 64), log, trials=4, executor=executor, batch=4, repeat=1, confirm=0)
    other = workload_key("matmul", (32, 64, 64))
    (group,) = _transfer_groups(log, "matmul", other, "llvm", 512)
    x, costs = group
    assert x.shape == (4, LENGTH) and len(costs) == 4 and np.isfinite(x).all()
    # its own workload is not a prior of itself; the limit bounds the records
    assert _transfer_groups(log, "matmul", workload_key("matmul", (64, 64, 64)), "llvm", 512) == []
    assert _transfer_groups(log, "matmul", other, "llvm", 1) == []


def test_a_finished_task_returns_its_best_without_lowering_or_measuring(tmp_path, monkeypatch):
    """A resumed model tunes its finished tasks again: each must return at once
    (it used to lower every record of the log for the transfer prior, ~5 s a task)."""
    from tilecraft.autotune import tuner

    log = TuningLog(tmp_path / "tune.jsonl")
    with LocalExecutor(1) as executor:
        # (confirm=0: what is under test is the third call, on a finished task with
        # another workload's records in the log; confirming timings adds nothing)
        tune("matmul", (32, 64, 64), log, trials=4, executor=executor, batch=4, repeat=1, confirm=0)
        best = tune("matmul", SHAPE, log, trials=4, executor=executor, batch=4, repeat=1, confirm=0)

        lowered = []
        monkeypatch.setattr(tuner, "lower", lambda *a, **k: lowered.append(a))
        monkeypatch.setattr(tuner, "_FEATURES", {})
        before = len(log.records())
        assert tune("matmul", SHAPE, log, trials=4, executor=executor, batch=4) == best
        assert len(log.records()) == before and lowered == []


def test_loop_features_of_a_config_are_computed_once(tmp_path, monkeypatch):
    from tilecraft.autotune import tuner

    calls = []
    lower = tuner.lower
    monkeypatch.setattr(tuner, "lower", lambda *a, **k: calls.append(a) or lower(*a, **k))
    monkeypatch.setattr(tuner, "_FEATURES", {})
    import numpy as np

    from tilecraft.autotune.templates import get_template

    config = get_template("matmul").space(*SHAPE).random(np.random.default_rng(0))
    first = tuner.config_features("matmul", SHAPE, config)
    again = tuner.config_features("matmul", list(SHAPE), dict(config))
    assert len(calls) == 1 and (first == again).all()
