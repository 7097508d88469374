"""Convolution and pooling over 1, 2 and 3 spatial axes, from ONNX to native code:
random geometries (strides, pads, auto_pad, dilations, groups, ceil_mode,
count_include_pad) compiled with `tc.compile` and evaluated by the graph reference,
both against onnxruntime. The conformance cases cover few geometries per operator;
these cover the combinations.
"""

from __future__ import annotations

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
