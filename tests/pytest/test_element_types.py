"""Element types beyond float32/int32/int64/bool through the whole pipeline:
float16, float64, int8, int16 in te kernels and in ONNX models, compared with
numpy bit for bit (numpy computes float16 arithmetic in float32 and rounds each
result, which is what LLVM does with `half`)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import tilecraft as tc
from tilecraft import te
from tilecraft.frontends.onnx import OnnxImportError

RNG = np.random.default_rng(7)


def _build(dtype_in: str, dtype_out: str, fn, n: int = 37):
    X = te.placeholder((n,), dtype_in, name="X")
    Y = te.compute((n,), lambda i: fn(X[i]), name="Y")
    s = te.create_schedule(Y)
    return tc.build(s, [X, Y])


@pytest.mark.parametrize("dtype", ["float16", "float64", "int8", "int16"])
def test_te_arithmetic(dtype):
    n = 37  # not a multiple of a vector width: a tail too
    if dtype.startswith("float"):
        x = (RNG.standard_normal(n) * 10).astype(dtype)
        # one operation: float kernels allow reassociation and fma contraction
        f = _build(dtype, dtype, lambda v: v * te.const(3.3, dtype), n)
        expected = x * np.asarray(3.3, dtype)
    else:
        x = RNG.integers(-100, 100, n).astype(dtype)
        f = _build(dtype, dtype, lambda v: v * te.const(3, dtype) + te.const(1, dtype), n)
        with np.errstate(over="ignore"):
            expected = x * np.asarray(3, dtype) + np.asarray(1, dtype)  # wraps like numpy
    y = np.zeros(n, dtype)
    f(x, y)
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y.view(f"u{y.itemsize}"), expected.view(f"u{y.itemsize}"))


def _hard_doubles() -> np.ndarray:
    """Doubles where rounding first to float (to nearest) and then to half gives
    another half than rounding once: just above and below halfway between two
    halves, plus the special values and the edges of half's range."""
    halves = np.arange(0x0001, 0x7BFF, 97, dtype=np.uint16).view(np.float16).astype(np.float64)
    upper = np.nextafter(halves.astype(np.float16), np.float16(np.inf)).astype(np.float64)
    mid = (halves + upper) / 2
    eps = np.abs(mid) * 2.0**-40
    values = np.concatenate([mid, mid + eps, mid - eps, -mid - eps, halves])
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.99, 65520.0, 1e300, -1e300,
               2.0**-24, 2.0**-25, 2.0**-25 + 2.0**-60, 1e-300]
    return np.concatenate([values, special])


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_double_to_half_rounds_once():
    x = _hard_doubles()
    f = _build("float64", "float16", lambda v: v.astype("float16"), x.size)
    y = np.zeros(x.size, np.float16)
    f(x, y)
    expected = x.astype(np.float16)
    assert (x.astype(np.float32).astype(np.float16) != expected).any()  # the cases are hard
    same = (y.view(np.uint16) == expected.view(np.uint16)) | (np.isnan(y) & np.isnan(expected))
    assert same.all(), x[~same][:5]


@pytest.mark.parametrize("src,dst", [("float16", "float64"), ("float64", "int16"), ("int8", "float16"),
                                     ("int16", "int8"), ("float16", "int8"), ("int8", "float64")])
def test_te_casts(src, dst):
    n = 40
    if src.startswith("float"):
        x = (RNG.standard_normal(n) * 50).astype(src)
    else:
        x = RNG.integers(-120, 120, n).astype(src)
    f = _build(src, dst, lambda v: v.astype(dst), n)
    y = np.zeros(n, dst)
    f(x, y)
    np.testing.assert_array_equal(y, x.astype(dst))


def _model(op: str, elem: int, shape=(3, 5), out_elem=None, **attrs) -> onnx.ModelProto:
    node = helper.make_node(op, ["x", "y"] if op != "Cast" else ["x"], ["z"], **attrs)
    inputs = [helper.make_tensor_value_info(n, elem, shape) for n in (["x", "y"] if op != "Cast" else ["x"])]
    out = helper.make_tensor_value_info("z", out_elem if out_elem is not None else elem, shape)
    graph = helper.make_graph([node], "g", inputs, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=8)


