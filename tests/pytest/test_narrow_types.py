"""The narrow element types (bfloat16, float8, float4, int4/uint4/int2/uint2): the
compiled conversions bit for bit against ml_dtypes, and ONNX models using them
against ONNX's reference evaluator."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import tilecraft as tc
from tilecraft import te

FLOATS = ["bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn"]
INTS = ["int4", "uint4", "int2", "uint2"]


def _cast_fn(src: str, dst: str, n: int, vectorize: bool):
    A = te.placeholder((n,), src, name="A")
    B = te.compute((n,), lambda i: A[i].astype(dst), name="B")
    s = te.create_schedule(B)
    if vectorize:
        _, inner = s[B].split(B.op.axis[0], 16)
        s[B].vectorize(inner)
    return tc.build(s, [A, B], target="llvm")


def _run(src: str, dst: str, x: np.ndarray, vectorize: bool) -> np.ndarray:
    out = np.empty(x.shape, np.dtype(getattr(ml_dtypes, dst, dst)))
    _cast_fn(src, dst, len(x), vectorize)(x, out)
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _same(out: np.ndarray, ref: np.ndarray) -> None:
    """Equal bits; where numpy's own float is the result, any NaN matches any NaN
    (the narrow types' NaNs, which ml_dtypes makes, must match bit for bit)."""
    if out.dtype in (np.float16, np.float32, np.float64):
        nan = np.isnan(ref)
        np.testing.assert_array_equal(np.isnan(out), nan)
        np.testing.assert_array_equal(_bits(out)[~nan], _bits(ref)[~nan])
    else:
        bad = np.flatnonzero(_bits(out) != _bits(ref))[:8]
        assert bad.size == 0, f"codes {_bits(out)[bad]} != {_bits(ref)[bad]} at {bad}"


def _codes(name: str) -> np.ndarray:
    dtype = np.dtype(getattr(ml_dtypes, name))
    if dtype.itemsize == 2:
        return np.arange(1 << 16, dtype=np.uint16).view(dtype)
    count = 16 if name == "float4_e2m1fn" else 256
    return np.arange(count, dtype=np.uint8).view(dtype)


def _hard_f32(name: str) -> np.ndarray:
    """Random bit patterns, every representable value and its neighbours, the exact
    midpoints (ties) and just off them, overflow, subnormals, NaN, infinities, -0."""
    rng = np.random.default_rng(7)
    random = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32).view(np.float32)
    values = _codes(name).astype(np.float32)
    reps = np.unique(values[np.isfinite(values)])
    near = np.concatenate([_bits(reps).astype(np.int64) + d for d in (-1, 0, 1)]).astype(np.uint32).view(np.float32)
    mids = ((reps[1:].astype(np.float64) + reps[:-1]) / 2).astype(np.float32)
    ties = np.concatenate([mids, np.nextafter(mids, np.float32(0)), np.nextafter(mids, np.float32(np.inf))])
    special = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 3.4e38, -3.4e38, 1e-45, 2**-126, 1e6, -1e6])
    x = np.concatenate([random, near, ties, -ties, special])
    return x


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("name", FLOATS)
def test_decode_every_code(name, vectorize):
    x = _codes(name)
    _same(_run(name, "float32", x, vectorize), x.astype(np.float32))


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("name", FLOATS)
def test_encode_float32(name, vectorize):
    x = _hard_f32(name)
    with np.errstate(all="ignore"):
        _same(_run("float32", name, x, vectorize), x.astype(getattr(ml_dtypes, name)))


