"""The tuning templates of pooling and reductions ("pool2d", "reduce":
autotune/topi_templates.py): their knobs (topi/reduce.py `reduction_space`,
applied by topi/schedule.py), the untuned default as a point of the space, every
config against numpy, task extraction from a model, and a log's config applied by
`tc.compile(model, tuning_log=...)`."""

from __future__ import annotations

import itertools

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.autotune.measure import LocalExecutor
from tilecraft.autotune.records import TuningLog
from tilecraft.autotune.tasks import LogLookup, extract_tasks, tune_tasks
from tilecraft.autotune.templates import _build, get_template, sched_ir, workload_key
from tilecraft.frontends.te.emit import build_module
from tilecraft.topi.schedule import default_schedule
from tilecraft.topi.tuning import use_configs

RNG = np.random.default_rng(5)

MAX_POOL = ["max", [1, 3, 9, 10], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0, 0, "NCHW", "float32"]
AVG_POOL_BLOCKED = ["avg", [1, 1, 6, 6, 16], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0, 0, "NCHW16c", "float32"]
SOFTMAX = ["softmax", [3, 40], [1], 1, "float32"]
SUM_COLUMNS = ["sum", [6, 20], [0], 0, "float32"]
LAYER_NORM = ["layer_norm", [4, 24], [1], 1, "float32"]
# a global average pool in the plain layout (its sum computed per row of the mean),
# a pool of a 1x1 output (the window innermost) and a padded average counting the pads
GLOBAL_AVG_POOL = ["mean", [1, 4, 5, 5], [2, 3], 1, "float32"]
MAX_POOL_TO_1X1 = ["max", [1, 2, 4, 4], [4, 4], [1, 1], [0, 0, 0, 0], [1, 1], 0, 0, "NCHW", "float32"]
AVG_POOL_PADS = ["avg", [2, 3, 7, 6], [3, 2], [2, 1], [1, 0, 1, 1], [1, 1], 0, 1, "NCHW", "float32"]
CASES = [
    ("pool2d", MAX_POOL), ("pool2d", AVG_POOL_BLOCKED), ("pool2d", MAX_POOL_TO_1X1), ("pool2d", AVG_POOL_PADS),
    ("reduce", SOFTMAX), ("reduce", SUM_COLUMNS), ("reduce", LAYER_NORM), ("reduce", GLOBAL_AVG_POOL),
]


