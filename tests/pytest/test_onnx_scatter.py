"""GatherElements, GatherND, ScatterElements, ScatterND (graph ops with te kernels,
topi/scatter.py) and Einsum (frontends/onnx/einsum.py), compiled with `tc.compile`
and compared with onnxruntime; the graph ops' numpy meaning against the same."""

from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import TensorProto, helper

import tilecraft as tc
from tilecraft.dialects import graph
from tilecraft.dialects.graph_reference import evaluate
from tilecraft.frontends.onnx import from_onnx

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(5)
ONNX_OF = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def make(op_type, feeds, opset=18, **attrs):
    node = helper.make_node(op_type, list(feeds), ["y"], name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, ONNX_OF[a.dtype.type], a.shape) for n, a in feeds.items()]
    g = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("y")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def compare(m, feeds, rtol=1e-6):
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = tc.compile(m, num_threads=1)(*feeds.values())
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)
    module, store = from_onnx(m)  # the graph ops' numpy meaning agrees too
    main = next(op for op in module.walk() if op.name == "func.func")
    np.testing.assert_allclose(evaluate(main, store, feeds)[0], want, rtol=rtol, atol=1e-6)


def test_gather_elements_negative_ids():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    ids = np.array([[0, -1, 2], [3, 1, -4]], np.int64)
    compare(make("GatherElements", {"x": x, "ids": ids}, axis=1), {"x": x, "ids": ids})


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd(batch_dims):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    # [2, 2, 2]: (axis 0, axis 1) ids, or with a batch axis (axis 1, axis 2) ids
    ids = np.array([[[1, 2], [0, -1]], [[1, 0], [-2, 1]]] if batch_dims == 0 else
                   [[[1, 2], [0, -1]], [[2, 3], [1, 0]]], np.int64)  # fmt: skip
    compare(make("GatherND", {"x": x, "ids": ids}, batch_dims=batch_dims), {"x": x, "ids": ids})


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_smaller_indices(reduction):
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    ids = np.array([[1, 3], [0, -1], [1, 1]], np.int64)  # 3 rows of 4 on axis 0, 2 of 5 columns
    if reduction == "none":
        ids = np.array([[1, 3], [0, -1], [2, 0]], np.int64)  # duplicates are undefined without a reduction
    upd = RNG.standard_normal((3, 2)).astype(np.float32)
    m = make("ScatterElements", {"x": x, "ids": ids, "upd": upd}, axis=0, reduction=reduction)
    compare(m, {"x": x, "ids": ids, "upd": upd})


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_nd_slices(reduction):
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)
    ids = np.array([[[2], [0]], [[-1], [1]]], np.int64)  # [2, 2, 1]: whole [3, 2] slices
    upd = RNG.standard_normal((2, 2, 3, 2)).astype(np.float32)
    compare(make("ScatterND", {"x": x, "ids": ids, "upd": upd}, reduction=reduction), {"x": x, "ids": ids, "upd": upd})


def test_scatter_nd_elements_of_integers():
    x = RNG.integers(-5, 5, (3, 4)).astype(np.int64)
    ids = np.array([[0, 1], [2, 3], [1, 0]], np.int64)
    upd = np.array([10, 20, 30], np.int64)
    compare(make("ScatterND", {"x": x, "ids": ids, "upd": upd}), {"x": x, "ids": ids, "upd": upd})


OUT_OF_RANGE = [  # (op, feeds, attributes, the range the message names)
    ("GatherElements", {"x": np.ones((3, 4), np.float32), "ids": np.array([[0, 1], [-4, 3], [2, 4]])}, {"axis": 1},
     "[-4, 3] on axis 1"),
    ("GatherND", {"x": np.ones((3, 4), np.float32), "ids": np.array([[0, 1], [-4, 0]])}, {},
     "[-3, 2] on axis 0, [-4, 3] on axis 1"),
    ("ScatterElements", {"x": np.ones((3, 4), np.float32), "ids": np.array([[0, -5]]),
                         "upd": np.ones((1, 2), np.float32)}, {"axis": 1}, "[-4, 3] on axis 1"),
    ("ScatterND", {"x": np.ones((3, 4), np.float32), "ids": np.array([[0, 1], [2, 4]]),
                   "upd": np.ones(2, np.float32)}, {"reduction": "add"}, "[-3, 2] on axis 0, [-4, 3] on axis 1"),
]  # fmt: skip


@pytest.mark.parametrize("op_type,feeds,attrs,ranges", OUT_OF_RANGE, ids=[c[0] for c in OUT_OF_RANGE])
def test_index_out_of_range_is_a_runtime_error(op_type, feeds, attrs, ranges):
    # onnxruntime raises; the compiled code reports it rather than clamping or skipping,
    # and the same call with every id in range answers as onnxruntime does
    from tilecraft.backends.llvm.jit import RuntimeCheckError
    from tilecraft.utils.diagnostics import EvaluationError

    m = make(op_type, feeds, **attrs)
    model = tc.compile(m, num_threads=1)
    word = {"GatherElements": "gather_elements", "GatherND": "gather_nd", "ScatterElements": "scatter_elements",
            "ScatterND": "scatter_nd"}[op_type]  # fmt: skip
    with pytest.raises(RuntimeCheckError, match=rf"{word} 'y': an index in 'ids' is out of range; indices into 'x' "
                                                  rf"\(shape \(3, 4\)\) must be within {re.escape(ranges)}"):
        model(*feeds.values())
    module, store = from_onnx(m)
    main = next(op for op in module.walk() if op.name == "func.func")
    with pytest.raises(EvaluationError, match="out of range"):
        evaluate(main, store, feeds)
    fine = {**feeds, "ids": np.zeros_like(feeds["ids"])}
    compare(m, fine)


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("i,i->i", [(5,), (5,)]),
    ("ii->i", [(4, 4)]),
    ("bii->bi", [(2, 3, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("abc,cd->dba", [(2, 3, 4), (4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUMS)
def test_einsum(equation, shapes):
    feeds = {f"x{i}": RNG.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    compare(make("Einsum", feeds, opset=12, equation=equation), feeds, rtol=1e-5)


@pytest.mark.parametrize("equation,shapes", [("i,i", [(5,), (5,)]), ("ij,ij->", [(2, 3), (2, 3)]), ("ii", [(3, 3)])])
def test_einsum_to_a_scalar(equation, shapes):
    # a full contraction gives a rank-0 tensor: a 0-d array, never a [1, 1, 1] one
    feeds = {f"x{i}": RNG.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    compare(make("Einsum", feeds, opset=12, equation=equation), feeds, rtol=1e-5)


def test_scatter_op_rejects_unknown_reduction():
    from xdsl.dialects.builtin import TensorType, f32, i64
    from xdsl.ir import Block

    block = Block(arg_types=[TensorType(f32, [4]), TensorType(i64, [2]), TensorType(f32, [2])])
    with pytest.raises(graph.ShapeError, match="graph.scatter_elements attribute 'reduction' must be one of none, add, mul, max, min, not 'avg'"):
        graph.ScatterElementsOp(block.args, {"reduction": "avg"})
