"""Measuring with cold weights (templates.measure, cold=True): each timed call reads
the template's weight inputs from copies that together exceed the caches, while the
activation input and the output stay the same arrays; the answer is still checked
against the default schedule's; records say how they were measured (old logs, which
do not, were measured hot). The mechanism is asserted here, not the speed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tilecraft.autotune import templates
from tilecraft.autotune.records import Record, TuningLog, TuningLogError
from tilecraft.autotune.templates import (
    MAX_COLD_COPIES,
    cache_bytes,
    cold_copies,
    get_template,
    measure,
)

DENSE = ([4, 64], [64, 64], "NK")  # x [4, 64], weight [64 out, 64 in]
CONV = ([1, 1, 6, 6, 16], [1, 1, 3, 3, 16, 16], [1, 1], [1, 1, 1, 1], [1, 1], 1,
        "NCHW16c", "OIHW16i16o", "NCHW16c", "float32", "float32")  # fmt: skip


def test_cache_bytes_reads_the_machine_or_falls_back():
    size = cache_bytes()
    assert size >= 1 << 20  # at least a megabyte of last-level cache on anything that runs this


def test_cold_copies_rotate_distinct_weight_buffers_and_share_the_activation():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    w = rng.standard_normal((256, 1024)).astype(np.float32)  # 1 MiB
    lists = cold_copies([x, w], (1,), budget=4 << 20)
    assert len(lists) == 8  # twice the budget, in copies of the weight
    assert all(args[0] is x for args in lists)
    weights = [args[1] for args in lists]
    assert sum(a.nbytes for a in weights) >= 2 * (4 << 20)
    for i, a in enumerate(weights):
        np.testing.assert_array_equal(a, w)
        assert i == 0 or a.ctypes.data % 64 == 0  # the copies start on a cache line
        assert all(not np.shares_memory(a, b) for b in weights[i + 1 :])
    assert cold_copies([x, w], ()) == [[x, w]]  # no weights: one list, the inputs
    tiny = np.zeros(4, np.float32)
    assert len(cold_copies([x, tiny], (1,), budget=1 << 20)) == MAX_COLD_COPIES  # capped


def _recording_build(monkeypatch, calls, tamper=False):
    real = templates._build

    def build(s, args):
        f = real(s, args)

        def run(*arrays):
            calls.append(tuple(a.ctypes.data for a in arrays))
            f(*arrays)
            if tamper and len(calls) > 1:  # the reference is the second build's first call
                arrays[-1][...] += 1.0

        return run

    monkeypatch.setattr(templates, "_build", build)
    monkeypatch.setattr(templates, "cache_bytes", lambda: 1 << 20)
    monkeypatch.setattr(templates, "WARMUP_SECONDS", 0.0)
    monkeypatch.setattr(templates, "MIN_REPEAT_SECONDS", 0.0)
    monkeypatch.setattr(templates, "_REFERENCES", {})


@pytest.mark.parametrize("cold", [True, False])
def test_measure_reads_distinct_weight_buffers_cold_and_one_hot(monkeypatch, cold):
    calls: list[tuple[int, ...]] = []
    _recording_build(monkeypatch, calls)
    t = get_template("dense")
    config = t.default_config(*DENSE)
    costs = measure("dense", list(DENSE), config, repeat=300, cold=cold)
    assert len(costs) == 300
    timed = calls[-300:]  # one call per repeat (MIN_REPEAT_SECONDS 0); the first ones: check, reference, warm-up
    activations, weights, outputs = ({c[i] for c in timed} for i in range(3))
    assert len(activations) == 1 and len(outputs) == 1  # the activation and the output stay in cache
    # Every buffer starts on a cache line, as a compiled model's arena and weights do.
    assert all(address % 64 == 0 for call in timed for address in call)
    copies = (2 << 20) // (64 * 64 * 4)  # twice the (patched) cache in 16 KiB weights: 128
    assert len(weights) == (copies if cold else 1)


def test_a_winograd_config_rotates_its_transformed_weight(monkeypatch):
    calls: list[tuple[int, ...]] = []
    seen: list[tuple[int, ...]] = []
    real = templates.cold_copies

    def spy(inputs, weights, budget=None):
        lists = real(inputs, weights, budget)
        seen.extend(tuple(args[i].shape) for args in lists for i in weights)
        return lists

    _recording_build(monkeypatch, calls)
    monkeypatch.setattr(templates, "cold_copies", spy)
    t = get_template("conv2d")
    assert "winograd" in t.space(*CONV).knobs["algorithm"]
    config = dict(t.default_config(*CONV), algorithm="winograd")
    measure("conv2d", list(CONV), config, repeat=3)
    assert len(seen) > 1 and set(seen) == {(4, 4, 1, 1, 16, 16)}  # U, not the 3x3 weight


def test_a_wrong_answer_is_still_an_error_when_measuring_cold(monkeypatch):
    calls: list[tuple[int, ...]] = []
    _recording_build(monkeypatch, calls, tamper=True)
    t = get_template("dense")
    with pytest.raises(AssertionError, match="wrong answer"):
        measure("dense", list(DENSE), t.default_config(*DENSE), repeat=1, cold=True)


def test_templates_name_their_weight_inputs():
    assert get_template("conv2d").weight_inputs(CONV, None) == (1,)
    assert get_template("dense").weight_inputs(DENSE, None) == (1,)
    assert get_template("batch_matmul").weight_inputs(([2, 4, 8], [2, 8, 4], "float32"), None) == ()
    assert get_template("matmul").weight_inputs((8, 8, 8), None) == ()


def test_records_say_cold_and_old_logs_without_it_read_as_hot(tmp_path):
    log = TuningLog(tmp_path / "t.jsonl")
    old = {"kind": "measure", "workload": "matmul[8,8,8]", "target": "llvm", "config": {"tile_i": 1},
           "costs": [0.1], "error": None, "time": 1.0}  # fmt: skip
    log.path.write_text(json.dumps(old) + "\n")
    log.measure("matmul[8,8,8]", "llvm", {"tile_i": 2}, [0.2], cold=True)
    first, second = log.records()
    assert first.cold is False and second.cold is True
    assert json.loads(log.path.read_text().splitlines()[1])["cold"] is True
    assert Record.__dataclass_fields__["cold"].default is False
    log.path.write_text(json.dumps(old | {"cold": "yes"}) + "\n")
    with pytest.raises(TuningLogError, match="cold must be true or false"):
        log.records()


class _Recorder:
    """An executor that answers every job with a fixed time and keeps the jobs."""

    def __init__(self):
        self.jobs = []

    def run(self, jobs):
        from tilecraft.autotune.measure import Result

        self.jobs.extend(jobs)
        return [Result(costs=(0.001,)) for _ in jobs]


@pytest.mark.parametrize("cold", [True, False])
def test_the_tuner_asks_for_cold_or_hot_measurement_and_records_it(tmp_path, cold):
    from tilecraft.autotune.tuner import tune

    log = TuningLog(tmp_path / "t.jsonl")
    executor = _Recorder()
    tune("matmul", (8, 8, 8), log, 4, executor, guided=False, cold=cold)
    assert executor.jobs and all(j.kwargs["cold"] is cold for j in executor.jobs)
    measured = [r for r in log.records() if r.kind == "measure"]
    assert measured and all(r.cold is cold for r in measured)


def test_the_tuner_cuts_configs_past_ten_times_the_best_so_far(tmp_path):
    """The first batch has nothing to compare with: no cutoff; every later job may
    spend at most 10x the best cost measured before it (or what `cutoff` says)."""
    from tilecraft.autotune.tuner import tune

    for factor, expected in ((10.0, 0.01), (3.0, 0.003), (None, None)):
        executor = _Recorder()
        tune("matmul", (8, 8, 8), TuningLog(tmp_path / f"{factor}.jsonl"), 6, executor, guided=False, batch=3,
             cutoff=factor)  # fmt: skip
        first, later = executor.jobs[:3], executor.jobs[3:]
        assert len(later) == 3 and all("cutoff" not in j.kwargs for j in first)
        assert all(j.kwargs.get("cutoff") == pytest.approx(expected) if expected else "cutoff" not in j.kwargs
                   for j in later)  # fmt: skip


def test_the_tune_tool_takes_a_cutoff_factor(capsys):
    from tilecraft.tools.tune import main, make_arg_parser

    parser = make_arg_parser()
    assert parser.parse_args(["m.onnx", "--trials", "1", "--log", "l"]).cutoff == 10.0
    assert parser.parse_args(["m.onnx", "--trials", "1", "--log", "l", "--cutoff", "0"]).cutoff == 0.0
    with pytest.raises(SystemExit) as stop:
        main(["m.onnx", "--trials", "1", "--log", "l", "--cutoff", "0.5"])
    assert stop.value.code == 1 and "--cutoff must be 0 (off) or a factor above 1, got 0.5" in capsys.readouterr().err


def test_the_tune_tool_has_a_hot_switch():
    from tilecraft.tools.tune import make_arg_parser

    parser = make_arg_parser()
    assert parser.parse_args(["m.onnx", "--trials", "1", "--log", "l"]).hot is False
    assert parser.parse_args(["m.onnx", "--trials", "1", "--log", "l", "--hot"]).hot is True


def test_the_default_is_the_first_trial_even_where_the_search_proposed_it(tmp_path, monkeypatch):
    """A curve's first point is the untuned schedule: the default leads the first
    batch also when the search's own proposals held it (it used to keep its place)."""
    from tilecraft.autotune import tuner
    from tilecraft.autotune.templates import get_template

    template = get_template("dense")
    params = ([16, 64], [64, 64], "KN", "float32")
    default = template.default_config(*params)
    space = template.space(*params)
    rng = __import__("numpy").random.default_rng(0)
    others = [c for c in (space.random(rng) for _ in range(40)) if c != default][:3]

    monkeypatch.setattr(tuner, "next_batch", lambda space, score, want, measured, rng, **kw: [*others, default][:want])
    executor = _Recorder()
    tuner.tune("dense", params, TuningLog(tmp_path / "t.jsonl"), 4, executor, guided=False, batch=4)
    assert executor.jobs[0].kwargs["config"] == default and len(executor.jobs) == 4