@pytest.mark.parametrize("name", FLOATS)
def test_encode_every_float16(name):
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        _same(_run("float16", name, x, True), x.astype(getattr(ml_dtypes, name)))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_encode_float64_through_float32(name):
    """From f64 through f32, as ml_dtypes: values just off a tie of the narrow type
    round onto the tie in f32, then to even."""
    with np.errstate(all="ignore"):
        reps = np.unique(_codes(name).astype(np.float64))
    reps = reps[np.isfinite(reps)]
    mids = (reps[1:] + reps[:-1]) / 2
    x = np.concatenate([mids, mids * (1 + 2.0**-40), mids * (1 - 2.0**-40), [1e300, -1e300, np.nan, 5e-324]])
    with np.errstate(all="ignore"):
        _same(_run("float64", name, x, False), x.astype(getattr(ml_dtypes, name)))


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fnuz"])
@pytest.mark.parametrize("src", ["int8", "int32", "uint8"])
def test_encode_integers(name, src):
    info = np.iinfo(src)
    x = np.unique(np.linspace(info.min, info.max, 4099).astype(src))
    _same(_run(src, name, x, True), x.astype(getattr(ml_dtypes, name)))


@pytest.mark.parametrize("name", FLOATS)
def test_narrow_to_narrow_and_float16(name):
    x = _codes(name)
    _same(_run(name, "float16", x, True), x.astype(np.float16))
    other = "float8_e5m2" if name != "float8_e5m2" else "bfloat16"
    with np.errstate(all="ignore"):
        _same(_run(name, other, x, True), x.astype(getattr(ml_dtypes, other)))


@pytest.mark.parametrize("name", INTS)
def test_narrow_integers(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    info = ml_dtypes.iinfo(dtype)
    x = np.arange(info.min, info.max + 1).astype(dtype)
    for dst in ("int8", "int32", "float32", "uint8"):
        _same(_run(name, dst, x, True), x.astype(dst))
    wide = np.arange(-300, 300, dtype=np.int32)
    _same(_run("int32", name, wide, True), wide.astype(dtype))
    floats = np.arange(-9, 16).astype(np.float32)
    _same(_run("float32", name, floats, False), floats.astype(dtype))


def test_storage_types_do_not_compute():
    A = te.placeholder((4,), "bfloat16", name="A")
    with pytest.raises(ValueError, match="for storage"):
        te.compute((4,), lambda i: A[i] + A[i])


# -- ONNX ---------------------------------------------------------------------------


def _model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)


def _check(model, feeds, exact=True):
    expected = ReferenceEvaluator(model).run(None, feeds)
    compiled = tc.compile(model)
    got = compiled(**feeds)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        if exact:
            _same(g, e)
        else:
            np.testing.assert_allclose(g.astype(np.float32), e.astype(np.float32), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("saturate", [0, 1])
@pytest.mark.parametrize("to", [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ,
                                TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ])  # fmt: skip
def test_onnx_cast_to_float8_saturate(to, saturate):
    x = np.float32([0.4, 1e6, -1e6, np.inf, -np.inf, np.nan, 449, 465, -0.0, 1e-9, 240.5, 57344 * 1.2])
    node = helper.make_node("Cast", ["x"], ["y"], to=to, saturate=saturate)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [12])],
                   [helper.make_tensor_value_info("y", to, [12])])  # fmt: skip
    with np.errstate(all="ignore"):
        _check(model, {"x": x})


def test_onnx_bfloat16_nodes_round_each_result():
    """Add then Mul on bfloat16: each result is rounded to bfloat16, as the reference."""
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Mul", ["s", "b"], ["y"])]
    bf = TensorProto.BFLOAT16
    model = _model(nodes, [helper.make_tensor_value_info(n, bf, [64]) for n in "ab"],
                   [helper.make_tensor_value_info("y", bf, [64])])  # fmt: skip
    rng = np.random.default_rng(1)
    feeds = {n: rng.normal(size=64).astype(ml_dtypes.bfloat16) for n in "ab"}
    _check(model, feeds)