_NP = {TensorProto.FLOAT16: np.float16, TensorProto.DOUBLE: np.float64,
       TensorProto.INT8: np.int8, TensorProto.INT16: np.int16}  # fmt: skip


@pytest.mark.parametrize("elem", list(_NP))
@pytest.mark.parametrize("op,fn", [("Add", np.add), ("Mul", np.multiply), ("Max", np.maximum)])
def test_onnx_binary(elem, op, fn):
    dtype = _NP[elem]
    if np.issubdtype(dtype, np.floating):
        x, y = (RNG.standard_normal((2, 3, 5)) * 4).astype(dtype)
    else:
        x, y = RNG.integers(-60, 60, (2, 3, 5)).astype(dtype)
    m = tc.compile(_model(op, elem))
    (z,) = m(x, y) if isinstance(m(x, y), tuple) else (m(x, y),)
    assert z.dtype == dtype
    np.testing.assert_array_equal(z, fn(x, y))


def test_onnx_cast_double_to_half():
    x = _hard_doubles()[:200].reshape(8, 25)
    m = tc.compile(_model("Cast", TensorProto.DOUBLE, (8, 25), TensorProto.FLOAT16, to=TensorProto.FLOAT16))
    z = m(x)
    z = z[0] if isinstance(z, tuple) else z
    np.testing.assert_array_equal(z, x.astype(np.float16))


def test_onnx_unsupported_type_is_named():
    with pytest.raises(OnnxImportError, match="element type complex64"):
        tc.compile(_model("Add", TensorProto.COMPLEX64))


# -- unsigned integers: ports keep uintN, inside they are held widened and wrapped --


def _graph(nodes, inputs: dict[str, tuple[int, tuple]], outputs: dict[str, tuple[int, tuple]]):
    ins = [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()]
    outs = [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()]
    return helper.make_model(helper.make_graph(nodes, "g", ins, outs),
                             opset_imports=[helper.make_opsetid("", 19)], ir_version=8)


_UNSIGNED = {np.uint8: TensorProto.UINT8, np.uint16: TensorProto.UINT16, np.uint32: TensorProto.UINT32}


@pytest.mark.parametrize("dtype", list(_UNSIGNED))
def test_unsigned_arithmetic_wraps_like_numpy(dtype):
    """(x + y) * y - x, then compared with x: every step wraps modulo 2^N, and the
    comparison sees the wrapped value (not the wider type's)."""
    t = _UNSIGNED[dtype]
    info = np.iinfo(dtype)
    nodes = [helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Mul", ["s", "y"], ["p"]),
             helper.make_node("Sub", ["p", "x"], ["z"]), helper.make_node("Greater", ["z", "x"], ["g"]),
             helper.make_node("BitwiseNot", ["z"], ["n"])]
    shape = (4, 6)
    m = tc.compile(_graph(nodes, {"x": (t, shape), "y": (t, shape)},
                          {"z": (t, shape), "g": (TensorProto.BOOL, shape), "n": (t, shape)}))
    x = RNG.integers(0, info.max, shape, endpoint=True).astype(dtype)
    y = RNG.integers(0, info.max, shape, endpoint=True).astype(dtype)
    x[0, :3] = [info.max, 0, info.max]
    y[0, :3] = [info.max, info.max, 1]
    z, g, n = m(x, y)
    expected = (x + y) * y - x  # numpy wraps unsigned arithmetic
    assert z.dtype == dtype and n.dtype == dtype
    np.testing.assert_array_equal(z, expected)
    np.testing.assert_array_equal(g, expected > x)
    np.testing.assert_array_equal(n, ~expected)


