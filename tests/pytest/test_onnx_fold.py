"""Import-time folding of shape computations (frontends/onnx/fold.py) and the float16
MatMul/Softmax, which sum in float32 as numpy and onnxruntime do."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilecraft.frontends.onnx import from_onnx
from tilecraft.runtime.onnx_backend import TilecraftBackend

RNG = np.random.default_rng(3)


def _model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _folded(m, feeds):
    """Import `m`: no graph op may compute its outputs (all folded); they must equal
    onnxruntime's."""
    module, _ = from_onnx(m)
    ops = [op.name for op in module.walk() if op.name.startswith("graph.") and op.name not in ("graph.constant", "graph.weight")]
    assert ops == []
    got = TilecraftBackend.prepare(m).run(list(feeds.values()))
    expected = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for g, e in zip(got, expected):
        g = np.asarray(g)
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e)


X = RNG.standard_normal((2, 3, 7)).astype(np.float32)
X_IN = helper.make_tensor_value_info("x", TensorProto.FLOAT, X.shape)


def _shape_minus(values):
    """Shape(x) - values: int64 [2, 3, 7] - values, known only through x's shape."""
    return [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Sub", ["s", "k"], ["d"]),
    ], numpy_helper.from_array(np.array(values, np.int64), "k")


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_of_shapes_folds(fmod):
    nodes, k = _shape_minus([5, 1, 9])  # [-3, 2, -2]
    divisor = numpy_helper.from_array(np.array([2, -3, 5], np.int64), "b")
    nodes.append(helper.make_node("Mod", ["d", "b"], ["y"], fmod=fmod))
    m = _model(nodes, [X_IN], [helper.make_tensor_value_info("y", TensorProto.INT64, [3])], [k, divisor])
    _folded(m, {"x": X})


def test_float_fmod_of_shapes_folds():
    nodes, k = _shape_minus([5, 1, 9])
    divisor = numpy_helper.from_array(np.array([2.5, -1.5, 0.75], np.float32), "b")
    nodes += [
        helper.make_node("Cast", ["d"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Mod", ["f", "b"], ["y"], fmod=1),
    ]
    m = _model(nodes, [X_IN], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], [k, divisor])
    _folded(m, {"x": X})


@pytest.mark.parametrize("op", ["LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"])
def test_comparisons_and_logic_of_shapes_fold(op):
    nodes, k = _shape_minus([2, 4, 0])  # [0, -1, 7]
    zero = numpy_helper.from_array(np.zeros(3, np.int64), "z")
    if op in ("And", "Or", "Xor"):
        nodes += [
            helper.make_node("Less", ["d", "z"], ["a"]),
            helper.make_node("Equal", ["d", "z"], ["b"]),
            helper.make_node(op, ["a", "b"], ["y"]),
        ]
    else:
        nodes.append(helper.make_node(op, ["d", "z"], ["y"]))
    m = _model(nodes, [X_IN], [helper.make_tensor_value_info("y", TensorProto.BOOL, [3])], [k, zero])
    _folded(m, {"x": X})


def test_cast_like_of_a_constant_stays_known():
    # -inf cast like a run-time float16 tensor: the Expand shape and Pad value after it
    # in an expanded Attention need it at import time.
    h = RNG.standard_normal((2, 3)).astype(np.float16)
    c = numpy_helper.from_array(np.array([-np.inf, 0.1, 7.0], np.float32), "c")
    nodes = [helper.make_node("CastLike", ["c", "h"], ["y"])]
    m = _model(nodes, [helper.make_tensor_value_info("h", TensorProto.FLOAT16, h.shape)],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [3])], [c])
    _folded(m, {"h": h})


def test_expand_to_shape_computed_with_mod_and_where():
    # The chain of an expanded Attention's KV repetition: shape arithmetic with Mod,
    # LessOrEqual and Where ends in Expand's shape input.
    s = RNG.standard_normal((2, 1, 4)).astype(np.float32)
    k = numpy_helper.from_array(np.array([3], np.int64), "three")
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Mod", ["xs", "three"], ["r"]),  # [2, 0, 1]
        helper.make_node("LessOrEqual", ["r", "three"], ["le"]),
        helper.make_node("Where", ["le", "xs", "three"], ["shape"]),  # [2, 3, 7]
        helper.make_node("Shape", ["s"], ["ss"]),
        helper.make_node("Slice", ["shape", "zero", "two"], ["lead"]),
        helper.make_node("Slice", ["ss", "two", "three"], ["tail"]),
        helper.make_node("Concat", ["lead", "tail"], ["target"], axis=0),
        helper.make_node("Expand", ["s", "target"], ["y"]),
    ]
    inits = [k, numpy_helper.from_array(np.array([0], np.int64), "zero"),
             numpy_helper.from_array(np.array([2], np.int64), "two")]
    m = _model(nodes, [X_IN, helper.make_tensor_value_info("s", TensorProto.FLOAT, s.shape)],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])], inits)
    got = np.asarray(TilecraftBackend.prepare(m).run([X, s])[0])
    np.testing.assert_array_equal(got, np.broadcast_to(s, (2, 3, 4)))


def _run_half(node, shapes, out_shape):
    m = _model([node], [helper.make_tensor_value_info(n, TensorProto.FLOAT16, s) for n, s in shapes.items()],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT16, out_shape)])
    feeds = [(RNG.random(s) * 2).astype(np.float16) for s in shapes.values()]
    return feeds, np.asarray(TilecraftBackend.prepare(m).run(feeds)[0])


def test_float16_matmul_sums_in_float32():
    (a, b), y = _run_half(helper.make_node("MatMul", ["a", "b"], ["y"]), {"a": (2, 5, 64), "b": (2, 64, 6)}, [2, 5, 6])
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # one rounding of the float32 sum: within half a unit in the last place (plus
    # float32 noise); a float16 running sum is several units off here
    assert y.dtype == np.float16
    assert (np.abs(y - exact) <= 0.5 * np.spacing(exact.astype(np.float16)) * 1.01).all()


def test_float16_softmax_sums_in_float32():
    (x,), y = _run_half(helper.make_node("Softmax", ["x"], ["y"], axis=-1), {"x": (4, 300)}, [4, 300])
    e = np.exp(x.astype(np.float64) - x.max(-1, keepdims=True))
    exact = e / e.sum(-1, keepdims=True)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y, exact, rtol=2e-3)