def test_onnx_int4_add_wraps_and_dequantize():
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]),
             helper.make_node("DequantizeLinear", ["s", "scale"], ["y"])]  # fmt: skip
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [], [0.5])
    model = _model(nodes, [helper.make_tensor_value_info(n, TensorProto.INT4, [16]) for n in "ab"],
                   [helper.make_tensor_value_info("s", TensorProto.INT4, [16]),
                    helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])], [scale])  # fmt: skip
    a = np.arange(-8, 8).astype(ml_dtypes.int4)
    b = np.arange(7, -9, -1).astype(ml_dtypes.int4)
    compiled = tc.compile(model)
    s, y = compiled(a, b)
    expected = (a.astype(np.int32) + b.astype(np.int32)).astype(ml_dtypes.int4)
    _same(s, expected)
    np.testing.assert_array_equal(y, expected.astype(np.float32) * 0.5)


def test_onnx_castlike_float8_constant_target():
    like = helper.make_tensor("like", TensorProto.FLOAT8E5M2, [1], [1.0])
    node = helper.make_node("CastLike", ["x", "like"], ["y"], saturate=0)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT8E5M2, [5])], [like])  # fmt: skip
    x = np.float32([1e6, -3.3, 0.1, np.nan, -0.0])
    with np.errstate(all="ignore"):
        _check(model, {"x": x})


def test_saved_model_keeps_narrow_ports(tmp_path):
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                   [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [3])])  # fmt: skip
    compiled = tc.compile(model)
    compiled.save(tmp_path / "m")
    loaded = tc.runtime.load(tmp_path / "m")
    x = np.float32([1.00390625, -2.5, 3e38])
    y = loaded(x)
    assert y.dtype == ml_dtypes.bfloat16
    _same(y, x.astype(ml_dtypes.bfloat16))


def test_float8e8m0_results_are_refused():
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT8E8M0, [3])])  # fmt: skip
    from tilecraft.frontends.onnx import OnnxImportError

    with pytest.raises(OnnxImportError, match="float8e8m0"):
        tc.compile(model)


# -- uint64: held as its bits in int64 -------------------------------------------------

_U64 = np.array([0, 1, 2, 3, 7, 2**32, 2**62 + 5, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1,
                 12345678901234567890, 9, 10**19, 3 * 2**62], dtype=np.uint64)  # fmt: skip


@pytest.mark.parametrize("op", ["Div", "Mod", "Greater", "LessOrEqual", "Max", "Min", "Add", "Mul", "Equal"])
def test_uint64_ops_on_large_values(op):
    u = TensorProto.UINT64
    x = np.repeat(_U64, len(_U64))
    y = np.tile(_U64, len(_U64))
    if op in ("Div", "Mod"):
        y = np.where(y == 0, np.uint64(5), y)  # numpy warns on a zero divisor (tilecraft gives 0)
    out = TensorProto.BOOL if op in ("Greater", "LessOrEqual", "Equal") else u
    n = len(x)
    model = _model([helper.make_node(op, ["x", "y"], ["z"])],
                   [helper.make_tensor_value_info("x", u, [n]), helper.make_tensor_value_info("y", u, [n])],
                   [helper.make_tensor_value_info("z", out, [n])])  # fmt: skip
    _check(model, {"x": x, "y": y})


def test_uint64_division_by_zero_is_zero():
    u = TensorProto.UINT64
    nodes = [helper.make_node("Div", ["x", "y"], ["q"]), helper.make_node("Mod", ["x", "y"], ["r"])]
    model = _model(nodes, [helper.make_tensor_value_info(n, u, [4]) for n in "xy"],
                   [helper.make_tensor_value_info(n, u, [4]) for n in "qr"])  # fmt: skip
    q, r = tc.compile(model)(np.uint64([5, 2**64 - 1, 0, 7]), np.uint64([0, 0, 0, 2]))
    np.testing.assert_array_equal(q, np.uint64([0, 0, 0, 3]))
    np.testing.assert_array_equal(r, np.uint64([0, 0, 0, 1]))


