"""Convolution and pooling over 1, 2 and 3 spatial axes, from ONNX to native code:
random geometries (strides, pads, auto_pad, dilations, groups, ceil_mode,
count_include_pad) compiled with `tc.compile` and evaluated by the graph reference,
both against onnxruntime. The conformance cases cover few geometries per operator;
these cover the combinations.
"""

from __future__ import annotations

import math
import numpy as np
import onnx  # noqa: F401 - a test extra: missing is a failure, never a skip
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.dialects.graph_reference import evaluate
from tilecraft.frontends.onnx import from_onnx


def _model(node, feeds: dict[str, np.ndarray], inits: dict[str, np.ndarray], outputs=("y",)):
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in feeds.items()]
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
    g = helper.make_graph([node], "g", inputs, outs, [numpy_helper.from_array(v, n) for n, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=8)


def _check(m, feeds, rtol=1e-4, atol=1e-4):
    """The compiled model and the graph reference both match onnxruntime."""
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    got = tc.compile(m)(**feeds)
    got = got if isinstance(got, tuple) else (got,)
    module, store = from_onnx(m)
    main = next(op for op in module.walk() if op.name == "func.func")
    reference = evaluate(main, store, feeds)
    for g, r, e in zip(got, reference, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        np.testing.assert_allclose(r, e, rtol=rtol, atol=atol)


def _window(rng, rank: int, pad: bool):
    """Random kernel, strides, dilations, pads and a spatial shape they fit."""
    kernel = [int(v) for v in rng.integers(1, 4, rank)]
    strides = [int(v) for v in rng.integers(1, 4, rank)]
    dilations = [int(v) for v in rng.integers(1, 3, rank)]
    pads = [int(rng.integers(0, k)) if pad else 0 for k in kernel * 2]  # onnxruntime: pad < kernel
    spatial = [d * (k - 1) + 1 + int(rng.integers(0, 5)) for k, d in zip(kernel, dilations)]
    return kernel, strides, dilations, pads, spatial


POOL_CASES = [(op, rank, seed) for op in ("MaxPool", "AveragePool", "LpPool") for rank in (1, 2, 3) for seed in range(3)]


@pytest.mark.parametrize("op,rank,seed", POOL_CASES, ids=[f"{o}-{r}d-{s}" for o, r, s in POOL_CASES])
def test_pooling_matches_onnxruntime(op, rank, seed):
    rng = np.random.default_rng(100 * rank + seed)
    kernel, strides, dilations, pads, spatial = _window(rng, rank, pad=True)
    attrs = {"kernel_shape": kernel, "strides": strides, "dilations": dilations}
    auto_pad = ["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"][int(rng.integers(0, 5))]
    if auto_pad == "NOTSET":
        attrs["pads"] = pads
    else:
        attrs["auto_pad"] = auto_pad
    if auto_pad.startswith("SAME"):
        # onnxruntime 1.32 sizes SAME pads by the undilated kernel (the ONNX spec and
        # its shape inference use the dilated one, as tilecraft): no dilation there
        attrs["dilations"] = [1] * rank
    if op != "LpPool":
        attrs["ceil_mode"] = int(rng.integers(0, 2))
    if op == "AveragePool":
        attrs["count_include_pad"] = int(rng.integers(0, 2))
    if op == "LpPool":
        attrs["p"] = int(rng.integers(1, 4))
    x = rng.standard_normal((2, 3, *spatial)).astype(np.float32)
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    _check(_model(node, {"x": x}, {}), {"x": x})


def test_max_pool_of_integers():
    """A padded window of int8 values: padding is the lowest int8, not -inf."""
    x = np.random.default_rng(3).integers(-128, 128, (1, 2, 5, 6)).astype(np.int8)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 1])
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.INT8, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.INT8, None)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=8)
    expected = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(tc.compile(m)(x), expected)


CONV_CASES = [(op, rank, seed) for op in ("Conv", "ConvTranspose") for rank in (1, 2, 3) for seed in range(3)]


