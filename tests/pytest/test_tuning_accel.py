"""The accelerator's tuning template (autotune/accel_templates.py): its knob space
(tiles, channel blocks, virtual threads) with the buffers' constraint, configs as
sched IR, a small tuning run measured on the simulator, and tc.compile(q,
target="accel", tuning_log=...) using the logged configs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.autotune.explore import Space
from tilecraft.autotune.measure import Job, LocalExecutor
from tilecraft.autotune.records import TuningLog
from tilecraft.autotune.templates import get_template, sched_ir, workload_key
from tilecraft.autotune.tuner import tune
from tilecraft.backends.accel.spec import buffer_use, default_spec, load_spec
from tilecraft.dialects.graph_reference import evaluate
from tilecraft.driver.compile_model import graph_function
from tilecraft.runtime.offload import AccelStep, accel_params
from tilecraft.topi import accel_conv2d as ac
from tilecraft.utils.weights import store_of

SPEC = default_spec()
SMALL = ac.conv2d_params((1, 32, 8, 8), (32, 32, 3, 3), (1, 1), (1, 1, 1, 1), 8, True, SPEC)
# ResNet-18's layer2 downsample (1x1, 64 -> 128, stride 2) on a 28x28 input instead of 56x56
DOWNSAMPLE = ac.conv2d_params((1, 64, 28, 28), (128, 64, 1, 1), (2, 2), (0, 0, 0, 0), 9, True, SPEC)
MEASURE = "tilecraft.autotune.accel_templates:measure"


def job(params, config) -> Job:
    return Job(MEASURE, {"template": "conv2d_accel", "shape": list(params), "config": config, "repeat": 1}, 120)


def cycles(seconds: float) -> int:
    return round(seconds * SPEC.clock_mhz * 1e6)


def test_a_constrained_space_holds_only_valid_configs():
    space = Space({"a": (1, 2, 3), "b": (1, 2, 3)}, valid=lambda c: c["a"] * c["b"] <= 3)
    assert space.size == 5 and Space(space.knobs).size == 9
    rng = np.random.default_rng(0)
    seen = {tuple(space.random(rng).values()) for _ in range(200)}
    assert seen == {(1, 1), (1, 2), (1, 3), (2, 1), (3, 1)}
    for _ in range(50):
        c = space.neighbour({"a": 1, "b": 1}, rng)
        assert space.contains(c) and c != {"a": 1, "b": 1}
    assert space.neighbour({"a": 3, "b": 1}, rng) in ({"a": 1, "b": 1}, {"a": 2, "b": 1})
    assert not space.contains({"a": 2, "b": 2}) and not space.contains({"a": 1})
    with pytest.raises(ValueError, match="no config"):
        Space({"a": (1, 2)}, valid=lambda c: False).random(rng)


def test_the_space_and_its_default_config():
    t = get_template("conv2d_accel")
    assert t.target == "accel" and t.measure_job == MEASURE
    space = t.space(*SMALL)
    assert set(space.knobs) == {"tile_h", "tile_w", "tile_oc", "tile_ic", "threads"}
    assert space.knobs["tile_h"] == (1, 2, 4, 8) and space.knobs["threads"] == (1, 2)
    default = t.default_config(*SMALL)
    # the heuristic tc.compile(target="accel") uses without a log: default_tiles + _tile_oc, 2 threads
    assert default == {"tile_h": 8, "tile_w": 8, "tile_oc": 1, "tile_ic": 1, "threads": 2}
    assert space.contains(default) and 1 < space.size < Space(space.knobs).size
    # two threads of the only output-channel tile would be one thread: not a second config
    assert not space.contains({**default, "tile_oc": 2})
    assert t.flops(*SMALL) == 2 * 32 * 8 * 8 * 32 * 9
    # the buffers bound the space: 256 input-channel blocks of 28x28 tiles do not fit
    big = ac.conv2d_params((1, 256, 28, 28), (256, 256, 3, 3), (1, 1), (1, 1, 1, 1), 8, True, SPEC)
    big_space = t.space(*big)
    huge = {"tile_h": 28, "tile_w": 28, "tile_oc": 16, "tile_ic": 16, "threads": 1}
    assert not big_space.contains(huge)
    assert "inp_buffer" in t.problem(*big[:4], huge, SPEC)
    assert big_space.contains(t.default_config(*big))
    rng = np.random.default_rng(1)
    for _ in range(30):
        c = big_space.random(rng)
        assert all(need <= depth for need, depth in buffer_use(*big[:3], c, SPEC).values())


def test_a_config_round_trips_through_its_record_as_sched_ir(tmp_path):
    config = {"tile_h": 4, "tile_w": 8, "tile_oc": 1, "tile_ic": 2, "threads": 2}
    text = sched_ir("conv2d_accel", SMALL, config)
    for line in ("sched.split %y_3 by 4", "sched.split %x_3 by 8", "sched.split %rc_1 by 2",
                 "sched.split %oc.outer into 2", "sched.vthread"):  # fmt: skip
        assert line in text, line
    serial = sched_ir("conv2d_accel", SMALL, {**config, "threads": 1})
    assert "sched.vthread" not in serial
    assert sched_ir("conv2d_accel", SMALL, None) == sched_ir("conv2d_accel", SMALL,
                                                            get_template("conv2d_accel").default_config(*SMALL))
    log = TuningLog(tmp_path / "log.jsonl")
    key = workload_key("conv2d_accel", SMALL)
    log.measure(key, "accel", config, [1e-4])
    (record,) = TuningLog(tmp_path / "log.jsonl").records()
    assert record.workload == key and sched_ir("conv2d_accel", SMALL, record.config) == text


def test_measure_is_bit_exact_simulated_time_and_refuses_bad_configs():
    from tilecraft.autotune.accel_templates import measure, run

    (seconds,) = measure("conv2d_accel", list(SMALL), None)
    result, got, expected = run(SMALL, None)
    np.testing.assert_array_equal(got, expected)
    assert cycles(seconds) == result.cycles > 0
    with LocalExecutor(1) as executor:
        outside, overflow = executor.run([
            job(SMALL, {"tile_h": 3, "tile_w": 8, "tile_oc": 1, "tile_ic": 1, "threads": 1}),
            job(DOWNSAMPLE, {"tile_h": 14, "tile_w": 14, "tile_oc": 8, "tile_ic": 1, "threads": 1}),
        ])  # fmt: skip
    assert outside.error is not None and "tile_h in [1, 2, 4, 8]" in outside.error and not outside.costs
    assert overflow.error is not None and "3144 acc_buffer elements; it holds 2048" in overflow.error


def test_a_small_tuning_run_is_no_slower_than_the_default(tmp_path):
    log = TuningLog(tmp_path / "tune.jsonl")
    key = workload_key("conv2d_accel", DOWNSAMPLE)
    with LocalExecutor(1) as executor:
        best = tune("conv2d_accel", DOWNSAMPLE, log, trials=10, executor=executor, batch=5, repeat=1, timeout=120)
        (default,) = executor.run([job(DOWNSAMPLE, None)])
    assert default.error is None
    records = list(log.measured(key, "accel").values())
    assert len(records) == 10 and log.finished(key, "accel")
    assert all(r.error is None for r in records), [r.error for r in records if r.error]  # the space is pruned
    # every record was checked bit for bit against conv2d_reference (else it is an error)
    assert best is not None and best.error is None
    assert cycles(best.cost) < cycles(default.costs[0])  # 22251 vs 34881 cycles when written


def convnet():
    """conv(3->16) relu (3 channels: CPU), conv(16->32, stride 2) relu and
    conv(32->32) relu (the accelerator), conv 1x1 (its result is dequantized: CPU),
    global pool, classifier."""
    rng = np.random.default_rng(7)

    def randn(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("Conv", ["r3", "w4"], ["c4"]),
        helper.make_node("GlobalAveragePool", ["c4"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    inits = {
        "w1": randn(16, 3, 3, 3, scale=0.3), "b1": randn(16, scale=0.1),
        "w2": randn(32, 16, 3, 3, scale=0.1), "b2": randn(32, scale=0.1),
        "w3": randn(32, 32, 3, 3, scale=0.08), "b3": randn(32, scale=0.1),
        "w4": randn(16, 32, 1, 1, scale=0.2), "fw": randn(5, 16), "fb": randn(5),
    }  # fmt: skip
    g = helper.make_graph(
        nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return model, [randn(1, 3, 16, 16) for _ in range(3)]


def test_compile_with_a_tuning_log_uses_the_best_logged_configs(tmp_path):
    from tilecraft.autotune.accel_templates import measure

    model, data = convnet()
    q = tc.quantize(model, data[:2])
    untuned = tc.compile(q, target="accel")
    steps = [s for s in untuned.steps if isinstance(s, AccelStep)]
    assert len(steps) == 2
    t = get_template("conv2d_accel")
    log = TuningLog(tmp_path / "tune.jsonl")
    chosen = {}
    for step in steps:
        params = accel_params(step.chain, SPEC)
        assert step.config == t.default_config(*params)
        key = workload_key("conv2d_accel", params)
        others = [c for c in t.space(*params)._configs if c != step.config][:2]
        for config in others:  # two measured configs: the faster is the best
            log.measure(key, "accel", config, measure("conv2d_accel", list(params), config))
        log.measure(key, "accel", {**others[0], "tile_h": 3}, error="ValueError: not in the space")
        log.measure(key, "accel", {"tile_h": 1}, [1e-9])  # not a config of this space: skipped
        chosen[key] = min((r for r in log.measured(key, "accel").values() if r.config in others),
                          key=lambda r: r.cost)
    tuned = tc.compile(q, target="accel", tuning_log=log.path)
    x = data[2]
    np.testing.assert_array_equal(tuned(x), evaluate(graph_function(q), store_of(q), [x])[0])
    tuned_steps = [s for s in tuned.steps if isinstance(s, AccelStep)]
    for step, stats in zip(tuned_steps, tuned.stats):
        best = chosen[workload_key("conv2d_accel", accel_params(step.chain, SPEC))]
        assert step.config == best.config != t.default_config(*accel_params(step.chain, SPEC))
        assert stats.cycles == cycles(best.cost)  # the simulator's time is the logged cost
    # a log without the model's workloads: the defaults
    other = TuningLog(tmp_path / "other.jsonl")
    other.measure(workload_key("conv2d_accel", DOWNSAMPLE), "accel", t.default_config(*DOWNSAMPLE), [1.0])
    fallback = tc.compile(q, target="accel", tuning_log=other.path)
    assert [s.config for s in fallback.steps if isinstance(s, AccelStep)] == [s.config for s in steps]


def test_the_spec_clock_converts_cycles_to_seconds(tmp_path):
    assert SPEC.clock_mhz == 100 and SPEC.seconds(250) == pytest.approx(2.5e-6)
    path = tmp_path / "fast.json"
    values = {k: v for k, v in SPEC.to_dict().items() if k != "CLOCK_MHZ"}
    path.write_text(json.dumps(values))
    assert load_spec(path).clock_mhz == 100  # optional: VTA's PYNQ clock
    path.write_text(json.dumps({**values, "CLOCK_MHZ": 250}))
    fast = load_spec(path)
    assert fast.seconds(250) == pytest.approx(1e-6) and fast.overrides() == {"CLOCK_MHZ": 250}
