"""ONNX unary math (Sin ... Round), Mod of floats, Pow of mixed and integer types and
the small composed operators: compiled with tc.compile and compared with numpy over
wide ranges, NaN and infinities included, in f16/f32/f64, on shapes long enough to
take the vectorized loop and its tail."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import tilecraft as tc
from tilecraft.frontends.onnx import OnnxImportError, from_onnx

RNG = np.random.default_rng(8)
_ELEM = {np.float16: TensorProto.FLOAT16, np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
         np.int8: TensorProto.INT8, np.int16: TensorProto.INT16, np.int32: TensorProto.INT32,
         np.int64: TensorProto.INT64, np.uint8: TensorProto.UINT8}  # fmt: skip


def run(op: str, inputs: list[np.ndarray], out_dtype=None, out_shape=None, opset=22, **attrs) -> np.ndarray:
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attrs)
    ins = [helper.make_tensor_value_info(n, _ELEM[a.dtype.type], a.shape) for n, a in zip(names, inputs)]
    shape = out_shape if out_shape is not None else np.broadcast_shapes(*(a.shape for a in inputs))
    dtype = np.dtype(out_dtype or inputs[0].dtype).type
    out = helper.make_tensor_value_info("y", _ELEM[dtype], shape)
    model = helper.make_model(helper.make_graph([node], "g", ins, [out]),
                              opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    y = tc.compile(model)(*inputs)
    return y[0] if isinstance(y, tuple) else y


_SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0]

# (ONNX op, numpy function, the range of ordinary inputs)
_MATH = [
    ("Sin", np.sin, 100.0), ("Cos", np.cos, 100.0), ("Tan", np.tan, 3.0),
    ("Asin", np.arcsin, 1.2), ("Acos", np.arccos, 1.2), ("Atan", np.arctan, 1e4),
    ("Sinh", np.sinh, 12.0), ("Cosh", np.cosh, 12.0), ("Asinh", np.arcsinh, 1e4),
    ("Acosh", np.arccosh, 1e4), ("Atanh", np.arctanh, 1.2),
    ("Floor", np.floor, 1e3), ("Ceil", np.ceil, 1e3), ("Round", np.rint, 10.0),
]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op,fn,span", _MATH, ids=[m[0] for m in _MATH])
def test_unary_math(op, fn, span, dtype):
    x = np.concatenate([RNG.uniform(-span, span, 131), _SPECIAL, [0.5, 1.5, 2.5, -0.5, -2.5, 1.0, -1.0]])
    x = x.astype(dtype).reshape(1, -1)
    with np.errstate(all="ignore"):
        expected = fn(x)
    rtol = {np.float16: 1e-3, np.float32: 2e-6, np.float64: 1e-14}[dtype]
    np.testing.assert_allclose(run(op, [x]), expected, rtol=rtol, atol=0)


def test_round_halves_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 2.5000002, 1e8 + 1], np.float32)
    np.testing.assert_array_equal(run("Round", [x]), np.rint(x))


def test_math_rejects_integers():
    with pytest.raises(OnnxImportError, match="Sin.*floating-point"):
        run("Sin", [np.arange(4, dtype=np.int32)])


_DIVIDENDS = [0.0, -0.0, 0.0, -0.0, -3.0, 3.0, -1.0, 1.0, np.inf, -np.inf, 1.0, 1.0, np.nan, 1.0,
              -4.3, 7.2, 5.0, 4.3, -7.2, 8.0, 6e4, -6e4, 2.5, 1e-3]  # fmt: skip
_DIVISORS = [-2.0, 2.0, 2.0, -2.0, np.inf, np.inf, -np.inf, -np.inf, 2.0, 2.0, 0.0, -0.0, 2.0, np.nan,
             2.1, -3.4, 8.0, -2.1, 3.4, 5.0, 3.0, 7.0, -0.5, 1e-4]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_mod(dtype):
    """fmod=0 is numpy's mod (the divisor's sign, signed zeros too), fmod=1 C's fmod,
    exact even for a quotient too large for any float (1e30 mod 3)."""
    a, b = np.array(_DIVIDENDS, dtype), np.array(_DIVISORS, dtype)
    if dtype != np.float16:
        a, b = np.append(a, [1e30, -1e30]).astype(dtype), np.append(b, [3.0, 7.0]).astype(dtype)
    with np.errstate(all="ignore"):
        floor_mod, c_mod = np.mod(a, b), np.fmod(a, b)
    y = run("Mod", [a, b])
    np.testing.assert_array_equal(y, floor_mod)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(floor_mod))
    np.testing.assert_array_equal(run("Mod", [a, b], fmod=1), c_mod)


def test_float_mod_broadcast_vectorized():
    a = RNG.uniform(-50, 50, (3, 67)).astype(np.float32)
    b = RNG.uniform(-5, 5, (67,)).astype(np.float32)
    np.testing.assert_array_equal(run("Mod", [a, b]), np.mod(a, b))
    np.testing.assert_array_equal(run("Mod", [a, b], fmod=1), np.fmod(a, b))


def _integer_power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """numpy's power (wrapping); for y < 0 the exact power truncated toward zero."""
    positive = np.power(x, np.maximum(y, 0).astype(x.dtype))
    tiny = np.where(x == 1, 1, np.where(x == -1, 1 - 2 * (y % 2), 0))
    return np.where(y < 0, tiny, positive).astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_pow_run_time_exponent(dtype):
    info = np.iinfo(dtype)
    x = np.array([1, 2, 3, -2, -3, 0, 5, -1, -1, 0, 7, 2, 0, info.max, info.min, -1], dtype)
    y = np.array([4, 5, 6, 3, 5, 0, -1, -3, -4, -2, 40, info.max, 0, 2, 3, info.min], dtype)
    x = np.concatenate([x, RNG.integers(-9, 10, 37).astype(dtype)])
    y = np.concatenate([y, RNG.integers(-3, 12, 37).astype(dtype)])
    np.testing.assert_array_equal(run("Pow", [x, y]), _integer_power(x, y))


