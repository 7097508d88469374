"""The ONNX Reduce* family, CumSum/CumProd and graph inputs that must be known at
compile time: each model compiled with `tc.compile` (or the ONNX backend) and run,
compared with onnxruntime; the graph ops against their numpy meaning."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.frontends.onnx import OnnxImportError
from tilecraft.runtime.onnx_backend import TilecraftBackend

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(7)
ONNX_OF = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
           np.bool_: TensorProto.BOOL}  # fmt: skip


def make(op_type, feeds, inits=None, opset=18, out_type=TensorProto.FLOAT, **attrs):
    """A one-node model on graph inputs `feeds` and initializers `inits` (in that input order)."""
    inits = inits or {}
    names = list(feeds) + list(inits)
    node = helper.make_node(op_type, names, ["y"], name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, ONNX_OF[a.dtype.type], a.shape) for n, a in feeds.items()]
    g = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", out_type, None)],
                          [numpy_helper.from_array(v, n) for n, v in inits.items()])  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def expected(m, feeds):
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]  # fmt: skip


@pytest.mark.parametrize("op_type", REDUCE_OPS)
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([-1, 0], 0), ([0, 2], 1)])
def test_reduce_compiled_matches_onnxruntime(op_type, axes, keepdims):
    x = RNG.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)  # positive: LogSum is defined
    m = make(op_type, {"x": x}, {"axes": np.array(axes, np.int64)}, keepdims=keepdims)
    got = tc.compile(m, num_threads=1)(x)
    np.testing.assert_allclose(got, expected(m, {"x": x}), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum"])
def test_reduce_integers_all_axes(op_type):
    x = RNG.integers(-3, 4, (2, 3, 4)).astype(np.int64)
    m = make(op_type, {"x": x}, out_type=TensorProto.INT64, keepdims=0)
    np.testing.assert_array_equal(tc.compile(m, num_threads=1)(x), expected(m, {"x": x}))


def test_reduce_max_of_booleans_is_any():
    x = RNG.integers(0, 2, (3, 4)).astype(np.bool_)
    x[1] = False
    m = make("ReduceMax", {"x": x}, {"axes": np.array([1], np.int64)}, out_type=TensorProto.BOOL)
    got = tc.compile(m, num_threads=1)(x)
    np.testing.assert_array_equal(got, x.any(axis=1, keepdims=True))


def test_reduce_noop_with_empty_axes_is_identity():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    m = make("ReduceSum", {"x": x}, {"axes": np.zeros(0, np.int64)}, noop_with_empty_axes=1, keepdims=0)
    np.testing.assert_array_equal(tc.compile(m, num_threads=1)(x), x)


@pytest.mark.parametrize("op_type", ["CumSum", "CumProd"])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumulative_matches_onnxruntime_or_numpy(op_type, exclusive, reverse, axis):
    x = RNG.uniform(0.5, 1.5, (4, 6)).astype(np.float32)
    opset = 26 if op_type == "CumProd" else 18
    m = make(op_type, {"x": x}, {"axis": np.array(axis, np.int64)}, opset=opset, exclusive=exclusive, reverse=reverse)
    got = tc.compile(m, num_threads=1)(x)
    # numpy's meaning, written out (onnxruntime may not know CumProd yet).
    a = axis % 2
    y = np.flip(x, a) if reverse else x
    run = (np.cumsum if op_type == "CumSum" else np.cumprod)(y, axis=a)
    if exclusive:
        first = np.full_like(np.take(run, [0], axis=a), 0.0 if op_type == "CumSum" else 1.0)
        run = np.concatenate([first, np.take(run, range(x.shape[a] - 1), axis=a)], axis=a)
    want = np.flip(run, a) if reverse else run
    np.testing.assert_allclose(got, want, rtol=1e-5)
    if op_type == "CumSum":
        np.testing.assert_allclose(got, expected(m, {"x": x}), rtol=1e-5)


def test_reduce_of_a_constant_is_folded_with_empty_set_identities():
    """An empty input reduces to the identity of the reduction (ONNX's empty set)."""
    from tilecraft.frontends.onnx import from_onnx

    for op_type, value in [("ReduceSum", 0.0), ("ReduceProd", 1.0), ("ReduceMax", -np.inf),
                           ("ReduceMin", np.inf), ("ReduceLogSumExp", -np.inf)]:  # fmt: skip
        empty = np.zeros((2, 0, 3), np.float32)
        g = helper.make_graph(
            [helper.make_node(op_type, ["e", "axes"], ["y"], keepdims=1)], "g", [],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(empty, "e"), numpy_helper.from_array(np.array([1], np.int64), "axes")],
        )  # fmt: skip
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
        module, _ = from_onnx(m)
        text = str(module)
        assert "graph.reduce" not in text, op_type
        assert tc.compile(m, num_threads=1)().tolist() == [[[value] * 3]] * 2, op_type


# -- inputs that must be known at compile time ----------------------------------------------


def test_axes_as_a_graph_input_is_named_by_compile():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    m = make("ReduceSum", {"x": x, "axes": np.array([1], np.int64)})
    with pytest.raises(OnnxImportError, match=r"'ReduceSum' \(node 'n0'\): input 1 \(axes\) must be a constant"):
        tc.compile(m)


def test_backend_freezes_inputs_it_needs_and_recompiles_per_value():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    m = make("ReduceSum", {"x": x, "axes": np.array([1], np.int64)}, keepdims=0)
    rep = TilecraftBackend.prepare(m, "CPU", num_threads=1)
    assert rep.frozen == {"axes"}
    for axes in ([1], [0, 2], [1]):
        (got,) = rep.run([x, np.array(axes, np.int64)])
        np.testing.assert_allclose(got, x.sum(axis=tuple(axes)), rtol=1e-5)
    assert len(rep.specialized) == 2  # one compiled model per distinct value


def test_backend_freezes_inputs_behind_a_computed_shape():
    """The shape is computed from a graph input (Concat of it and a constant): that
    input is frozen, the rest of the computation folded."""
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    nodes = [
        helper.make_node("Concat", ["lead", "rest"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("lead", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([3, -1], np.int64), "rest")],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    rep = TilecraftBackend.prepare(m, "CPU", num_threads=1)
    (got,) = rep.run([x, np.array([4], np.int64)])
    np.testing.assert_array_equal(got, x.reshape(4, 3, 1))


def test_backend_does_not_freeze_data():
    """Data-dependent shapes stay unsupported: a large input is never frozen."""
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    big = np.zeros(4096, np.int64)
    nodes = [helper.make_node("ReduceMax", ["ids"], ["k"], keepdims=1),
             helper.make_node("ReduceSum", ["x", "k"], ["y"])]  # fmt: skip
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [4096])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    rep = TilecraftBackend.prepare(m, "CPU", num_threads=1)
    with pytest.raises(OnnxImportError, match=r"'ReduceSum' \(node 'y'\): input 1 \(axes\) must be a constant"):
        rep.run([x, big])
