"""The graph evaluator (dialects/graph_reference.py) against numpy formulas and, for
the ops with fiddly semantics (conv, pooling, normalizations), against onnxruntime
on one-node models."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, Float32Type, ModuleOp, TensorType, i64
from xdsl.dialects.func import Func, FuncOp
from xdsl.ir import Block

from tilecraft.dialects.graph_reference import (
    EvaluationError,
    evaluate,
    evaluate_op,
    kernel_from_oihw,
    kernel_to_oihw,
    to_layout,
)
from tilecraft.dialects import graph
from tilecraft.utils.diagnostics import LocatedParser
from tilecraft.utils.weights import WeightStore

import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

RNG = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def run_op(cls, arrays, **attributes) -> list[np.ndarray]:
    """Build one op on block arguments of the arrays' types and evaluate it."""
    types = [TensorType(i64 if a.dtype.kind == "i" else Float32Type(), list(a.shape)) for a in arrays]
    block = Block(arg_types=types)
    op = cls(list(block.args), attributes)
    return evaluate_op(op, arrays)


def run_onnx(op_type: str, arrays: list[np.ndarray], opset: int = 17, n_out: int = 1, **attributes) -> np.ndarray:
    names = [f"in{n}" for n in range(len(arrays))]
    node = helper.make_node(op_type, names, [f"out{n}" for n in range(n_out)], **attributes)
    dtypes = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, dtypes[a.dtype], list(a.shape)) for n, a in zip(names, arrays)],
        [helper.make_tensor_value_info(f"out{n}", TensorProto.FLOAT, None) for n in range(n_out)],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, dict(zip(names, arrays)))[0]


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for d in (Builtin, Func, graph.GRAPH):
        ctx.load_dialect(d)
    return LocatedParser(ctx, text).parse_module()