def test_pow_mixed_types():
    x = np.array([1.0, 2.0, 3.0, -2.0, -0.5, 0.0], np.float32)
    n = np.array([4, 5, 6, 3, -3, 0], np.int64)
    np.testing.assert_allclose(run("Pow", [x, n]), np.power(x, n.astype(np.float32)), rtol=1e-6)
    # an integer base keeps its type: numpy's float64 power, truncated
    i = np.array([1, 2, 3, -2, 4, 10], np.int64)
    f = np.array([4.0, 5.0, 6.0, 3.0, 0.5, -1.0], np.float32)
    np.testing.assert_array_equal(run("Pow", [i, f]), np.power(i, f.astype(np.float64)).astype(np.int64))
    # two integer types: computed in the wider, wrapped to the base's
    b = np.array([2, 3, -2, 7], np.int32)
    e = np.array([31, 4, 33, 3], np.int64)
    np.testing.assert_array_equal(run("Pow", [b, e]), np.power(b.astype(np.int64), e).astype(np.int32))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_pow_as_c(dtype):
    """Negative bases with integral exponents, 0 ** 0, 1 ** NaN: C's pow, as numpy."""
    x = np.array([-2.0, 2.0, 0.0, 1.0, -8.0, -3.0, np.inf, np.nan, 0.0, 1.5], dtype)
    y = np.array([3.0, -2.0, 0.0, np.nan, 1 / 3, 4.0, 0.0, 0.0, -1.0, 2.5], dtype)
    with np.errstate(all="ignore"):
        expected = np.power(x, y)
    np.testing.assert_allclose(run("Pow", [x, y]), expected, rtol=1e-3 if dtype == np.float16 else 1e-6)


def test_bitshift_int64():
    info = np.iinfo(np.int64)
    x = np.array([16, 4, 1, -1, -16, info.min, info.max, 5, -5, 3, -7, 12345678912345], np.int64)
    y = np.array([1, 2, 3, 63, 63, 63, 63, 0, 62, 64, -1, 40], np.int64)

    def shifted(a: int, b: int, left: bool) -> int:
        if not 0 <= b < 64:
            return 0 if left or a >= 0 else -1
        if not left:
            return a >> b
        bits = (a << b) & ((1 << 64) - 1)
        return bits - (1 << 64) if bits >= 1 << 63 else bits

    for direction in ("LEFT", "RIGHT"):
        expected = np.array([shifted(a, b, direction == "LEFT") for a, b in zip(x.tolist(), y.tolist())], np.int64)
        np.testing.assert_array_equal(run("BitShift", [x, y], direction=direction), expected)


# -- composed operators ------------------------------------------------------------------


