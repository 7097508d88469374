"""A model's tuning tasks (autotune/tasks.py, topi_templates.py) and compiling with a
tuning log: the workloads extracted are those the compile schedules, each task's
knobs schedule it correctly, and `tc.compile(model, tuning_log=...)` uses the log's
best config (and only a valid one)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.autotune.explore import Space
from tilecraft.autotune.measure import LocalExecutor
from tilecraft.autotune.records import TuningLog
from tilecraft.autotune.tasks import LogLookup, extract_tasks, tune_tasks
from tilecraft.autotune.templates import get_template, measure, sched_ir, workload_key
from tilecraft.topi.tuning import use_configs

RNG = np.random.default_rng(3)


def small_cnn():
    """conv 3x3 (16 -> 32) + relu, a 1x1 conv, a depthwise conv, global pool, a dense."""
    def w(*shape):
        return (RNG.standard_normal(shape) * 0.2).astype(np.float32)

    inits = {"w1": w(32, 16, 3, 3), "b1": w(32), "w2": w(32, 32, 1, 1), "w3": w(32, 1, 3, 3), "wf": w(10, 32),
             "bf": w(10)}  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"]),
        helper.make_node("Conv", ["c2", "w3"], ["c3"], pads=[1, 1, 1, 1], group=32),
        helper.make_node("GlobalAveragePool", ["c3"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 14, 14])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def cnn():
    return small_cnn()


def test_extracted_tasks_are_the_workloads_the_compile_schedules(cnn):
    tasks = extract_tasks(cnn)
    templates = [t.template for t in tasks]
    assert templates.count("conv2d") == 3 and templates.count("dense") == 1, [t.key for t in tasks]
    first = tasks[0]
    # alter-layout's blocked layouts are part of the workload
    assert first.params[6:9] == ("NCHW16c", "OIHW16i16o", "NCHW16c") and first.params[0] == [1, 1, 14, 14, 16]
    assert first.flops == 2 * 32 * 14 * 14 * 16 * 9
    # every key a compile asks for is a task, and nothing else
    asked = []
    with use_configs(lambda template, params: asked.append((template, params))):
        tc.compile(cnn)
    assert {t.key for t in tasks} == {workload_key(template, params) for template, params in asked}


def test_every_task_default_is_in_its_space_and_random_configs_compute_right(cnn):
    rng = np.random.default_rng(0)
    for task in extract_tasks(cnn):
        template = get_template(task.template)
        space = template.space(*task.params)
        assert isinstance(space, Space) and space.size >= 1
        for config in [space.random(rng) for _ in range(2)]:
            # measure() checks the output against the default schedule's: a wrong
            # answer raises (on the first call, before cutoff=0.0 skips the timing
            # loop that test_tuning_measure covers)
            costs = measure(task.template, list(task.params), config, repeat=1, cutoff=0.0)
            assert len(costs) == 1 and costs[0] > 0
            text = sched_ir(task.template, task.params, config)
            assert "sched.schedule" in text


def test_a_bad_config_is_refused_naming_the_knob(cnn):
    task = extract_tasks(cnn)[0]
    with pytest.raises(ValueError, match="knob 'tile'"):
        get_template("conv2d").schedule(*task.params, config={"tile": [5, 99], "row": 0, "order": 0,
                                                               "unroll_rx": 0, "parallel": 1})  # fmt: skip
    with pytest.raises(ValueError, match="unknown knob"):
        get_template("conv2d").schedule(*task.params, config={**_default(task), "bogus": 1})


def _expected(log, task) -> dict:
    """What tc.compile applies: the best record, unless the default is within 3% of it."""
    best = log.best(task.key, "llvm")
    default = get_template(task.template).default_config(*task.params)
    held = [r.cost for r in log.measured(task.key, "llvm").values() if r.config == default]
    return {} if held and best.cost * 1.03 >= held[0] else {task.key: best.config}


def test_a_tuned_config_must_beat_the_default_by_more_than_noise(cnn, tmp_path):
    task = extract_tasks(cnn)[0]
    default = _default(task)
    # (a direct schedule: with the winograd algorithm, this 14x14 conv's default, the
    # direct knobs are unused and a config varying them is not a point of the space)
    other = _direct(task, default, tile=[1, 2], parallel=0)
    log = TuningLog(tmp_path / "tune.jsonl")
    log.measure(task.key, "llvm", default, [1.00e-3])
    log.measure(task.key, "llvm", other, [0.99e-3])  # 1% faster: noise, the default stays
    assert LogLookup(log)("conv2d", task.params) is None
    log.measure(task.key, "llvm", other, [0.90e-3])  # confirmed 10% faster: applied
    assert LogLookup(log)("conv2d", task.params) == other
    assert LogLookup(log, margin=0.2)("conv2d", task.params) is None


def test_compile_skips_records_of_another_template_version_with_a_warning(cnn, tmp_path):
    """A log written before a template's knobs changed: its stale records are passed
    over for the next valid best (here: a valid config 10% faster than the default),
    with one warning naming the workload; compiling does not fail."""
    task = extract_tasks(cnn)[0]
    default = _default(task)
    valid = _direct(task, default, tile=[1, 2], parallel=0)
    log = TuningLog(tmp_path / "tune.jsonl")
    log.measure(task.key, "llvm", default, [1.0e-3])
    log.measure(task.key, "llvm", {**default, "retired_knob": 1}, [0.5e-3])  # fastest, stale
    log.measure(task.key, "llvm", valid, [0.9e-3])
    with pytest.warns(UserWarning, match=r"1 record\(s\) of conv2d\[.*not configs of the current template"):
        tuned = tc.compile(cnn, tuning_log=tmp_path / "tune.jsonl")
    assert tuned.tuned == {task.key: valid}
    # the tool that tests a log (tilecraft-opt --tuning-log) still answers the stale
    # record, and the schedule refuses it naming the knob
    stale = LogLookup(log)("conv2d", task.params)
    assert "retired_knob" in stale
    with pytest.raises(ValueError, match="unknown knob"):
        get_template("conv2d").schedule(*task.params, config=stale)


def test_a_config_outside_the_normal_form_counts_as_its_point(cnn, tmp_path):
    """A direct config whose unused Winograd knobs are not at their first values (a
    hand-written record) schedules what the normal one does: compiling applies it,
    normalized, with no warning, and it is compared with the default as that point."""
    import warnings

    task = extract_tasks(cnn)[0]
    default = _default(task)
    valid = _direct(task, default, tile=[1, 2], parallel=0)
    space = get_template(task.template).space(*task.params)
    written = {**valid, "winograd_tile": list(space.knobs["winograd_tile"][-1])}
    assert written != valid and not space.contains(written)
    log = TuningLog(tmp_path / "tune.jsonl")
    log.measure(task.key, "llvm", default, [1.0e-3])
    log.measure(task.key, "llvm", written, [0.9e-3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tuned = tc.compile(cnn, tuning_log=tmp_path / "tune.jsonl")
    assert tuned.tuned == {task.key: valid}
    assert LogLookup(log)("conv2d", task.params) == valid


def _direct(task, default, **knobs):
    """`default` (Winograd here) made a direct config with `knobs`: the Winograd knobs
    at their first values, as the space holds them (unused by a direct schedule)."""
    space = get_template(task.template).space(*task.params)
    config = space.normalize({**default, "algorithm": "direct", **knobs})
    assert space.contains(config)
    return config


def _default(task):
    from tilecraft.topi.conv2d import conv2d_info, default_config

    _, _, conv = get_template("conv2d")._compute(*task.params)
    return default_config(conv, conv2d_info(conv))


def test_compile_with_a_tuning_log_uses_its_best_config(cnn, tmp_path):
    x = RNG.standard_normal((1, 16, 14, 14)).astype(np.float32)
    expected = ort.InferenceSession(cnn.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    task = extract_tasks(cnn)[0]
    default = _default(task)
    chosen = _direct(task, default, tile=[1, 2], parallel=0)
    log = TuningLog(tmp_path / "tune.jsonl")
    log.measure(task.key, "llvm", default, [2e-3])
    log.measure(task.key, "llvm", chosen, [1e-3])  # the best: used
    log.measure(task.key, "llvm", {**default, "tile": [1, 1]}, [], "timeout after 1 s")  # an error: never used
    untuned = tc.compile(cnn)
    tuned = tc.compile(cnn, tuning_log=tmp_path / "tune.jsonl")
    assert tuned.tuned == {task.key: chosen} and untuned.tuned == {}
    assert tuned.ir != untuned.ir  # the schedule differs where the text shows it
    np.testing.assert_allclose(tuned(x), expected, rtol=1e-4, atol=1e-4)


def test_compile_with_a_log_of_an_invalid_config_warns_and_runs_the_default(cnn, tmp_path):
    task = extract_tasks(cnn)[0]
    log = TuningLog(tmp_path / "tune.jsonl")
    log.measure(task.key, "llvm", {"tile": [7, 7]}, [1e-3])
    with pytest.warns(UserWarning, match=r"tune.jsonl: 1 record\(s\) of conv2d\[.*are skipped"):
        assert tc.compile(cnn, tuning_log=log).tuned == {}
    # where the log itself is under test, the schedule names the bad knob
    with pytest.raises(Exception, match=r"tuning log's config of conv2d\[.*knob 'tile' = \[7, 7\] is not one of"):
        with use_configs(LogLookup(log)):
            tc.compile(cnn)


def test_tune_tasks_tunes_each_task_and_the_compile_applies_it(cnn, tmp_path):
    tasks = [t for t in extract_tasks(cnn) if t.template == "dense"]
    log = TuningLog(tmp_path / "tune.jsonl")
    seen = []
    with LocalExecutor(1) as executor:
        results = tune_tasks(tasks, log, 3, executor, batch=3, repeat=3, callback=lambda t, r: seen.append(t.key))
    (key,) = results
    size = get_template("dense").space(*tasks[0].params).size  # [1, 32] x [32, 10]: 2 configs
    # every measurement reported: the trials, then the best few confirmed (here all of them)
    assert results[key]["best"] is not None and results[key]["seconds"] > 0 and len(seen) == 2 * min(3, size)
    assert key in LogLookup(log).best
    assert tc.compile(cnn, tuning_log=log).tuned == _expected(log, tasks[0])


def test_tune_model_extracts_and_tunes_in_one_call(tmp_path):
    from tilecraft.autotune import tune_model

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    w = numpy_helper.from_array(RNG.standard_normal((8, 4)).astype(np.float32), "w")
    m = helper.make_model(helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm", [x], [y], [w]),
                          opset_imports=[helper.make_opsetid("", 17)], ir_version=8)  # fmt: skip
    results = tune_model(m, tmp_path / "tune.jsonl", 2, batch=2, repeat=1)
    (key,) = results
    assert key.startswith("dense[") and results[key]["best"] is not None
    (task,) = extract_tasks(m)
    assert tc.compile(m, tuning_log=tmp_path / "tune.jsonl").tuned == _expected(TuningLog(tmp_path / "tune.jsonl"), task)


@pytest.mark.parametrize("params", [
    # a 3x3 conv over blocked channels (every knob has a choice), and a strided 1x1 one
    ([1, 2, 9, 9, 16], [2, 2, 3, 3, 16, 16], [1, 1], [1, 1, 1, 1], [1, 1], 1, "NCHW16c", "OIHW16i16o", "NCHW16c"),
    ([1, 2, 8, 8, 16], [4, 2, 1, 1, 16, 16], [2, 2], [0, 0, 0, 0], [1, 1], 1, "NCHW16c", "OIHW16i16o", "NCHW16c"),
    # a depthwise stride-2 conv (knobs of its own: regn, pad, unroll_rx, parallel)
    ([1, 2, 15, 15, 16], [2, 1, 3, 3, 1, 16], [2, 2], [1, 1, 1, 1], [1, 1], 32, "NCHW16c", "OIHW1i16o", "NCHW16c"),
])
def test_each_conv2d_knob_value_alone_computes_the_same(params):
    from tilecraft.topi.conv2d import conv2d_info, default_config

    template = get_template("conv2d")
    _, _, conv = template._compute(*params)
    default = default_config(conv, conv2d_info(conv))
    space = template.space(*params)
    for name, values in space.knobs.items():
        for value in values:
            config = {**default, name: list(value) if isinstance(value, tuple) else value}
            if config != default:
                # AssertionError if wrong: the first call is checked, then cutoff=0.0
                # skips the timing (this test is about the answers, not the costs)
                measure("conv2d", list(params), config, repeat=1, cutoff=0.0)


def test_the_tuner_measures_the_default_config_first(cnn, tmp_path):
    task = next(t for t in extract_tasks(cnn) if t.template == "conv2d")
    log = TuningLog(tmp_path / "tune.jsonl")
    with LocalExecutor(1) as executor:
        # (confirm=0: the confirming second timings come after the first record)
        tune_tasks([task], log, 2, executor, batch=2, repeat=1, confirm=0)
    first = log.records()[0]
    assert first.config == get_template("conv2d").default_config(*task.params) == _default(task)


WINOGRAD_CONV = ([1, 4, 14, 14, 16], [4, 4, 3, 3, 16, 16], [1, 1], [1, 1, 1, 1], [1, 1], 1,
                 "NCHW16c", "OIHW16i16o", "NCHW16c", "float32", "float32")  # fmt: skip
PANEL_DENSE = ([40, 256], [2, 256, 64], "NK64n", "float32")


@pytest.mark.parametrize(
    "template, params, names",
    [("conv2d", WINOGRAD_CONV, ("winograd_tile", "winograd_split", "winograd_parallel")), ("dense", PANEL_DENSE, ("kc",))],
)
def test_grown_knobs_each_change_the_sched_ir_and_round_trip_through_a_record(template, params, names, tmp_path):
    """The Winograd knobs of conv2d and the dense's kc: every value alone (on the
    default) is a point of the space with a sched IR of its own, and a record of it
    gives back that sched IR."""
    t = get_template(template)
    space, default = t.space(*params), t.default_config(*params)
    texts = {sched_ir(template, params, default)}
    log = TuningLog(tmp_path / "log.jsonl")
    configs = []
    for name in names:
        for value in space.knobs[name]:
            config = {**default, name: value}
            if config != default:
                assert space.contains(config), config
                configs.append(config)
                texts.add(sched_ir(template, params, config))
                log.measure(workload_key(template, params), "llvm", config, [1e-3])
    assert len(texts) == len(configs) + 1  # no dead value
    for record in TuningLog(tmp_path / "log.jsonl").records():
        assert sched_ir(template, params, record.config) in texts - {sched_ir(template, params, default)}
