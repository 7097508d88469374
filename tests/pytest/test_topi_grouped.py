"""Grouped convs whose groups cut channel blocks (ShuffleNet v1's 34, 68 and 136
channels per group in 4 groups): compiled from ONNX and checked against
onnxruntime on every path alter-layout gives them (16-lane blocks with the
straddling kernel, blocks of 4 or 8 that divide the groups, a 1x1 conv flattened
to one row of pixels, NCHW left as it is), the default
register tile of narrow blocks inside the conv2d space, and the layout transforms
between block sizes against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.dialects.graph_reference import to_layout
from tilecraft.topi.conv2d import (
    conv2d_compute,
    conv2d_info,
    conv2d_space,
    default_config,
    find_reduction,
    pack_conv2d_weight,
)
from tilecraft.topi.schedule import default_schedule
from tilecraft.topi.transform import layout_transform

RNG = np.random.default_rng(10)


def randn(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def grouped_model(batch, cin, cout, groups, k, stride, hw, bias, relu, pads=None):
    """x -> Conv(groups) [-> Relu] -> y, and the conv's input and output channel counts."""
    from onnx import TensorProto, helper, numpy_helper

    h, w = hw
    pads = pads if pads is not None else [k // 2] * 4
    inits = {"w": randn(cout, cin // groups, k, k, scale=(2 / (cin // groups * k * k)) ** 0.5)}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = randn(cout, scale=0.1)
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["c" if relu else "y"], group=groups, pads=pads, strides=[stride] * 2)]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    oh = (h + pads[0] + pads[2] - k) // stride + 1
    ow = (w + pads[1] + pads[3] - k) // stride + 1
    g = helper.make_graph(
        nodes, "grouped", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, cin, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, cout, oh, ow])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def compiled_convs(m, x):
    """Compile `m`, check it against onnxruntime on `x`, return the conv kernel calls
    of @main (a call's result is its last argument)."""
    import onnxruntime as ort

    (expected,) = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    compiled = tc.compile(m)
    np.testing.assert_allclose(compiled(x), expected, rtol=2e-4, atol=2e-4)
    main = next(f for f in compiled.module.ops if f.name == "func.func" and f.sym_name.data == "main")
    return [op for op in main.body.block.ops if op.name == "func.call" and "conv2d" in op.callee.string_value()]


