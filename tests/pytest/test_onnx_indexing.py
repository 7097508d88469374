"""Trilu, Tile, DepthToSpace/SpaceToDepth, CenterCropPad, OneHot and TopK
(frontends/onnx/indexing.py), compiled with `tc.compile` and compared with
onnxruntime on shapes and attributes beyond the conformance cases."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.frontends.onnx import OnnxImportError

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(3)
ONNX_OF = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def make(op_type, feeds, inits=None, outputs=("y",), opset=18, **attrs):
    inits = inits or {}
    node = helper.make_node(op_type, list(feeds) + list(inits), list(outputs), name="n0", **attrs)
    inputs = [helper.make_tensor_value_info(n, ONNX_OF[a.dtype.type], a.shape) for n, a in feeds.items()]
    outs = [helper.make_empty_tensor_value_info(o) for o in outputs]
    g = helper.make_graph([node], "g", inputs, outs, [numpy_helper.from_array(v, n) for n, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def compare(m, feeds, exact=True):
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    got = tc.compile(m, num_threads=1)(*feeds.values())
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [-2, 0, 3])
def test_trilu(upper, k):
    x = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    compare(make("Trilu", {"x": x}, {"k": np.array(k, np.int64)}, upper=upper), {"x": x})


def test_trilu_of_integers_without_k():
    x = RNG.integers(-9, 9, (5, 3)).astype(np.int64)
    compare(make("Trilu", {"x": x}, upper=0), {"x": x})


def test_tile():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    compare(make("Tile", {"x": x}, {"r": np.array([3, 2], np.int64)}), {"x": x})


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_and_back(mode):
    x = RNG.standard_normal((2, 8, 3, 2)).astype(np.float32)
    compare(make("DepthToSpace", {"x": x}, blocksize=2, mode=mode), {"x": x})
    y = RNG.standard_normal((1, 3, 4, 6)).astype(np.float32)
    compare(make("SpaceToDepth", {"x": y}, blocksize=2), {"x": y})


def test_center_crop_pad_odd_differences():
    x = RNG.standard_normal((5, 4, 3)).astype(np.float32)
    compare(make("CenterCropPad", {"x": x}, {"s": np.array([2, 7], np.int64)}, axes=[0, -1]), {"x": x})


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    ids = np.array([[0, 3, -1], [7, 2, -4]], np.int64)  # -1, -4 wrap; 7 is out of range
    m = make("OneHot", {"ids": ids}, {"depth": np.array(5, np.int64), "values": np.array([-1.0, 2.0], np.float32)},
             axis=axis)  # fmt: skip
    compare(m, {"ids": ids})


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("axis", [-1, 1])
def test_top_k_with_ties(largest, axis):
    x = RNG.integers(0, 4, (2, 6, 5)).astype(np.float32)  # many ties: the lower index first
    m = make("TopK", {"x": x}, {"k": np.array([3], np.int64)}, outputs=("values", "indices"), axis=axis, largest=largest)
    compare(m, {"x": x})


def test_top_k_needs_a_known_k():
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    m = make("TopK", {"x": x, "k": np.array([3], np.int64)}, outputs=("values", "indices"))
    with pytest.raises(OnnxImportError, match=r"'TopK' \(node 'n0'\): input 1 \(k\) must be a constant"):
        tc.compile(m)
