"""int8 post-training quantization (`tc.quantize`, calibration, quantize-int8) and
graph.requantize: the compiled quantized model equals the numpy evaluation of its
quantized graph bit for bit, and stays close to the float model."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.driver.context import parse_text
from tilecraft.dialects.graph_reference import evaluate
from tilecraft.driver.compile_model import graph_function
from tilecraft.transforms.quantize_int8 import scale_exponent
from tilecraft.utils.weights import store_of

RNG = np.random.default_rng(11)


def randn(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def cnn():
    """conv-bn-relu, conv-relu, a residual add, pooling and a classifier."""
    c = 16
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "s", "bb", "m", "v"], ["n1"], epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], strides=[2, 2]),
        helper.make_node("Add", ["c3", "c3"], ["s3"]),
        helper.make_node("Relu", ["s3"], ["r3"]),
        helper.make_node("GlobalAveragePool", ["r3"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    inits = {
        "w1": randn(c, 3, 3, 3, scale=0.3), "b1": randn(c), "s": randn(c), "bb": randn(c),
        "m": randn(c, scale=0.1), "v": np.abs(randn(c)) + 0.5,
        "w2": randn(c, c, 3, 3, scale=0.1), "w3": randn(c, c, 1, 1, scale=0.2),
        "fw": randn(10, c), "fb": randn(10),
    }  # fmt: skip
    g = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_quantized_cnn_is_bit_exact_and_close_to_float():
    m = cnn()
    calibration = [randn(2, 3, 12, 12) for _ in range(3)]
    q = tc.quantize(m, calibration)
    text = str(q)
    assert text.count("graph.requantize") == 2  # conv1 -> conv2 and conv2 -> conv3 (through relu)
    assert "tc.input_absmax" not in text
    x = randn(2, 3, 12, 12)
    reference = evaluate(graph_function(q), store_of(q), [x])[0]
    got = tc.compile(q)(x)
    np.testing.assert_array_equal(got, reference)
    expected = tc.compile(m)(x)
    assert np.abs(got - expected).max() <= 0.1 * np.abs(expected).max()


def test_calibration_takes_inputs_by_name_and_checks_them():
    m = cnn()
    x = randn(2, 3, 12, 12)
    by_name = tc.quantize(m, [{"x": x}])
    by_position = tc.quantize(m, [x])
    assert str(by_name) == str(by_position)
    with pytest.raises(ValueError, match=r"shape \(3, 12, 12\).*takes \(2, 3, 12, 12\)"):
        tc.quantize(m, [x[0]])
    with pytest.raises(ValueError, match="lacks x"):
        tc.quantize(m, [{"y": x}])
    with pytest.raises(ValueError, match="at least one input"):
        tc.quantize(m, [])


@pytest.mark.parametrize(
    "absmax, exponent", [(127.0, 0), (127.5, 1), (1.0, -6), (0.0, 0), (254.0, 1), (255.0, 2)]
)
def test_scale_exponent_is_the_smallest_that_fits(absmax, exponent):
    assert scale_exponent(absmax) == exponent
    assert absmax / 2.0**exponent <= 127


REQUANTIZE = """
func.func @main(%x: tensor<16xi32>) -> tensor<16xi8> {
  %y = graph.requantize %x {shift = SHIFT : i64, to = i8} : (tensor<16xi32>) -> tensor<16xi8>
  func.return %y : tensor<16xi8>
}
"""


@pytest.mark.parametrize("shift", [0, 1, 4, 30])
def test_requantize_rounds_half_up_clips_and_wraps(shift):
    module = parse_text(REQUANTIZE.replace("SHIFT", str(shift)))
    edge = [-(2**31), 2**31 - 1, -1000, -24, -8, -7, -1, 0, 1, 7, 8, 9, 23, 24, 25, 2040]
    x = np.array(edge, dtype=np.int32)
    got = tc.compile(module)(x)
    reference = evaluate(graph_function(module), None, [x])[0]
    np.testing.assert_array_equal(got, reference)
    wide = x.astype(np.int64)
    if shift:
        wide = (wide + (1 << (shift - 1)) + 2**31) % 2**32 - 2**31  # the add wraps at 32 bits
        wide = np.floor_divide(wide, 1 << shift)
    np.testing.assert_array_equal(got, np.clip(wide, -128, 127).astype(np.int8))