def test_casts_into_and_out_of_unsigned():
    nodes = [helper.make_node("Cast", ["x"], ["u"], to=TensorProto.UINT8),
             helper.make_node("Cast", ["u"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Div", ["u", "d"], ["q"])]
    m = tc.compile(_graph(nodes, {"x": (TensorProto.INT16, (8,)), "d": (TensorProto.UINT8, (8,))},
                          {"u": (TensorProto.UINT8, (8,)), "f": (TensorProto.FLOAT, (8,)),
                           "q": (TensorProto.UINT8, (8,))}))
    x = np.array([-1, -128, 255, 256, 300, 0, 7, -300], np.int16)
    d = np.array([2, 3, 5, 7, 255, 1, 200, 9], np.uint8)
    u, f, q = m(x, d)
    np.testing.assert_array_equal(u, x.astype(np.uint8))
    np.testing.assert_array_equal(f, x.astype(np.uint8).astype(np.float32))
    np.testing.assert_array_equal(q, x.astype(np.uint8) // d)


def test_uint64_add_wraps():
    """uint64 is held as its bits in int64 (frontends/onnx/uint64.py): Add wraps."""
    x = np.full((3, 5), 2**64 - 1, np.uint64)
    y = np.arange(15, dtype=np.uint64).reshape(3, 5)
    z = tc.compile(_model("Add", TensorProto.UINT64))(x, y)
    assert z.dtype == np.uint64
    np.testing.assert_array_equal(z, x + y)


def test_te_keeps_unsigned_for_storage():
    X = te.placeholder((4,), "uint8", name="X")
    with pytest.raises(ValueError, match="cannot add uint8 values: .* cast them"):
        te.compute((4,), lambda i: X[i] + X[i])
    with pytest.raises(ValueError, match="make constants of uint8"):
        te.const(3, "uint8")
    Y = te.compute((4,), lambda i: X[i].astype("int16") * te.const(3, "int16"), name="Y")
    f = tc.build(te.create_schedule(Y), [X, Y])
    x = np.array([0, 1, 200, 255], np.uint8)
    y = np.zeros(4, np.int16)
    f(x, y)
    np.testing.assert_array_equal(y, x.astype(np.int16) * 3)


@pytest.mark.parametrize("one_d", [False, True])
def test_onnx_float16_conv_accumulates_in_float32(one_d):
    # 144 products per output: a float16 running sum drifts by several ulps; the
    # reference (and tilecraft) sum in float32 and round once
    xs, ws = ((1, 16, 20), (8, 16, 9)) if one_d else ((1, 16, 6, 7), (8, 16, 3, 3))
    x = RNG.uniform(0, 1, xs).astype(np.float16)
    w = RNG.uniform(0, 1, ws).astype(np.float16)
    b = RNG.uniform(0, 1, ws[0]).astype(np.float16)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="c0")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT16, a.shape)
                                        for n, a in (("x", x), ("w", w), ("b", b))],
                          [helper.make_empty_tensor_value_info("y")])  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    got = tc.compile(m, num_threads=1)(x, w, b)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    if one_d:
        win = np.lib.stride_tricks.sliding_window_view(x64, ws[2], axis=2)  # n c l k
        exact = np.einsum("nclk,ock->nol", win, w64)
    else:
        win = np.lib.stride_tricks.sliding_window_view(x64, ws[2:], axis=(2, 3))  # n c h w kh kw
        exact = np.einsum("nchwij,ocij->nohw", win, w64)
    exact = exact + b.astype(np.float64).reshape(-1, *[1] * (len(xs) - 2))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), exact.astype(np.float16).astype(np.float64), rtol=1e-3, atol=0)


def test_float64_bounds_and_constants_are_not_rounded_to_float32():
    # graph ops keep float properties (Clip's bounds, LeakyRelu's alpha...) in f32 only
    # where f32 holds them exactly: 0.1 as a float64 bound stays 0.1
    from onnx import numpy_helper

    g = helper.make_graph(
        [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [5])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [5])],
        [numpy_helper.from_array(np.array(0.1), "lo"), numpy_helper.from_array(np.array(0.7), "hi")],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = np.array([-1.0, 0.1, 0.3, 0.7, 2.0])
    np.testing.assert_array_equal(tc.compile(m, num_threads=1)(x), np.clip(x, 0.1, 0.7))