def small_cnn():
    """conv 3x3 + relu, max pool 3x3/2, a 1x1 conv, global average pool, dense, softmax."""
    def w(*shape):
        return (RNG.standard_normal(shape) * 0.2).astype(np.float32)

    inits = {"w1": w(16, 8, 3, 3), "w2": w(16, 16, 1, 1), "wf": w(10, 16)}
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"]),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf"], ["d"], transB=1),
        helper.make_node("Softmax", ["d"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def cnn():
    return small_cnn()


def _task(tasks, template: str, kind: str):
    return next(t for t in tasks if t.template == template and t.params[0] == kind)


def test_a_cnn_has_pool_and_reduce_tasks_which_are_what_the_compile_asks_for(cnn):
    tasks = extract_tasks(cnn)
    kinds = sorted((t.template, t.params[0]) for t in tasks if t.template in ("pool2d", "reduce"))
    assert kinds == [("pool2d", "max"), ("reduce", "mean"), ("reduce", "softmax")], [t.key for t in tasks]
    # the max pool runs between blocked convs: alter-layout's layout is part of the workload
    pool_task = _task(tasks, "pool2d", "max")
    assert pool_task.params[1] == [1, 1, 16, 16, 16] and pool_task.params[8] == "NCHW16c"
    assert pool_task.flops == 1 * 1 * 8 * 8 * 16 * 9
    asked = []
    with use_configs(lambda template, params: asked.append((template, params))):
        tc.compile(cnn)
    assert {t.key for t in tasks} == {workload_key(template, params) for template, params in asked}


@pytest.mark.parametrize("template, params", CASES)
def test_the_untuned_schedule_is_the_default_config_of_the_space(template, params):
    t = get_template(template)
    default = t.default_config(*params)
    assert t.space(*params).contains(default)
    assert sched_ir(template, params, None) == sched_ir(template, params, default)
    # and it is exactly what compiling the op alone schedules (no tuning context)
    *inputs, out = t._compute(*params)
    assert str(build_module(default_schedule([out]), [*inputs, out])) == sched_ir(template, params, None)


@pytest.mark.parametrize("template, params", CASES)
def test_every_knob_value_of_the_space_schedules_something_else(template, params):
    """No dead knob: a value other than the default, alone, changes the sched IR."""
    t = get_template(template)
    space, default = t.space(*params), t.default_config(*params)
    plain = sched_ir(template, params, default)
    for name, values in space.knobs.items():
        for value in values:
            config = {**default, name: value}
            if value != default[name] and space.contains(config):
                assert sched_ir(template, params, config) != plain, config


def test_a_config_prints_as_the_sched_ir_it_makes_and_round_trips_through_a_record(tmp_path):
    t = get_template("pool2d")
    default = t.default_config(*MAX_POOL)
    assert default == {"order": 0, "vector": 16, "parallel": 0, "unroll": 0}  # a small pool: no threads
    config = {"order": 1, "vector": 4, "parallel": 1, "unroll": 1}
    text = sched_ir("pool2d", MAX_POOL, config)
    # the output row split by 4, the window inside each vector, its last axis unrolled, rows parallel
    for line in ("by 4", "sched.reorder %index0_1, %index1_1, %index2_1, %index3.outer, %rh_1, %rw_1, %index3.inner",
                 "sched.unroll %rw_1", "sched.parallel"):  # fmt: skip
        assert line in text, (line, text)
    plain = sched_ir("pool2d", MAX_POOL, default)
    assert "sched.unroll" not in plain and "sched.parallel" not in plain and "by 4" not in plain
    log = TuningLog(tmp_path / "log.jsonl")
    key = workload_key("pool2d", MAX_POOL)
    log.measure(key, "llvm", config, [1e-5])
    (record,) = TuningLog(tmp_path / "log.jsonl").records()
    assert record.workload == key and sched_ir("pool2d", MAX_POOL, record.config) == text


def _numpy(template: str, params, inputs) -> np.ndarray:
    x = inputs[0].astype(np.float64)
    if template == "pool2d":
        kind, _, kernel, strides, pads, _, _, count_pads, *_ = params
        blocked = x.ndim == 5
        if blocked:  # NCHW16c -> NCHW
            n, cb, h, w, b = x.shape
            x = x.transpose(0, 1, 4, 2, 3).reshape(n, cb * b, h, w)
        fill = -np.inf if kind == "max" else 0.0 if count_pads else np.nan
        xp = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])], constant_values=fill)
        oh = (xp.shape[2] - kernel[0]) // strides[0] + 1
        ow = (xp.shape[3] - kernel[1]) // strides[1] + 1
        windows = np.stack([xp[:, :, i : i + strides[0] * oh : strides[0], j : j + strides[1] * ow : strides[1]]
                            for i, j in itertools.product(range(kernel[0]), range(kernel[1]))])  # fmt: skip
        out = windows.max(0) if kind == "max" else np.nanmean(windows, 0)
        if blocked:
            out = out.reshape(n, cb, b, oh, ow).transpose(0, 1, 3, 4, 2)
        return out
    kind, _, axes, keepdims, _ = params
    if kind == "softmax":
        e = np.exp(x - x.max(axis=axes[0], keepdims=True))
        return e / e.sum(axis=axes[0], keepdims=True)
    if kind == "layer_norm":
        scale, bias = inputs[1], inputs[2]
        mean = x.mean(axis=tuple(axes), keepdims=True)
        var = ((x - mean) ** 2).mean(axis=tuple(axes), keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * scale + bias
    return getattr(np, kind)(x, axis=tuple(axes), keepdims=bool(keepdims))


@pytest.mark.parametrize("template, params", CASES)
def test_every_config_of_a_small_space_computes_the_numpy_answer(template, params):
    t = get_template(template)
    space = t.space(*params)
    assert space.size > 1
    names = list(space.knobs)
    # every config the schedule takes: also those the space leaves out as
    # equivalent to another (order 1 with a vector as wide as the axis)
    for values in itertools.product(*space.knobs.values()):
        config = dict(zip(names, values))
        s, args = t.schedule(*params, config=config)
        f = _build(s, args)
        inputs = t.inputs(args, RNG)
        out = np.zeros([int(d) for d in args[-1].shape], args[-1].dtype)
        f(*inputs, out)
        np.testing.assert_allclose(out, _numpy(template, params, inputs), rtol=1e-4, atol=1e-5, err_msg=str(config))


def test_the_space_leaves_out_configs_equivalent_to_others():
    space = get_template("pool2d").space(*AVG_POOL_BLOCKED)  # the innermost axis: 16 channel lanes
    assert space.knobs["vector"] == (1, 4, 8, 16) and space.knobs["order"] == (0, 1)
    assert space.contains({"order": 1, "vector": 8, "parallel": 0, "unroll": 1})
    assert not space.contains({"order": 1, "vector": 16, "parallel": 0, "unroll": 1})
    assert space.size == 2 * 4 * 2 * 2 - 2 * 2 == 28  # (order 1, vector 16) x parallel x unroll out


def test_an_invalid_config_is_a_value_error_naming_the_knob():
    t = get_template("pool2d")
    default = t.default_config(*MAX_POOL)
    with pytest.raises(ValueError, match=r"max_pool2d: knob 'vector' = 3 is not one of \[1, 4, 16\]"):
        t.schedule(*MAX_POOL, config={**default, "vector": 3})
    with pytest.raises(ValueError, match="the config has no knob 'unroll'"):
        t.schedule(*MAX_POOL, config={"order": 0, "vector": 16, "parallel": 0})
    with pytest.raises(ValueError, match="unknown knob"):
        get_template("reduce").schedule(*SOFTMAX, config={**get_template("reduce").default_config(*SOFTMAX), "tile": 2})
    # a softmax row has no window order to choose
    with pytest.raises(ValueError, match=r"knob 'order' = 1 is not one of \[0\]"):
        get_template("reduce").schedule(*SOFTMAX, config={**get_template("reduce").default_config(*SOFTMAX), "order": 1})


def test_compile_applies_a_logged_pool_config_and_skips_an_invalid_one(cnn, tmp_path):
    x = RNG.standard_normal((1, 8, 16, 16)).astype(np.float32)
    expected = ort.InferenceSession(cnn.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    task = _task(extract_tasks(cnn), "pool2d", "max")
    default = get_template("pool2d").default_config(*task.params)
    chosen = {**default, "order": 1, "vector": 4, "unroll": 1}
    log = TuningLog(tmp_path / "tune.jsonl")
    log.measure(task.key, "llvm", default, [2e-5])
    log.measure(task.key, "llvm", chosen, [1e-5])
    untuned = tc.compile(cnn)
    tuned = tc.compile(cnn, tuning_log=log)
    assert tuned.tuned == {task.key: chosen} and untuned.tuned == {}
    assert tuned.ir != untuned.ir
    np.testing.assert_allclose(tuned(x), expected, rtol=1e-4, atol=1e-5)
    bad = TuningLog(tmp_path / "bad.jsonl")
    bad.measure(task.key, "llvm", {**default, "vector": 3}, [1e-6])
    with pytest.warns(UserWarning, match=r"1 record\(s\) of pool2d\[.*are skipped"):
        assert tc.compile(cnn, tuning_log=bad).tuned == {}
    with pytest.raises(Exception, match=r"tuning log's config of pool2d\[.*knob 'vector' = 3 is not one of"):
        with use_configs(LogLookup(bad)):
            tc.compile(cnn)


def test_a_small_tuning_run_over_a_pool_task_is_applied_by_compile(cnn, tmp_path):
    task = _task(extract_tasks(cnn), "pool2d", "max")
    log = TuningLog(tmp_path / "tune.jsonl")
    with LocalExecutor(1) as executor:
        results = tune_tasks([task], log, 4, executor, batch=4, repeat=1)
    best = results[task.key]["best"]
    assert best is not None and best.error is None and log.finished(task.key, "llvm")
    default = get_template("pool2d").default_config(*task.params)
    assert log.records()[0].config == default  # the default is measured first
    # what the compile applies is the lookup's answer: the best, unless the default is within noise of it
    answer = LogLookup(log)("pool2d", task.params)
    tuned = tc.compile(cnn, tuning_log=log)
    assert tuned.tuned == ({task.key: answer} if answer is not None else {})
    x = RNG.standard_normal((1, 8, 16, 16)).astype(np.float32)
    np.testing.assert_allclose(tuned(x), tc.compile(cnn)(x), rtol=1e-5, atol=1e-6)
