"""ONNX comparison, logic, bitwise, Mod, IsNaN/IsInf, Sign, CastLike: compiled with
tc.compile and compared with numpy, on the edge values the conformance cases do not
have (mod by 0 and -1, the most negative integer, NaN, infinities, -0.0)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import tilecraft as tc

RNG = np.random.default_rng(3)
_ELEM = {np.int8: TensorProto.INT8, np.int16: TensorProto.INT16, np.int32: TensorProto.INT32,
         np.int64: TensorProto.INT64, np.float16: TensorProto.FLOAT16, np.float32: TensorProto.FLOAT,
         np.float64: TensorProto.DOUBLE, np.bool_: TensorProto.BOOL, np.uint8: TensorProto.UINT8,
         np.uint16: TensorProto.UINT16, np.uint32: TensorProto.UINT32}  # fmt: skip


def run(op: str, inputs: list[np.ndarray], out_dtype, out_shape=None, **attrs) -> np.ndarray:
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attrs)
    ins = [helper.make_tensor_value_info(n, _ELEM[a.dtype.type], a.shape) for n, a in zip(names, inputs)]
    shape = out_shape if out_shape is not None else np.broadcast_shapes(*(a.shape for a in inputs))
    out = helper.make_tensor_value_info("y", _ELEM[np.dtype(out_dtype).type], shape)
    model = helper.make_model(helper.make_graph([node], "g", ins, [out]),
                              opset_imports=[helper.make_opsetid("", 20)], ir_version=8)
    y = tc.compile(model)(*inputs)
    return y[0] if isinstance(y, tuple) else y


def _edge_ints(dtype) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 0, info.min, info.min, info.max, 5, -5, 3], dtype)
    b = np.array([3, 3, -3, -3, 4, -1, 0, 0, 0, -1, 7], dtype)
    return a, b


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_mod_edges(dtype):
    a, b = _edge_ints(dtype)
    with np.errstate(divide="ignore"):
        expected = np.where(b == 0, 0, np.remainder(a, np.where(b == 0, 1, b)))  # numpy: x % 0 = 0
    np.testing.assert_array_equal(run("Mod", [a, b], dtype), expected)
    c_style = np.where(b == 0, 0, np.fmod(a, np.where(b == 0, 1, b)))
    np.testing.assert_array_equal(run("Mod", [a, b], dtype, fmod=1), c_style)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int64])
def test_bitwise(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, (3, 8), endpoint=True).astype(dtype)
    b = RNG.integers(info.min, info.max, (8,), endpoint=True).astype(dtype)
    np.testing.assert_array_equal(run("BitwiseXor", [a, b], dtype), a ^ b)
    np.testing.assert_array_equal(run("BitwiseAnd", [a, b], dtype), a & b)
    np.testing.assert_array_equal(run("BitwiseOr", [a, b], dtype), a | b)
    np.testing.assert_array_equal(run("BitwiseNot", [a], dtype), ~a)


def test_bool_logic():
    a = RNG.integers(0, 2, (4, 5)).astype(bool)
    b = RNG.integers(0, 2, (5,)).astype(bool)
    np.testing.assert_array_equal(run("Xor", [a, b], bool), a ^ b)
    np.testing.assert_array_equal(run("And", [a, b], bool), a & b)
    np.testing.assert_array_equal(run("Or", [a, b], bool), a | b)
    np.testing.assert_array_equal(run("Not", [a], bool), ~a)


_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.25, 65504.0]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_predicates(dtype):
    x = np.array(_SPECIAL, dtype)
    y = np.array(_SPECIAL[::-1], dtype)
    np.testing.assert_array_equal(run("IsNaN", [x], bool), np.isnan(x))
    np.testing.assert_array_equal(run("IsInf", [x], bool), np.isinf(x))
    np.testing.assert_array_equal(run("IsInf", [x], bool, detect_negative=0), np.isposinf(x))
    np.testing.assert_array_equal(run("IsInf", [x], bool, detect_positive=0), np.isneginf(x))
    np.testing.assert_array_equal(run("GreaterOrEqual", [x, y], bool), x >= y)  # NaN: false
    np.testing.assert_array_equal(run("LessOrEqual", [x, y], bool), x <= y)
    np.testing.assert_array_equal(run("Sign", [x], dtype), np.sign(x))


def test_castlike_takes_the_element_type():
    x = RNG.standard_normal((3, 4)).astype(np.float64) * 1000
    like = np.zeros((1,), np.float16)
    np.testing.assert_array_equal(run("CastLike", [x, like], np.float16), x.astype(np.float16))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.int8, np.int16, np.int32])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift(dtype, direction):
    """Every shift amount from -2 to width + 1 against numpy (out-of-range amounts
    give 0, or -1 for a right shift of a negative number, as ONNX's reference)."""
    info = np.iinfo(dtype)
    width = info.bits
    y = np.arange(-2 if info.min < 0 else 0, width + 2).astype(dtype)
    x = RNG.integers(info.min, info.max, (5, y.size), endpoint=True).astype(dtype)
    x[0] = info.min
    x[1] = info.max
    inside = (y >= 0) & (y < width)
    safe = np.where(inside, y, 0)
    with np.errstate(over="ignore"):
        if direction == "LEFT":
            expected = np.where(inside, np.left_shift(x, safe), 0).astype(dtype)
        else:
            expected = np.where(inside, np.right_shift(x, safe), np.where(x < 0, -1, 0)).astype(dtype)
    np.testing.assert_array_equal(run("BitShift", [x, y], dtype, direction=direction), expected)


def test_zero_size_input_read_for_its_type_only():
    """CastLike's `like` may be empty: only its element type is read (the empty
    argument is passed and never read, fold-empty-tensors)."""
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    y = run("CastLike", [x, np.zeros((0,), np.float64)], np.float64, x.shape)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, x.astype(np.float64))