# (batch, cin, cout, groups, kernel, stride, (h, w), bias, relu, path): the path
# alter-layout takes: "b<lanes>" blocked, "row" a 1x1 conv on one row of pixels,
# "nchw" left as it is.
CASES = {
    "g4-34-1x1-straddle": (1, 136, 136, 4, 1, 1, (14, 14), True, True, "b16"),
    "g4-34-to-68-1x1-batch2-straddle": (2, 136, 272, 4, 1, 1, (8, 8), True, False, "b16"),
    "g3-20-1x1-b4": (1, 60, 60, 3, 1, 1, (7, 9), False, True, "b4"),
    "g3-6-to-10-1x1-row": (1, 18, 30, 3, 1, 1, (8, 8), False, True, "row"),
    "g3-20-to-40-padded-straddle": (1, 60, 120, 3, 1, 1, (7, 7), True, True, "b16"),
    "g3-40-to-80-padded-straddle": (1, 120, 240, 3, 1, 1, (9, 11), True, True, "b16"),
    "g3-20-to-40-3x3-b4": (1, 60, 60, 3, 3, 1, (7, 7), True, True, "b4"),
    "g4-34-to-17-1x1-row": (1, 136, 68, 4, 1, 1, (8, 8), True, True, "row"),
    "g3-80-to-20-b4-s2": (1, 240, 60, 3, 1, 2, (13, 13), True, False, "b4"),
    "g2-12-3x3-b4": (1, 24, 24, 2, 3, 1, (9, 7), True, True, "b4"),
    "g4-68-b16-straddle-batch2": (2, 272, 272, 4, 1, 1, (14, 14), True, True, "b16"),
    "g8-8-3x3-s2-b8": (1, 64, 64, 8, 3, 2, (11, 11), False, True, "b8"),
    "g4-4-to-8-b4": (2, 16, 32, 4, 3, 1, (5, 6), True, False, "b4"),
    "g2-34-3x3-nchw": (1, 68, 68, 2, 3, 1, (8, 8), True, True, "nchw"),
    "g4-34-1x1-s2-straddle": (1, 136, 136, 4, 1, 2, (14, 14), True, True, "b16"),
    "g2-34-1x1-one-row": (1, 68, 68, 2, 1, 1, (1, 16), True, True, "nchw"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grouped_conv_matches_onnxruntime(name):
    batch, cin, cout, groups, k, stride, hw, bias, relu, path = CASES[name]
    m = grouped_model(batch, cin, cout, groups, k, stride, hw, bias, relu)
    (call,) = compiled_convs(m, randn(batch, cin, *hw))
    shape = call.arguments[-1].type.get_shape()
    if path.startswith("b"):
        assert len(shape) == 5 and shape[-1] == int(path[1:])
    elif path == "row":  # the conv runs on [N, C, 1, H * W]
        assert tuple(shape) == (batch, cout, 1, hw[0] * hw[1])
    else:
        assert len(shape) == 4 and tuple(shape[:2]) == (batch, cout)
        assert tuple(shape[2:]) == ((hw[0] + 2 * (k // 2) - k) // stride + 1, (hw[1] + 2 * (k // 2) - k) // stride + 1)


def test_shufflenet_v1_unit_matches_onnxruntime():
    """A ShuffleNet-v1 unit of 4 groups of 34 channels: grouped 1x1 (straddling), a
    channel shuffle, a depthwise 3x3 (blocks of 16, padded), a grouped 1x1 and the
    residual add with relu; then a stride-2 unit's concat with an average pool."""
    from onnx import TensorProto, helper, numpy_helper

    c, g, hw = 136, 4, 14
    inits = {
        "w1": randn(c, c // g, 1, 1, scale=0.2), "b1": randn(c, scale=0.1),
        "wd": randn(c, 1, 3, 3, scale=0.3), "bd": randn(c, scale=0.1),
        "w2": randn(c, c // g, 1, 1, scale=0.2), "b2": randn(c, scale=0.1),
        "s1": np.array([1, g, c // g, hw, hw], np.int64), "s2": np.array([1, c, hw, hw], np.int64),
        "w3": randn(c, c // g, 1, 1, scale=0.2),
        "wd2": randn(c, 1, 3, 3, scale=0.3),
    }  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], group=g),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Reshape", ["r1", "s1"], ["p1"]),
        helper.make_node("Transpose", ["p1"], ["p2"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["p2", "s2"], ["sh"]),
        helper.make_node("Conv", ["sh", "wd", "bd"], ["d"], group=c, pads=[1] * 4),
        helper.make_node("Conv", ["d", "w2", "b2"], ["c2"], group=g),
        helper.make_node("Add", ["c2", "x"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["u"]),
        helper.make_node("Conv", ["u", "w3"], ["c3"], group=g),
        helper.make_node("Conv", ["c3", "wd2"], ["d2"], group=c, pads=[1] * 4, strides=[2, 2]),
        helper.make_node("AveragePool", ["u"], ["ap"], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4),
        helper.make_node("Concat", ["d2", "ap"], ["cat"], axis=1),
        helper.make_node("Relu", ["cat"], ["y"]),
    ]
    graph_ = helper.make_graph(
        nodes, "shufflenet_v1_unit", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2 * c, hw // 2, hw // 2])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )  # fmt: skip
    m = helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    calls = compiled_convs(m, randn(1, c, hw, hw))
    straddling = [call for call in calls if tuple(call.arguments[1].type.get_shape()) == (12, 17, 1, 1, 2, 16)]
    assert len(straddling) == 3  # the three grouped 1x1 convs, 12 rows of 17 steps of 2 channels


# (channels, groups, per-group in/out, layouts): blocked convs with narrow blocks.
@pytest.mark.parametrize(
    "shape,groups,block,ow",
    [((272, 272), 4, 4, 14), ((60, 120), 3, 4, 28), ((544, 544), 4, 8, 7), ((48, 48), 1, 4, 56), ((64, 64), 1, 16, 56)],
)
def test_default_config_is_in_the_space(shape, groups, block, ow):
    """The untuned register tile is a point of the conv2d space: at most 28
    accumulator registers, however narrow the block (4 x 14 xmm accumulators of a
    4-lane block spilled; the space never allowed them)."""
    cin, cout = shape
    X = te.placeholder((1, cin // block, ow, ow, block), "float32", name="x")
    W = te.placeholder((cout // block, cin // groups // block, 1, 1, block, block), "float32", name="w")
    layout, kernel = f"NCHW{block}c", f"OIHW{block}i{block}o"
    conv = conv2d_compute(X, W, groups=groups, data_layout=layout, kernel_layout=kernel)
    red = find_reduction(conv)
    info = conv2d_info(red)
    config, space = default_config(red, info), conv2d_space(red, info)
    assert all(config[k] in space[k] for k in space)
    ocn, regn = config["tile"]
    assert ocn * max(1, block // 16) * regn <= 28


@pytest.mark.parametrize(
    "shape,src,dst",
    [
        ((1, 17, 5, 7, 16), "NCHW16c", "NCHW4c"),
        ((2, 3, 4, 3, 16), "NCHW16c", "NCHW8c"),
        ((1, 5, 3, 3, 8), "NCHW8c", "NCHW4c"),
        ((1, 12, 3, 5, 4), "NCHW4c", "NCHW16c"),
        ((1, 2, 7, 7, 16), "NCHW16c", "NCHW16c"),
    ],
)
def test_layout_transform_between_blocks(shape, src, dst):
    x = randn(*shape)
    X = te.placeholder(shape, "float32", name="x")
    y = layout_transform(X, src, dst)
    f = tc.build(default_schedule([y]), [X, y])
    out = np.zeros(y.shape, np.float32)
    f(x, out)
    np.testing.assert_array_equal(out, to_layout(x, src, dst))


def test_blocked_weight_of_narrow_groups():
    """pack_conv2d_weight of a grouped weight in blocks of 4 keeps every value where
    the compute reads it: [O/4, I/4, KH, KW, 4i, 4o]."""
    w = randn(12, 8, 3, 3)
    packed = pack_conv2d_weight(w, 4, 4)
    assert packed.shape == (3, 2, 3, 3, 4, 4)
    assert packed[2, 1, 0, 2, 3, 1] == w[2 * 4 + 1, 1 * 4 + 3, 0, 2]