def test_swish_and_swiglu():
    a = RNG.normal(0, 4, (3, 35)).astype(np.float32)
    b = RNG.normal(0, 1, (3, 35)).astype(np.float32)
    swish = a / (1 + np.exp(-0.5 * a))
    np.testing.assert_allclose(run("Swish", [a], opset=24, alpha=0.5), swish, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run("SwiGLU", [a, b], opset=28, alpha=0.5), swish * b, rtol=1e-5, atol=1e-6)
    h = a.astype(np.float16)
    wide = h.astype(np.float32)
    np.testing.assert_allclose(run("Swish", [h], opset=24), wide / (1 + np.exp(-wide)), rtol=2e-3, atol=2e-3)


def test_mean_of_inputs():
    xs = [RNG.normal(size=(2, 5)).astype(np.float32), RNG.normal(size=(5,)).astype(np.float32),
          RNG.normal(size=(2, 1)).astype(np.float32)]  # fmt: skip
    np.testing.assert_allclose(run("Mean", xs, out_shape=(2, 5)), (xs[0] + xs[1] + xs[2]) / 3, rtol=1e-6)


def test_mean_variance_normalization():
    x = RNG.normal(3, 2, (2, 3, 4, 5)).astype(np.float32)
    for axes in ([0, 2, 3], [1, -1]):
        mean = x.mean(axis=tuple(axes), keepdims=True)
        std = np.sqrt((x * x).mean(axis=tuple(axes), keepdims=True) - mean * mean)
        np.testing.assert_allclose(run("MeanVarianceNormalization", [x], axes=axes), (x - mean) / (std + 1e-9),
                                   rtol=1e-4, atol=1e-4)  # fmt: skip


@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization(p):
    x = RNG.normal(size=(3, 4, 6)).astype(np.float32)
    x[1, :, 2] = 0  # a zero norm along axis 1 gives 0
    norm = np.abs(x).sum(axis=1, keepdims=True) if p == 1 else np.sqrt((x * x).sum(axis=1, keepdims=True))
    with np.errstate(invalid="ignore"):
        expected = np.where(norm == 0, 0, x / norm)
    np.testing.assert_allclose(run("LpNormalization", [x], axis=1, p=p), expected, rtol=1e-6)
    with pytest.raises(OnnxImportError, match="p=3 is not supported"):
        run("LpNormalization", [x], axis=1, p=3)


def test_dynamic_quantize_linear():
    x = RNG.normal(1, 3, (4, 33)).astype(np.float32)
    names = ["y", "scale", "zero_point"]
    node = helper.make_node("DynamicQuantizeLinear", ["x"], names)
    outs = [helper.make_tensor_value_info("y", TensorProto.UINT8, x.shape),
            helper.make_tensor_value_info("scale", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("zero_point", TensorProto.UINT8, [])]  # fmt: skip
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)], outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=8)
    y, scale, zero_point = tc.compile(model)(x)
    low, high = min(x.min(), 0), max(x.max(), 0)
    expected_scale = np.float32((high - low) / np.float32(255))
    expected_zero = np.uint8(np.rint(np.clip(-low / expected_scale, 0, 255)))
    assert scale == expected_scale and zero_point == expected_zero and y.dtype == np.uint8
    np.testing.assert_array_equal(y, np.clip(np.rint(x / expected_scale) + expected_zero, 0, 255).astype(np.uint8))


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
def test_windows_fold_to_constants(op):
    import onnx.reference

    size = helper.make_tensor("size", TensorProto.INT64, [], [10])
    node = helper.make_node(op, ["size"], ["y"], periodic=0, output_datatype=TensorProto.DOUBLE)
    out = helper.make_tensor_value_info("y", TensorProto.DOUBLE, [10])
    model = helper.make_model(helper.make_graph([node], "g", [], [out], initializer=[size]),
                              opset_imports=[helper.make_opsetid("", 17)], ir_version=8)  # fmt: skip
    module, _ = from_onnx(model)
    assert "graph.constant" in str(module) or "graph.weight" in str(module)
    expected = onnx.reference.ReferenceEvaluator(model).run(None, {})[0]
    np.testing.assert_allclose(tc.compile(model)(), expected, rtol=1e-12, atol=1e-15)


