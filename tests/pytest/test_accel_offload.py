"""`tc.compile(quantized model, target="accel")`: the int8 conv chains the accelerator
computes whole (conv2d, bias, relu, requantize) run on the simulator, the rest on the
CPU; the result is the numpy evaluation of the quantized graph, bit for bit."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.dialects.graph_reference import evaluate
from tilecraft.driver.compile_model import graph_function
from tilecraft.runtime.offload import AccelStep
from tilecraft.utils.weights import store_of

RNG = np.random.default_rng(5)


def randn(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def convnet():
    """conv(3->16) relu, conv(16->32, stride 2) relu, conv(32->32) relu, residual
    add, conv 1x1 (32->16), global pool, classifier: two chains the accelerator takes
    whole (the stride-2 and the 3x3 32->32 conv), the first (3 channels) and the
    last (its sum is added in float) stay on the CPU."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("Conv", ["r3", "w4"], ["c4"]),
        helper.make_node("Add", ["c4", "c4"], ["s"]),
        helper.make_node("GlobalAveragePool", ["s"], ["g"]),
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
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_offloaded_convnet_matches_the_quantized_graph():
    q = tc.quantize(convnet(), [randn(1, 3, 16, 16) for _ in range(2)])
    model = tc.compile(q, target="accel")
    assert model.offloaded == 2
    for _ in range(2):
        x = randn(1, 3, 16, 16)
        expected = evaluate(graph_function(q), store_of(q), [x])[0]
        np.testing.assert_array_equal(model(x), expected)
        assert len(model.stats) == 2 and all(s.macs > 0 for s in model.stats)
    steps = [s for s in model.steps if isinstance(s, AccelStep)]
    assert [s.chain.strides for s in steps] == [(2, 2), (1, 1)]
    assert "GEMM" in steps[0].function.get_source("asm")


def test_a_float_model_has_nothing_to_offload():
    m = convnet()
    model = tc.compile(m, target="accel")
    assert model.offloaded == 0
    x = randn(1, 3, 16, 16)
    np.testing.assert_allclose(model(x), tc.compile(m)(x), rtol=1e-5, atol=1e-5)


def mlp():
    """Gemm relu Gemm relu Gemm: the first two layers end in a requantization (their
    int8 results feed the next layer), so they run on the accelerator as 1x1
    convolutions; the last one's float logits stay on the CPU."""
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node("Gemm", ["r1", "w2", "b2"], ["h2"], transB=1),
        helper.make_node("Relu", ["h2"], ["r2"]),
        helper.make_node("Gemm", ["r2", "w3", "b3"], ["y"], transB=1),
    ]
    inits = {"w1": randn(64, 32, scale=0.2), "b1": randn(64, scale=0.1), "w2": randn(32, 64, scale=0.15),
             "b2": randn(32, scale=0.1), "w3": randn(10, 32, scale=0.2), "b3": randn(10)}  # fmt: skip
    g = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_offloaded_dense_layers_match_the_quantized_graph():
    q = tc.quantize(mlp(), [randn(4, 32) for _ in range(2)])
    model = tc.compile(q, target="accel")
    assert model.offloaded == 2
    steps = [s for s in model.steps if isinstance(s, AccelStep)]
    assert all(s.chain.dense for s in steps)
    x = randn(4, 32)
    np.testing.assert_array_equal(model(x), evaluate(graph_function(q), store_of(q), [x])[0])
