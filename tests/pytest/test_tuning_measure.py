"""Measurement in worker processes (autotune/measure.py): a candidate that crashes,
hangs or computes a wrong answer becomes an error record, its worker is replaced,
and the other candidates are measured as usual."""

from __future__ import annotations

import pytest

from tilecraft.autotune.measure import Job, LocalExecutor, Worker


def test_crash_hang_and_wrong_answers_are_isolated():
    jobs = [
        Job("tuning_jobs:ok", {"n": 1}),
        Job("tuning_jobs:crash", {"how": "exit"}),
        Job("tuning_jobs:ok", {"n": 2}),
        Job("tuning_jobs:hang", timeout=3.0),
        Job("tuning_jobs:wrong_answer"),
        Job("tuning_jobs:crash", {"how": "segv"}),
        Job("tuning_jobs:ok", {"n": 3}),
    ]
    with LocalExecutor(2) as executor:
        results = executor.run(jobs)
        assert results[0].costs == pytest.approx((0.001, 0.002, 0.003)) and results[0].error is None
        assert results[1].error == "the worker died (exit status 3)"
        assert results[2].costs == pytest.approx((0.002, 0.004, 0.006))
        assert results[3].error == "timeout after 3 s" and results[3].seconds >= 3.0
        assert results[4].error.startswith("AssertionError: the candidate's result differs")
        assert results[5].error == "the worker died (signal SIGSEGV)"
        assert results[6].costs == pytest.approx((0.003, 0.006, 0.009))
        assert executor.replaced == 3  # two crashes and a hang; the wrong answer keeps its worker
        # tuning goes on with the replacements
        assert [r.error for r in executor.run([Job("tuning_jobs:ok")] * 3)] == [None] * 3


def test_a_worker_is_reused_between_jobs():
    worker = Worker()
    try:
        first = worker.run(Job("tuning_jobs:pid")).costs[0]
        second = worker.run(Job("tuning_jobs:pid")).costs[0]
        assert first == second
        assert worker.run(Job("tuning_jobs:crash")).error is not None
        assert worker.run(Job("tuning_jobs:pid")).costs[0] != first
    finally:
        worker.close()


def test_a_bad_function_path_is_an_error_record():
    with LocalExecutor(1) as executor:
        (result,) = executor.run([Job("tuning_jobs_missing:f")])
        assert result.error.startswith("ModuleNotFoundError")
        (result,) = executor.run([Job("no colon")])
        assert "package.module:function" in result.error


def test_jobs_on_a_dask_local_cluster():
    from distributed import Client, LocalCluster

    from tilecraft.autotune.measure import DaskExecutor

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:  # fmt: skip
        executor = DaskExecutor(client)
        results = executor.run([Job("tuning_jobs:ok", {"n": 4}), Job("tuning_jobs:crash"),
                                Job("tuning_jobs:hang", timeout=2.0), Job("tuning_jobs:ok", {"n": 5})])  # fmt: skip
        assert results[0].costs == pytest.approx((0.004, 0.008, 0.012))
        assert results[1].error == "the worker died (exit status 3)"
        assert results[2].error == "timeout after 2 s"
        assert results[3].costs == pytest.approx((0.005, 0.010, 0.015))
        # the dask workers survived their candidates: more jobs run
        assert [r.error for r in executor.run([Job("tuning_jobs:ok")] * 2)] == [None, None]


def test_a_config_slower_than_the_cutoff_gets_one_timing(monkeypatch):
    """A hopeless config is timed by its first (checked) call alone; one under the
    cutoff is measured in full. (In-process: `measure` is what a worker runs.)"""
    from tilecraft.autotune import templates
    from tilecraft.autotune.templates import measure

    config = {"tile_i": 2, "tile_j": 4, "split_k": 4, "vectorize": 1, "parallel": 0, "k_outside": 0}
    (cut,) = measure("matmul", [16, 16, 16], config, repeat=3, cold=False, cutoff=0.0)
    assert cut > 0.0
    assert len(measure("matmul", [16, 16, 16], config, repeat=3, cold=False, cutoff=1e9)) == 3
    assert len(measure("matmul", [16, 16, 16], config, repeat=3, cold=False)) == 3
    # a wrong answer is still found before the cut: the first call is the checked one
    monkeypatch.setattr(templates, "_reference", lambda t, params, inputs, out, seed: out + 1.0)
    with pytest.raises(AssertionError, match="wrong answer"):
        measure("matmul", [16, 16, 16], config, repeat=3, cold=False, cutoff=0.0)