def test_uint64_topk_and_cast_to_float():
    u = TensorProto.UINT64
    k = helper.make_tensor("k", TensorProto.INT64, [1], [3])
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"]),
             helper.make_node("Cast", ["x"], ["f"], to=TensorProto.FLOAT)]  # fmt: skip
    n = len(_U64)
    model = _model(nodes, [helper.make_tensor_value_info("x", u, [n])],
                   [helper.make_tensor_value_info("v", u, [3]), helper.make_tensor_value_info("i", TensorProto.INT64, [3]),
                    helper.make_tensor_value_info("f", TensorProto.FLOAT, [n])], [k])  # fmt: skip
    _check(model, {"x": _U64})


@pytest.mark.parametrize("node", [helper.make_node("Abs", ["x"], ["y"]),
                                  helper.make_node("BitShift", ["x", "x"], ["y"], direction="RIGHT")])  # fmt: skip
def test_uint64_other_ops_are_refused(node):
    """Abs, and a right shift (int64's would fill with the sign bit)."""
    u = TensorProto.UINT64
    model = _model([node], [helper.make_tensor_value_info("x", u, [2])],
                   [helper.make_tensor_value_info("y", u, [2])])  # fmt: skip
    from tilecraft.frontends.onnx import OnnxImportError

    with pytest.raises(OnnxImportError, match="uint64 inputs are supported by"):
        tc.compile(model)


@pytest.mark.parametrize("name", ["bfloat16", "float8_e5m2fnuz", "float4_e2m1fn"])
def test_reference_evaluator_agrees(name):
    """The te reference evaluator runs the same bit arithmetic (arith.bitcast/shrui)."""
    from tilecraft.backends.reference import evaluate_module

    x = _hard_f32(name)[:4096]
    A = te.placeholder((len(x),), "float32", name="A")
    B = te.compute((len(x),), lambda i: A[i].astype(name).astype("float32"), name="B")
    with np.errstate(all="ignore"):
        (got,) = evaluate_module(te.build_module(te.create_schedule(B), [A, B]), "main", [x])
        _same(got, x.astype(getattr(ml_dtypes, name)).astype(np.float32))


# -- BitCast -------------------------------------------------------------------------


@pytest.mark.parametrize(("src", "dst", "x"), [
    (TensorProto.FLOAT, TensorProto.INT32, np.float32([1.5, -0.0, np.inf, -np.inf, 3e-45, np.nan])),
    (TensorProto.FLOAT, TensorProto.UINT32, np.float32([1.5, -0.0, -np.inf, -2.0, 3e-45, 7.0])),
    (TensorProto.UINT32, TensorProto.FLOAT, np.uint32([0x7F800000, 0x80000000, 0xFFFFFFFF, 1, 0x3F800000, 5])),
    (TensorProto.DOUBLE, TensorProto.UINT64, np.float64([1.5, -0.0, -np.inf, -2.0, 5e-324, 7.0])),
    (TensorProto.INT8, TensorProto.UINT8, np.int8([-128, -1, 0, 1, 127, -7])),
    (TensorProto.UINT16, TensorProto.FLOAT16, np.uint16([0x7C00, 0x8000, 0xFFFF, 1, 0x3C00, 0xFBFF])),
])  # fmt: skip
def test_onnx_bitcast_bits(src, dst, x):
    node = helper.make_node("BitCast", ["x"], ["y"], to=dst)
    model = _model([node], [helper.make_tensor_value_info("x", src, [6])],
                   [helper.make_tensor_value_info("y", dst, [6])])  # fmt: skip
    y = tc.compile(model)(x)
    expected = x.view(helper.tensor_dtype_to_np_dtype(dst))
    assert y.dtype == expected.dtype
    np.testing.assert_array_equal(_bits(y), _bits(expected))


def test_onnx_bitcast_changing_width_is_refused():
    node = helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.INT64)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                   [helper.make_tensor_value_info("y", TensorProto.INT64, [2])])  # fmt: skip
    from tilecraft.frontends.onnx import OnnxImportError

    with pytest.raises(OnnxImportError, match="changes the width"):
        tc.compile(model)