def first_func(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


# -- elementwise -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, formula",
    [
        (graph.ReluOp, lambda x: np.maximum(x, 0)),
        (graph.SigmoidOp, lambda x: 1 / (1 + np.exp(-x))),
        (graph.TanhOp, np.tanh),
        (graph.ErfOp, np.vectorize(math.erf)),
        (graph.ExpOp, np.exp),
        (graph.NegOp, np.negative),
        (graph.AbsOp, np.abs),
    ],
)
def test_unary(cls, formula):
    x = rand(3, 5)
    (y,) = run_op(cls, [x])
    assert y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_allclose(y, formula(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_sqrt_log_clip():
    x = np.abs(rand(4, 4)) + 0.1
    np.testing.assert_allclose(run_op(graph.SqrtOp, [x])[0], np.sqrt(x), rtol=1e-6)
    np.testing.assert_allclose(run_op(graph.LogOp, [x])[0], np.log(x), rtol=1e-6)
    z = rand(4, 4)
    np.testing.assert_array_equal(run_op(graph.ClipOp, [z], min=-0.5, max=0.5)[0], np.clip(z, -0.5, 0.5))
    np.testing.assert_array_equal(run_op(graph.ClipOp, [z], min=0.0)[0], np.maximum(z, 0))  # no upper bound


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    x = rand(64).astype(np.float64)
    (y,) = run_op(graph.GeluOp, [x.astype(np.float32)], approximate=approximate)
    if approximate == "none":
        want = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    else:
        want = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "cls, fn",
    [(graph.AddOp, np.add), (graph.SubOp, np.subtract), (graph.MulOp, np.multiply), (graph.DivOp, np.divide),
     (graph.MaximumOp, np.maximum), (graph.MinimumOp, np.minimum)],
)  # fmt: skip
def test_binary_broadcasts(cls, fn):
    a, b = rand(2, 3, 4), rand(3, 1)
    (y,) = run_op(cls, [a, b])
    assert y.shape == (2, 3, 4)
    np.testing.assert_allclose(y, fn(a, b), rtol=1e-6)


def test_integer_div_truncates_like_onnx():
    a, b = np.array([7, -7, 6], np.int64), np.array([2, 2, -4], np.int64)
    np.testing.assert_array_equal(run_op(graph.DivOp, [a, b])[0], [3, -3, -1])


# -- anchors ---------------------------------------------------------------------------


def naive_conv(x, w, stride, pad, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (h + pad[0] + pad[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pad[1] + pad[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for y in range(oh):
            for z in range(ow):
                for i in range(kh):
                    for j in range(kw):
                        patch = xp[:, g * cg : (g + 1) * cg, y * stride[0] + i * dilation[0], z * stride[1] + j * dilation[1]]
                        out[:, oc, y, z] += patch @ w[oc, :, i, j]
    return out


@pytest.mark.parametrize(
    "groups, stride, pad, dilation",
    [(1, (1, 1), (1, 1, 1, 1), (1, 1)), (2, (2, 1), (0, 1, 2, 0), (1, 2)), (4, (2, 2), (1, 1, 1, 1), (1, 1))],
)
def test_conv2d_matches_loops_and_onnxruntime(groups, stride, pad, dilation):
    x, w, b = rand(2, 4, 7, 8), rand(8, 4 // groups, 3, 3), rand(8)
    attributes = dict(strides=stride, pads=pad, dilations=dilation, groups=groups)
    (y,) = run_op(graph.Conv2dOp, [x, w, b], **attributes)
    want = naive_conv(x.astype(np.float64), w.astype(np.float64), stride, pad, dilation, groups) + b.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    onnx_attrs = dict(strides=list(stride), pads=list(pad), dilations=list(dilation), group=groups)
    np.testing.assert_allclose(y, run_onnx("Conv", [x, w, b], **onnx_attrs), rtol=1e-4, atol=1e-5)


def test_conv2d_blocked_layouts_agree_with_nchw():
    x, w = rand(1, 16, 6, 6), rand(32, 16, 3, 3)
    (want,) = run_op(graph.Conv2dOp, [x, w], pads=[1, 1, 1, 1])
    xb, wb = to_layout(x, "NCHW", "NCHW8c"), kernel_from_oihw(w, 8, 16)
    assert xb.shape == (1, 2, 6, 6, 8) and wb.shape == (2, 2, 3, 3, 8, 16)
    np.testing.assert_array_equal(kernel_to_oihw(wb), w)
    layouts = dict(data_layout="NCHW8c", kernel_layout="OIHW8i16o", out_layout="NCHW16c")
    (yb,) = run_op(graph.Conv2dOp, [xb, wb], pads=[1, 1, 1, 1], **layouts)
    assert yb.shape == (1, 2, 6, 6, 16)
    np.testing.assert_allclose(to_layout(yb, "NCHW16c", "NCHW"), want, rtol=1e-5, atol=1e-5)
    (back,) = run_op(graph.LayoutTransformOp, [yb], src="NCHW16c", dst="NCHW")
    np.testing.assert_array_equal(back, to_layout(yb, "NCHW16c", "NCHW"))


def test_dense_and_matmul():
    x, w, b = rand(2, 3, 5), rand(4, 5), rand(4)
    np.testing.assert_allclose(run_op(graph.DenseOp, [x, w, b])[0], x @ w.T + b, rtol=1e-5, atol=1e-6)
    a, c = rand(2, 1, 3, 5), rand(4, 5, 6)
    np.testing.assert_allclose(run_op(graph.MatmulOp, [a, c])[0], a @ c, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "kernel, stride, pad, ceil, include",
    [((3, 3), (2, 2), (1, 1, 1, 1), 0, 0), ((3, 3), (2, 2), (1, 1, 1, 1), 1, 0), ((2, 3), (2, 2), (0, 1, 1, 0), 1, 1),
     ((3, 3), (1, 1), (1, 1, 1, 1), 0, 1), ((2, 2), (2, 2), (0, 0, 0, 0), 1, 0)],
)  # fmt: skip
def test_pools_match_onnxruntime(kernel, stride, pad, ceil, include):
    x = rand(1, 3, 7, 8)
    attributes = dict(kernel=kernel, strides=stride, pads=pad, ceil_mode=ceil)
    onnx_attrs = dict(kernel_shape=list(kernel), strides=list(stride), pads=list(pad), ceil_mode=ceil)
    (ymax,) = run_op(graph.MaxPool2dOp, [x], **attributes)
    np.testing.assert_array_equal(ymax, run_onnx("MaxPool", [x], **onnx_attrs))
    (yavg,) = run_op(graph.AvgPool2dOp, [x], count_include_pad=include, **attributes)
    want = run_onnx("AveragePool", [x], count_include_pad=include, **onnx_attrs)
    np.testing.assert_allclose(yavg, want, rtol=1e-5, atol=1e-6)


def test_global_avg_pool():
    x = rand(2, 3, 4, 5)
    np.testing.assert_allclose(run_op(graph.GlobalAvgPool2dOp, [x])[0], x.mean(axis=(2, 3), keepdims=True), rtol=1e-6)


# -- reductions and normalizations -----------------------------------------------------


def test_reductions():
    x = rand(2, 3, 4)
    np.testing.assert_allclose(run_op(graph.ReduceSumOp, [x], axes=[1])[0], x.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(run_op(graph.ReduceMeanOp, [x], axes=[-1], keepdims=0)[0], x.mean(-1), rtol=1e-5)
    np.testing.assert_array_equal(run_op(graph.ReduceMaxOp, [x])[0], x.max(keepdims=True))


def test_softmax_layer_norm_batch_norm_match_onnxruntime():
    x = rand(2, 3, 8)
    np.testing.assert_allclose(run_op(graph.SoftmaxOp, [x], axis=1)[0], run_onnx("Softmax", [x], axis=1), rtol=1e-5, atol=1e-7)
    s, b = rand(8), rand(8)
    (y,) = run_op(graph.LayerNormOp, [x, s, b], epsilon=1e-5)
    np.testing.assert_allclose(y, run_onnx("LayerNormalization", [x, s, b], epsilon=1e-5), rtol=1e-4, atol=1e-5)
    x4 = rand(2, 3, 4, 4)
    scale, bias, mean, var = rand(3), rand(3), rand(3), np.abs(rand(3)) + 0.5
    (y,) = run_op(graph.BatchNormOp, [x4, scale, bias, mean, var], epsilon=1e-3)
    want = run_onnx("BatchNormalization", [x4, scale, bias, mean, var], epsilon=1e-3)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


# -- data movement ----------------------------------------------------------------------


def test_shape_ops():
    x = rand(2, 1, 3, 4)
    assert run_op(graph.ReshapeOp, [x], shape=[0, -1])[0].shape == (2, 12)
    assert run_op(graph.FlattenOp, [x], axis=2)[0].shape == (2, 12)
    np.testing.assert_array_equal(run_op(graph.SqueezeOp, [x], axes=[1])[0], x[:, 0])
    assert run_op(graph.UnsqueezeOp, [x], axes=[0, -1])[0].shape == (1, 2, 1, 3, 4, 1)
    np.testing.assert_array_equal(run_op(graph.TransposeOp, [x], perm=[3, 0, 2, 1])[0], x.transpose(3, 0, 2, 1))
    np.testing.assert_array_equal(run_op(graph.TransposeOp, [x])[0], x.T)


def test_pad_slice_concat_split_gather():
    x = rand(3, 4)
    np.testing.assert_array_equal(run_op(graph.PadOp, [x], pads=[1, 0, 0, 2])[0], np.pad(x, ((1, 0), (0, 2))))
    np.testing.assert_array_equal(run_op(graph.PadOp, [x], pads=[0, -1, 1, 0])[0], np.pad(x[:, 1:], ((0, 1), (0, 0))))
    (y,) = run_op(graph.SliceOp, [x], starts=[2, 0], ends=[-4, 4], axes=[0, 1], steps=[-1, 2])
    np.testing.assert_array_equal(y, x[2:-4:-1, 0:4:2])
    np.testing.assert_array_equal(run_op(graph.ConcatOp, [x, x], axis=1)[0], np.concatenate([x, x], 1))
    parts = run_op(graph.SplitOp, [x], axis=1, sizes=[1, 3])
    np.testing.assert_array_equal(parts[1], x[:, 1:])
    ids = np.array([[0, 2], [-1, 1]], np.int64)  # negative ids count from the end, as in ONNX
    np.testing.assert_array_equal(run_op(graph.GatherOp, [x, ids], axis=0)[0], x[ids])
    np.testing.assert_array_equal(run_op(graph.GatherOp, [x, ids], axis=0)[0], run_onnx("Gather", [x, ids]))


# -- whole functions ---------------------------------------------------------------------

FUNC = """
func.func @main(%x: tensor<2x4xf32> {tc.name = "x"}) -> tensor<2x3xf32> {
  %w = graph.weight "fc.weight" : tensor<3x4xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = graph.fused "fused_dense_add_relu" (%x, %w, %b) : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> (tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x4xf32>, %ww: tensor<3x4xf32>, %bb: tensor<3xf32>):
    %d = graph.dense %a, %ww : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %s = graph.add %d, %bb : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %r = graph.relu %s : (tensor<2x3xf32>) -> tensor<2x3xf32>
    graph.yield %r : tensor<2x3xf32>
  }
  func.return %y : tensor<2x3xf32>
}
"""


def test_function_with_weights_constants_and_a_fused_group():
    f = first_func(parse(FUNC))
    w, x = rand(3, 4), rand(2, 4)
    want = np.maximum(x @ w.T + np.array([1, 2, 3], np.float32), 0)
    store = WeightStore({"fc.weight": w})
    np.testing.assert_allclose(evaluate(f, store, [x])[0], want, rtol=1e-6)
    np.testing.assert_allclose(evaluate(f, store, {"x": x})[0], want, rtol=1e-6)  # by name
    with pytest.raises(ValueError, match="missing input"):
        evaluate(f, store, {"y": x})
    with pytest.raises(ValueError, match="shape"):
        evaluate(f, store, [rand(3, 4)])
    with pytest.raises(EvaluationError, match="weight store"):
        evaluate(f, None, [x])