@pytest.mark.parametrize("op,rank,seed", CONV_CASES, ids=[f"{o}-{r}d-{s}" for o, r, s in CONV_CASES])
def test_convolution_matches_onnxruntime(op, rank, seed):
    rng = np.random.default_rng(1000 + 100 * rank + seed)
    kernel, strides, dilations, pads, spatial = _window(rng, rank, pad=True)
    group = [1, 2, 3][seed]
    c_in, c_out = group * int(rng.integers(1, 3)), group * int(rng.integers(1, 3))
    attrs = {"kernel_shape": kernel, "strides": strides, "dilations": dilations, "group": group}
    if op == "Conv":
        w = rng.standard_normal((c_out, c_in // group, *kernel)).astype(np.float32)
        if seed == 2:
            attrs["auto_pad"] = "SAME_UPPER" if rank != 2 else "SAME_LOWER"
            attrs["dilations"] = [1] * rank  # onnxruntime refuses SAME with dilations
        else:
            attrs["pads"] = pads
    else:
        w = rng.standard_normal((c_in, c_out // group, *kernel)).astype(np.float32)
        attrs["pads"] = pads
        attrs["output_padding"] = [int(rng.integers(0, s)) for s in strides]  # onnxruntime: below the stride
    b = rng.standard_normal(c_out).astype(np.float32)
    x = rng.standard_normal((2, c_in, *spatial)).astype(np.float32)
    inputs = ["x", "w", "b"] if seed != 1 else ["x", "w"]
    node = helper.make_node(op, inputs, ["y"], **attrs)
    inits = {"w": w, "b": b} if seed != 1 else {"w": w}
    _check(_model(node, {"x": x}, inits), {"x": x})


# (spatial, kernel, strides, dilations, pads [begin..., end...], group): inputs of
# 1-3 pixels a side under larger padded windows.
TRIM_CASES = {
    "1x1-3x3": ([1, 1], [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1),
    "2x2-3x3-s2": ([2, 2], [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], 1),
    "2x2-5x5-groups": ([2, 2], [5, 5], [1, 1], [1, 1], [2, 2, 2, 2], 2),
    "1x3-3x3": ([1, 3], [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1),
    "2x3-3x3-dilated": ([2, 3], [3, 3], [1, 1], [2, 2], [2, 2, 2, 2], 1),
    "asymmetric": ([2, 2], [3, 4], [1, 2], [1, 1], [2, 0, 1, 3], 2),
    "1d": ([1], [5], [1], [1], [2, 2], 1),
    "1d-s3": ([2], [5], [3], [1], [4, 3], 2),
    "3d": ([1, 2, 3], [3, 3, 3], [1, 1, 2], [1, 1, 1], [1, 1, 1, 1, 1, 1], 1),
}


@pytest.mark.parametrize("case", sorted(TRIM_CASES))
def test_convolution_on_inputs_smaller_than_its_padded_window_matches_onnxruntime(case):
    """Windows whose outer taps read only padding (canonicalize's TrimConvWindow cuts
    them from the weight; every case here cuts at least one axis), with a bias,
    against onnxruntime."""
    from xdsl.transforms.canonicalize import CanonicalizePass

    from tilecraft.driver.context import make_context
    from tilecraft.utils.weights import attach

    spatial, kernel, strides, dilations, pads, group = TRIM_CASES[case]
    rng = np.random.default_rng(len(case))
    c_in, c_out = 2 * group, 3 * group
    w = rng.standard_normal((c_out, c_in // group, *kernel)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    x = rng.standard_normal((1, c_in, *spatial)).astype(np.float32)
    attrs = {"kernel_shape": kernel, "strides": strides, "dilations": dilations, "group": group, "pads": pads}
    model = _model(helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs), {"x": x}, {"w": w, "b": b})
    module, store = from_onnx(model)
    attach(module, store)
    CanonicalizePass().apply(make_context(), module)
    (conv,) = [op for op in module.walk() if op.name == "graph.conv2d"]
    assert math.prod(conv.inputs[1].type.get_shape()) < w.size, "the case cuts no tap"
    _check(model, {"x": x})


def test_conv3d_weight_computed_at_run_time():
    """A weight that is an input, not an initializer: the transposed convolution
    flips and transposes it with graph ops."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((2, 3, 2, 3, 2)).astype(np.float32)
    for op in ("Conv", "ConvTranspose"):
        weight = w if op == "ConvTranspose" else w.transpose(1, 0, 2, 3, 4).copy()
        node = helper.make_node(op, ["x", "w"], ["y"], strides=[1, 2, 1], pads=[1, 0, 1, 0, 1, 1])
        _check(_model(node, {"x": x, "w": weight}, {}), {"x": x, "w": weight})


def _check_with_onnx_reference(m, feeds, rtol=1e-4, atol=1e-4):
    """The compiled model against onnx's reference evaluator (for operators newer
    than onnxruntime's)."""
    from onnx.reference import ReferenceEvaluator

    expected = ReferenceEvaluator(m).run(None, feeds)
    got = tc.compile(m)(**feeds)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


@pytest.mark.parametrize("seed", range(4))
def test_col2im_matches_onnx_reference(seed):
    """Random images, blocks, strides, dilations and pads (1-D to 3-D): the columns
    of an image summed back into it."""
    rng = np.random.default_rng(2000 + seed)
    rank = [2, 1, 3, 2][seed]
    block = [int(v) for v in rng.integers(1, 4, rank)]
    strides = [int(v) for v in rng.integers(1, 3, rank)]
    dilations = [int(v) for v in rng.integers(1, 3, rank)]
    pads = [int(v) for v in rng.integers(0, 2, 2 * rank)]
    image = [d * (k - 1) + 1 + int(rng.integers(0, 4)) for k, d in zip(block, dilations)]
    blocks = [
        (n + lo + hi - d * (k - 1) - 1) // s + 1
        for n, k, s, d, lo, hi in zip(image, block, strides, dilations, pads[:rank], pads[rank:])
    ]
    x = rng.standard_normal((2, 3 * int(np.prod(block)), int(np.prod(blocks)))).astype(np.float32)
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], strides=strides, dilations=dilations, pads=pads)
    inits = {"image": np.array(image, np.int64), "block": np.array(block, np.int64)}
    m = _model(node, {"x": x}, inits)
    m.opset_import[0].version = 18
    _check_with_onnx_reference(m, {"x": x})


@pytest.mark.parametrize("past,bias,activation", [(True, True, "silu"), (False, False, "none"), (True, False, "swish")])
def test_causal_conv_with_state_matches_onnx_reference(past, bias, activation):
    rng = np.random.default_rng(int(past) * 2 + int(bias))
    n, c, length, k = 2, 5, 7, 4
    feeds = {"x": rng.standard_normal((n, c, length)).astype(np.float32)}
    inputs = ["x", "w", "b" if bias else ""]
    if past:
        feeds["past"] = rng.standard_normal((n, c, k - 1)).astype(np.float32)
        inputs.append("past")
    inits = {"w": rng.standard_normal((c, 1, k)).astype(np.float32), "b": rng.standard_normal(c).astype(np.float32)}
    if not bias:
        del inits["b"]
    node = helper.make_node("CausalConvWithState", inputs, ["y", "state"], activation=activation)
    m = _model(node, feeds, inits, outputs=("y", "state"))
    m.opset_import[0].version = 27
    _check_with_onnx_reference(m, feeds)


INDEX_CASES = [(rank, order) for rank in (1, 2, 3) for order in (0, 1)]


@pytest.mark.parametrize("rank,storage_order", INDEX_CASES, ids=[f"{r}d-order{o}" for r, o in INDEX_CASES])
def test_max_pool_indices_match_onnxruntime(rank, storage_order):
    """MaxPool's Indices: the flat index of each window's first maximum (ties from
    rounded inputs), row- or column-major over the spatial axes."""
    rng = np.random.default_rng(3000 + 10 * rank + storage_order)
    kernel, strides, dilations, pads, spatial = _window(rng, rank, pad=True)
    x = np.round(rng.standard_normal((2, 3, *spatial)), 0).astype(np.float32)  # many ties
    attrs = {"kernel_shape": kernel, "strides": strides, "dilations": dilations, "pads": pads}
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], storage_order=storage_order, **attrs)
    m = _model(node, {"x": x}, {}, outputs=("y", "i"))
    m.graph.output[1].type.tensor_type.elem_type = TensorProto.INT64
    expected = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    module, store = from_onnx(m)
    reference = evaluate(next(op for op in module.walk() if op.name == "func.func"), store, {"x": x})
    for got in (tc.compile(m)(x), reference):
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_max_pool_then_unpool_matches_onnxruntime(rank):
    """MaxPool's values and Indices fed to MaxUnpool (SegNet's decoder): each
    window's maximum back in its place, zeros elsewhere."""
    rng = np.random.default_rng(4000 + rank)
    kernel, strides = [2] * rank, [2] * rank
    x = rng.standard_normal((2, 3, *[2 * int(v) for v in rng.integers(2, 4, rank)])).astype(np.float32)  # even: no index past the unpooled shape
    pool = helper.make_node("MaxPool", ["x"], ["v", "i"], kernel_shape=kernel, strides=strides)
    unpool = helper.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=kernel, strides=strides)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    g = helper.make_graph([pool, unpool], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=8)
    _check(m, {"x": x}, rtol=0, atol=0)


@pytest.mark.parametrize("rank", [1, 2])
def test_conv_integer_matches_onnxruntime(rank):
    """uint8 input and weight less their zero points, convolved in int32 (exact)."""
    rng = np.random.default_rng(5000 + rank)
    x = rng.integers(0, 256, (1, 4, *[7] * rank)).astype(np.uint8)
    w = rng.integers(0, 256, (6, 2, *[3] * rank)).astype(np.uint8)
    node = helper.make_node(
        "ConvInteger", ["x", "w", "xz", "wz"], ["y"], group=2, pads=[1] * 2 * rank, strides=[2] * rank
    )
    inits = {"w": w, "xz": np.array(131, np.uint8), "wz": np.array(77, np.uint8)}
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=8)
    expected = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = tc.compile(m)(x)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("seed", range(3))
def test_deform_conv_matches_onnx_reference(seed):
    """Fractional offsets (some reaching outside the input), groups, offset groups,
    a mask and a bias, strides, pads and dilations."""
    rng = np.random.default_rng(6000 + seed)
    group, offset_group = [(1, 1), (2, 1), (2, 4)][seed]
    n, c, o, kh, kw = 2, 4, 4, 2, 3
    strides, pads, dilations = [1 + seed % 2, 1], [seed % 2, 1, 0, seed % 2], [1, 1 + seed % 2]
    x = rng.standard_normal((n, c, 5, 6)).astype(np.float32)
    out = [(size + lo + hi - d * (k - 1) - 1) // s + 1 for size, k, s, lo, hi, d in zip((5, 6), (kh, kw), strides, pads[:2], pads[2:], dilations)]
    offset = (rng.standard_normal((n, offset_group * kh * kw * 2, *out)) * 1.5).astype(np.float32)
    mask = rng.uniform(0, 1, (n, offset_group * kh * kw, *out)).astype(np.float32)
    w = rng.standard_normal((o, c // group, kh, kw)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    node = helper.make_node(
        "DeformConv", ["x", "w", "offset", "b", "mask"], ["y"], group=group, offset_group=offset_group,
        strides=strides, pads=pads, dilations=dilations,
    )
    feeds = {"x": x, "offset": offset, "mask": mask}
    m = _model(node, feeds, {"w": w, "b": b})
    m.opset_import[0].version = 22
    _check_with_onnx_reference(m, feeds, rtol=1e-4, atol=1e-4)
