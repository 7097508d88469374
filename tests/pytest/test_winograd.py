"""Winograd F(2x2, 3x3) convs (transforms/winograd_conv2d.py, topi/winograd.py)
against the direct conv in numpy and onnxruntime.

Winograd rounds differently from the direct conv (its transforms add and subtract
up to 16 terms per value), so results are compared with a tolerance relative to
the output's scale: max |y - ref| <= 1e-4 * max |ref| (measured: ~1e-6)."""

from __future__ import annotations

import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.dialects.graph_reference import (
    conv_nchw,
    kernel_from_oihw,
    winograd_conv_nchw,
    winograd_weight,
)
from tilecraft.frontends import te
from tilecraft.topi import winograd
from tilecraft.topi.conv2d import pack_data, unpack_data
from tilecraft.transforms.winograd_conv2d import WinogradConv2dPass
from tilecraft.utils.diagnostics import OpError

RNG = np.random.default_rng(10)


def randn(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def assert_close(y: np.ndarray, ref: np.ndarray) -> None:
    assert y.shape == ref.shape
    scale = float(np.abs(ref).max())
    assert float(np.abs(y - ref).max()) <= 1e-4 * scale, float(np.abs(y - ref).max()) / scale


# -- the numpy formula (the graph evaluator's meaning of the winograd algorithm) ---------


@pytest.mark.parametrize(
    "h, w, pads", [(8, 8, (1, 1, 1, 1)), (5, 9, (1, 1, 1, 1)), (7, 6, (0, 0, 0, 0)), (13, 13, (1, 0, 2, 1))]
)
def test_numpy_winograd_is_the_direct_conv(h, w, pads):
    x, g = randn(2, 32, h, w), randn(48, 32, 3, 3)
    u = winograd_weight(kernel_from_oihw(g, 16, 16))
    assert u.shape == (4, 4, 3, 2, 16, 16)
    assert_close(winograd_conv_nchw(x, u, pads), conv_nchw(x, g, (1, 1), pads, (1, 1)))


# -- the te kernel, default and other configs ----------------------------------------------


def build(n: int, c: int, k: int, h: int, w: int, pads, config=None, block: int = 16):
    x = te.placeholder((n, c // block, h, w, block), "float32", name="x")
    u = te.placeholder((4, 4, k // block, c // block, block, block), "float32", name="u")
    y = winograd.winograd_conv2d_compute(x, u, pads)
    s = te.create_schedule(y)
    winograd.schedule_winograd(s, y, y, config=config)
    return tc.build(s, [x, u, y], target="llvm"), y.shape


def run_kernel(n, c, k, h, w, pads, config=None, block=16):
    f, shape = build(n, c, k, h, w, pads, config, block)
    x, g = randn(n, c, h, w), randn(k, c, 3, 3)
    u = winograd_weight(kernel_from_oihw(g, block, block))
    out = np.full(shape, np.nan, np.float32)
    f(pack_data(x, block), u, out)
    assert_close(unpack_data(out), conv_nchw(x, g, (1, 1), pads, (1, 1)))


@pytest.mark.parametrize(
    "n, c, k, h, w, pads",
    [
        (1, 32, 32, 14, 14, (1, 1, 1, 1)),
        (2, 16, 48, 5, 9, (1, 1, 1, 1)),  # batch 2, odd sizes: partial last tiles
        (1, 16, 16, 13, 13, (0, 1, 2, 0)),  # uneven pads
        (1, 48, 32, 3, 3, (0, 0, 0, 0)),  # one partial tile
    ],
)
def test_kernel_matches_numpy(n, c, k, h, w, pads):
    run_kernel(n, c, k, h, w, pads)


def test_kernel_with_8_lane_blocks():
    run_kernel(1, 24, 16, 9, 9, (1, 1, 1, 1), block=8)


def test_every_knob_value_computes_the_same():
    x = te.placeholder((1, 4, 10, 10, 16), "float32", name="x")
    u = te.placeholder((4, 4, 4, 4, 16, 16), "float32", name="u")
    info = winograd.winograd_info(winograd.winograd_conv2d_compute(x, u, (1, 1, 1, 1)))
    space = winograd.winograd_space(info)
    assert winograd.winograd_default_config(info)["tile"] in [list(t) for t in space["tile"]]
    for config in (
        {"tile": [4, 5], "split": 1, "parallel": 1},
        {"tile": [1, 3], "split": 4, "parallel": 0},  # 3 does not divide 5 tiles: a guarded tail
        {"tile": [2, 1], "split": 2, "parallel": 1},
    ):
        assert all(list(v) in [list(t) for t in space[k]] if k == "tile" else v in space[k] for k, v in config.items())
        run_kernel(1, 64, 64, 10, 10, (1, 1, 1, 1), config)


# -- whole models through tc.compile --------------------------------------------------------


def resnet_block(n: int, c: int, h: int, w: int) -> onnx.ModelProto:
    """conv + bias + relu, then conv + residual add + relu (ResNet's basic block)."""
    w1, b1, w2 = randn(c, c, 3, 3, scale=0.1), randn(c), randn(c, c, 3, 3, scale=0.1)
    inits = [numpy_helper.from_array(a, name) for a, name in ((w1, "w1"), (b1, "b1"), (w2, "w2"))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "x"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


EVERY_CONV = {"after:alter-layout": [WinogradConv2dPass(min_outputs=0)]}


@pytest.mark.parametrize(
    "n, c, h, w",
    [
        (1, 32, 14, 14),
        (2, 16, 5, 9),  # batch 2, odd sizes
        (1, 58, 13, 13),  # 58 channels: alter-layout pads them to 64
        (1, 24, 9, 9),  # 24 channels: blocks of 8
    ],
)
def test_resnet_block_matches_onnxruntime(n, c, h, w):
    m = resnet_block(n, c, h, w)
    x = randn(n, c, h, w)
    (ref,) = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})
    compiled = tc.compile(m, extra_passes=EVERY_CONV)
    assert compiled.ir.count("winograd_gemm") >= 2  # both convs run as Winograd
    assert_close(compiled(x), ref)


def test_default_heuristic_keeps_small_layers_direct():
    big = tc.compile(resnet_block(1, 32, 14, 14))
    small = tc.compile(resnet_block(1, 32, 7, 7))
    assert "winograd_gemm" in big.ir and "winograd_gemm" not in small.ir


def test_weight_transform_at_run_time():
    """A winograd_weight of a weight that is an argument (not folded) runs as a kernel."""
    from tilecraft.dialects.graph_reference import to_layout

    from test_graph_passes import parse

    text = """
func.func @main(%x: tensor<1x2x6x6x16xf32>, %w: tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x6x6x16xf32> {
  %u = graph.winograd_weight %w : (tensor<2x2x3x3x16x16xf32>) -> tensor<4x4x2x2x16x16xf32>
  %y = graph.conv2d %x, %u {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c", algorithm = #graph<conv_algorithm winograd>} : (tensor<1x2x6x6x16xf32>, tensor<4x4x2x2x16x16xf32>) -> tensor<1x2x6x6x16xf32>
  func.return %y : tensor<1x2x6x6x16xf32>
}
"""
    x, g = randn(1, 32, 6, 6), randn(32, 32, 3, 3)
    y = tc.compile(parse(text))(pack_data(x, 16), kernel_from_oihw(g, 16, 16))
    assert_close(to_layout(y, "NCHW16c", "NCHW"), conv_nchw(x, g, (1, 1), (1, 1, 1, 1), (1, 1)))


# -- the algorithm knob of the conv2d tuning template ------------------------------------------


def conv_params(size: int) -> tuple:
    return ([1, 4, size, size, 16], [4, 4, 3, 3, 16, 16], [1, 1], [1, 1, 1, 1], [1, 1], 1,
            "NCHW16c", "OIHW16i16o", "NCHW16c", "float32", "float32")  # fmt: skip


def test_algorithm_knob_default_is_a_point_of_the_space():
    from tilecraft.autotune.templates import get_template

    t = get_template("conv2d")
    for size, algorithm in ((14, "winograd"), (7, "direct")):
        space, default = t.space(*conv_params(size)), t.default_config(*conv_params(size))
        assert space.knobs["algorithm"] == ("direct", "winograd")
        assert default["algorithm"] == algorithm and space.contains(default)
    # Winograd leaves the direct knobs unused, direct the Winograd knobs: one point of
    # the space per config of the algorithm's own knobs, not one per unused value.
    import itertools

    space = t.space(*conv_params(14))
    names = list(space.knobs)
    every = [dict(zip(names, values)) for values in itertools.product(*space.knobs.values())]
    kept = [c for c in every if space.contains(c)]
    own = {"winograd": [k for k in names if k.startswith("winograd_")],
           "direct": [k for k in names if not k.startswith("winograd_") and k != "algorithm"]}  # fmt: skip
    for algorithm, knobs in own.items():
        picked = [c for c in kept if c["algorithm"] == algorithm]
        assert len({str([c[k] for k in knobs]) for c in picked}) == len(picked) > 1
    # every Winograd schedule config is one point of the space
    x = te.placeholder((1, 4, 14, 14, 16), "float32", name="x")
    u = te.placeholder((4, 4, 4, 4, 16, 16), "float32", name="u")
    wspace = winograd.winograd_space(winograd.winograd_info(winograd.winograd_conv2d_compute(x, u, (1, 1, 1, 1))))
    assert sum(c["algorithm"] == "winograd" for c in kept) == math.prod(len(v) for v in wspace.values())
    # A stride-2 conv has no Winograd.
    strided = list(conv_params(14))
    strided[2] = [2, 2]
    assert t.space(*strided).knobs["algorithm"] == ("direct",)


def test_measured_winograd_config_is_checked_against_the_direct_conv():
    from tilecraft.autotune.templates import get_template, measure

    config = get_template("conv2d").default_config(*conv_params(14))
    assert config["algorithm"] == "winograd"
    # no "wrong answer": the first call is checked; cutoff=0.0 then skips the timing
    assert len(measure("conv2d", list(conv_params(14)), config, repeat=1, cutoff=0.0)) == 1


@pytest.mark.parametrize("size, picked", [(14, "direct"), (7, "winograd")])
def test_tuning_context_picks_the_algorithm(size, picked):
    """A tuning log's config of the conv's workload overrides the heuristic."""
    from tilecraft.topi.tuning import use_configs

    from tilecraft.autotune.templates import get_template

    asked = []

    def lookup(template, params):
        asked.append((template, params))
        if template != "conv2d":
            return None
        knobs = get_template("conv2d").space(*params).knobs
        return {k: list(v[0]) if isinstance(v[0], tuple) else v[0] for k, v in knobs.items()} | {"algorithm": picked}

    m = resnet_block(1, 64, size, size)
    x = randn(1, 64, size, size)
    (ref,) = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})
    with use_configs(lookup):
        compiled = tc.compile(m)
    assert ("winograd_gemm" in compiled.ir) == (picked == "winograd")
    # asked under the key topi's conv2d compute records (tuning logs are keyed by it)
    assert ("conv2d", conv_params(size)) in [(t, tuple(p)) for t, p in asked]
    assert_close(compiled(x), ref)


# -- the Winograd knobs of the conv2d tuning template -------------------------------------------


def test_template_winograd_knobs_alone_and_random_configs_match_numpy():
    """The conv2d template's winograd_tile / winograd_split / winograd_parallel (the
    Winograd schedule's knobs under the winograd algorithm), each alone on the
    default config and in random configs of the space, against the numpy conv."""
    from tilecraft.autotune.templates import get_template, lower

    t = get_template("conv2d")
    params = conv_params(14)
    space, default = t.space(*params), t.default_config(*params)
    assert default["algorithm"] == "winograd"
    x, g = randn(1, 64, 14, 14), randn(64, 64, 3, 3)
    u = winograd_weight(kernel_from_oihw(g, 16, 16))
    ref = conv_nchw(x, g, (1, 1), (1, 1, 1, 1), (1, 1))
    configs = [{**default, "winograd_tile": [4, 3]}, {**default, "winograd_split": 2},
               {**default, "winograd_parallel": 0}]  # fmt: skip
    rng = np.random.default_rng(3)
    configs += [c for c in (space.random(rng) for _ in range(40)) if c["algorithm"] == "winograd"][:3]
    texts = set()
    for config in configs:
        assert space.contains(config), config
        s, args = t.schedule(*params, config=config)
        out = np.full([int(d) for d in args[-1].shape], np.nan, np.float32)
        tc.build(s, args, target="llvm")(pack_data(x, 16), u, out)
        assert_close(unpack_data(out), ref)
        texts.add(str(lower("conv2d", params, config, verify=False)))
    assert len(texts) == len(configs)  # each config its own loop nest


@pytest.mark.parametrize("c, size, tile", [(64, 56, [4, 7]), (96, 28, [3, 7]), (256, 14, [4, 7]), (32, 56, [2, 14])], ids=str)
def test_default_register_tile_is_the_widest(c, size, tile):
    """The untuned Winograd GEMM tile: the most channel blocks (up to 4) that divide
    the output's, with up to 28 accumulators of tile columns."""
    from tilecraft.autotune.templates import get_template

    params = [[1, c // 16, size, size, 16], [c // 16, c // 16, 3, 3, 16, 16], [1, 1], [1, 1, 1, 1], [1, 1], 1,
              "NCHW16c", "OIHW16i16o", "NCHW16c", "float32", "float32"]  # fmt: skip
    default = get_template("conv2d").default_config(*params)
    assert (default["algorithm"], default["winograd_tile"]) == ("winograd", tile)


def test_compile_uses_the_logged_winograd_knobs():
    """A tuning log's Winograd knobs reach the Winograd schedule of the compiled model
    (asked under the direct conv's workload key); a config without them is refused
    naming the knob."""
    from tilecraft.autotune.templates import get_template
    from tilecraft.topi.tuning import use_configs

    m = resnet_block(1, 64, 14, 14)
    x = randn(1, 64, 14, 14)
    (ref,) = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})
    default = get_template("conv2d").default_config(*conv_params(14))
    picked = {**default, "winograd_split": 1, "winograd_parallel": 0}
    assert default["winograd_split"] != 1 or default["winograd_parallel"] != 0

    def lookup(config):
        return lambda template, params: config if (template, tuple(params)) == ("conv2d", conv_params(14)) else None

    untuned = tc.compile(m)
    with use_configs(lookup(default)):
        same = tc.compile(m)
    with use_configs(lookup(picked)):
        tuned = tc.compile(m)
    assert "winograd_gemm" in tuned.ir and same.ir == untuned.ir and tuned.ir != untuned.ir
    assert_close(tuned(x), ref)
    stale = {k: v for k, v in picked.items() if k != "winograd_split"}
    with pytest.raises(OpError, match="no knob 'winograd_split'"), use_configs(lookup(stale)):
        tc.compile(m)
