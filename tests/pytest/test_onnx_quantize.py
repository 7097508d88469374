"""QuantizeLinear / DequantizeLinear (frontends/onnx/quantize.py) on int32 tensors
(the integer type the importer has besides int64): dequantize against onnxruntime,
quantize against numpy's round-half-to-even formula, per tensor and per axis."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(9)


def make(op_type, x, inits, **attrs):
    node = helper.make_node(op_type, ["x", *inits], ["y"], name="q0", **attrs)
    elem = TensorProto.FLOAT if x.dtype == np.float32 else TensorProto.INT32
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, x.shape)],
                          [helper.make_empty_tensor_value_info("y")],
                          [numpy_helper.from_array(v, n) for n, v in inits.items()])  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


@pytest.mark.parametrize("per_axis", [False, True])
def test_dequantize_int32_matches_onnxruntime(per_axis):
    x = RNG.integers(-1000, 1000, (2, 3, 4)).astype(np.int32)
    scale = np.array([0.5, 0.25, 2.0], np.float32) if per_axis else np.array(0.125, np.float32)
    zero = np.array([3, -7, 0], np.int32) if per_axis else np.array(-5, np.int32)
    m = make("DequantizeLinear", x, {"s": scale, "z": zero}, axis=1)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(tc.compile(m, num_threads=1)(x), want, rtol=1e-6)


@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_rounds_half_to_even_and_saturates(per_axis):
    x = np.concatenate([np.arange(-6, 6.5, 0.5), RNG.standard_normal(17) * 1e6, [3e9, -3e9]]).astype(np.float32).reshape(4, 11)
    scale = np.array([0.5, 1.0, 2.0, 0.1], np.float32) if per_axis else np.array(1.0, np.float32)
    zero = np.array([1, 0, -2, 5], np.int32) if per_axis else np.array(2, np.int32)
    m = make("QuantizeLinear", x, {"s": scale, "z": zero}, axis=0)
    s, z = (scale.reshape(4, 1), zero.reshape(4, 1)) if per_axis else (scale, zero)
    want = np.clip(np.rint(x / s).astype(np.float64) + z, -(2**31), 2**31 - 1).astype(np.int32)  # the whole range
    got = tc.compile(m, num_threads=1)(x)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("dtype", "elem", "zero"), [
    (np.uint8, TensorProto.UINT8, 128), (np.uint16, TensorProto.UINT16, 32767),
    (np.int16, TensorProto.INT16, 256), (np.int8, TensorProto.INT8, -100),
    (np.int32, TensorProto.INT32, -3), (np.uint32, TensorProto.UINT32, 3),
])  # fmt: skip
def test_quantize_saturates_to_the_zero_point_type_after_adding_it(dtype, elem, zero):
    # uintN zero points are held widened (uint8 in i16): the bounds are still uintN's;
    # and a value that saturates only once the zero point is added saturates.
    info = np.iinfo(dtype)
    x = np.concatenate([np.arange(-6, 6.5, 0.5), [1e3, -1e3, 7e4, -7e4, 3e9, -3e9],
                        (2.0 * np.array([info.max - zero, info.min - zero]) + [[-1], [0], [1], [2]]).ravel()]
                       ).astype(np.float32)  # fmt: skip
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q0")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", elem, x.shape)],
                          [numpy_helper.from_array(np.array(2.0, np.float32), "s"),
                           numpy_helper.from_array(np.array(zero, dtype), "z")])  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    want = np.clip(np.rint(x / np.float32(2.0)).astype(np.float64) + zero, info.min, info.max).astype(dtype)
    got = tc.compile(m, num_threads=1)(x)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_quantize_refuses_a_float16_input():
    x = np.zeros(4, np.float16)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q0")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, x.shape)],
                          [helper.make_empty_tensor_value_info("y")],
                          [numpy_helper.from_array(np.array(2.0, np.float16), "s"),
                           numpy_helper.from_array(np.array(1, np.int8), "z")])  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    from tilecraft.frontends.onnx.importer import OnnxImportError
    with pytest.raises(OnnxImportError, match="QuantizeLinear.*float16|QuantizeLinear.*f16"):
        tc.compile(m, num_threads=1)


@pytest.mark.parametrize("dtype,elem", [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8)])
@pytest.mark.parametrize("per_axis", [False, True])
def test_matmul_integer_and_qlinear_matmul_match_onnxruntime(dtype, elem, per_axis):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max + 1, (5, 7)).astype(dtype)
    b = RNG.integers(info.min, info.max + 1, (7, 3)).astype(dtype)
    a_zero = RNG.integers(info.min, info.max + 1, ()).astype(dtype)  # onnxruntime: one value
    b_zero = RNG.integers(info.min, info.max + 1, 3 if per_axis else ()).astype(dtype)
    consts = {"a_zero": a_zero, "b_zero": b_zero}
    node = helper.make_node("MatMulInteger", ["a", "b", "a_zero", "b_zero"], ["y"], name="mm")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", elem, a.shape),
                                        helper.make_tensor_value_info("b", elem, b.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, (5, 3))],
                          [numpy_helper.from_array(v, n) for n, v in consts.items()])  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"a": a, "b": b})[0]
    np.testing.assert_array_equal(tc.compile(m, num_threads=1)(a, b), want)

    scales = {"a_scale": np.float32(0.02), "b_scale": np.float32(0.03), "y_scale": np.float32(0.5)}
    y_zero = np.array(info.max // 3, dtype)
    inits = {**scales, "a_zero": a_zero, "b_zero": b_zero, "y_zero": y_zero}
    names = ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"]
    node = helper.make_node("QLinearMatMul", names, ["y"], name="qmm")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", elem, a.shape),
                                        helper.make_tensor_value_info("b", elem, b.shape)],
                          [helper.make_tensor_value_info("y", elem, (5, 3))],
                          [numpy_helper.from_array(np.asarray(v), n) for n, v in inits.items()])  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    got = tc.compile(m, num_threads=1)(a, b)
    assert got.dtype == dtype
    from onnx.reference import ReferenceEvaluator

    np.testing.assert_array_equal(got, ReferenceEvaluator(m).run(None, {"a": a, "b": b})[0])
    # onnxruntime scales in float32 where onnx's reference (and tilecraft) use float64:
    # a value next to a tie may round the other way
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"a": a, "b": b})[0]
    assert np.abs(got.astype(np.int32) - want.astype(np.int32)).max() <= 1