def test_small_type_edges():
    """Celu of float16, MaxPool of uint8 (padding below every uint8 value)."""
    h = RNG.normal(0, 2, (3, 19)).astype(np.float16)
    expected = np.maximum(h, 0) + np.minimum(0, 1.5 * (np.exp(h.astype(np.float32) / 1.5) - 1))
    np.testing.assert_allclose(run("Celu", [h], alpha=1.5), expected, rtol=2e-3, atol=2e-3)
    u = RNG.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    y = run("MaxPool", [u], out_shape=(1, 2, 5, 5), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    padded = np.pad(u, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    np.testing.assert_array_equal(y, windows.max(axis=(-1, -2)))


# -- DFT and STFT as a matmul with a constant matrix ---------------------------------------


def _dft_model(x: np.ndarray, out_shape, axis: int, opset: int = 20, dft_length: int | None = None, **attrs):
    inits = [helper.make_tensor("axis", TensorProto.INT64, [], [axis])]
    if dft_length is not None:
        inits.append(helper.make_tensor("dft_length", TensorProto.INT64, [], [dft_length]))
    node = helper.make_node("DFT", ["x", "dft_length" if dft_length is not None else "", "axis"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def test_dft_forward_and_one_sided():
    x = RNG.normal(size=(2, 12, 5, 1)).astype(np.float32)
    spectrum = np.fft.fft(x[..., 0].astype(np.float64), axis=1)
    y = tc.compile(_dft_model(x, (2, 12, 5, 2), axis=1))(x)
    np.testing.assert_allclose(y, np.stack([spectrum.real, spectrum.imag], -1), atol=2e-5)
    half = np.fft.rfft(x[..., 0].astype(np.float64), n=16, axis=2)  # zero-padded to 16
    y = tc.compile(_dft_model(x, (2, 12, 9, 2), axis=2, dft_length=16, onesided=1))(x)
    np.testing.assert_allclose(y, np.stack([half.real, half.imag], -1), atol=2e-5)


def test_inverse_one_sided_dft():
    x = RNG.normal(size=(1, 6, 4, 2)).astype(np.float32)
    y = tc.compile(_dft_model(x, (1, 10, 4, 1), axis=1, inverse=1, onesided=1))(x)
    expected = np.fft.irfft(x[..., 0] + 1j * x[..., 1], n=10, axis=1)[..., np.newaxis]
    np.testing.assert_allclose(y, expected, atol=1e-6)


def test_dft_matrix_inverse_is_numpy_ifft():
    from tilecraft.frontends.onnx.composed import dft_matrix

    x = RNG.normal(size=(7, 2))
    y = (x.reshape(-1) @ dft_matrix(7, 2, 7, inverse=True, onesided=False)).reshape(7, 2)
    expected = np.fft.ifft(x[:, 0] + 1j * x[:, 1])
    np.testing.assert_allclose(y, np.stack([expected.real, expected.imag], -1), atol=1e-15)


def test_complex_inverse_dft_is_refused():
    x = np.zeros((1, 4, 3, 2), np.float32)
    with pytest.raises(OnnxImportError, match=r"'DFT'.*inverse=1 with onesided=0"):
        tc.compile(_dft_model(x, (1, 4, 3, 2), axis=1, inverse=1))


def test_stft_with_window():
    signal = RNG.normal(size=(2, 40, 1)).astype(np.float32)
    window = np.hanning(8).astype(np.float32)
    step = helper.make_tensor("step", TensorProto.INT64, [], [5])
    node = helper.make_node("STFT", ["signal", "step", "window"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("signal", TensorProto.FLOAT, signal.shape),
                                            helper.make_tensor_value_info("window", TensorProto.FLOAT, [8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 7, 5, 2])], initializer=[step])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    y = tc.compile(model)(signal, window)
    frames = np.stack([signal[:, f * 5 : f * 5 + 8, 0] * window for f in range(7)], axis=1)
    spectrum = np.fft.rfft(frames.astype(np.float64), axis=-1)
    np.testing.assert_allclose(y, np.stack([spectrum.real, spectrum.imag], -1), atol=2e-5)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2, 2), (2, 5, 3, 3), (6, 1, 1)])
def test_det(shape):
    x = RNG.normal(size=shape).astype(np.float32)
    np.testing.assert_allclose(run("Det", [x], out_shape=shape[:-2]), np.linalg.det(x.astype(np.float64)),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_det_of_large_matrices_is_refused():
    with pytest.raises(OnnxImportError, match=r"'Det'.*4x4 matrices is not supported"):
        run("Det", [np.eye(4, dtype=np.float32)], out_shape=())
