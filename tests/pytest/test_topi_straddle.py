"""The straddling grouped conv (topi/conv2d.py `conv2d_straddle_compute`): grouped
convs whose groups cut 16-lane blocks (ShuffleNet v1's 34, 68 and 136 channels per
group, and 20, 40) computed on NCHW16c data and output with a packed weight whose
rows read exactly their group's channels, checked against a numpy grouped conv:
groups 2, 3, 4 and 8, in != out channels, bias and relu fused, stride 2 with pads,
odd sizes, batch 2, padded channel blocks; an inf or NaN in one group's input stays
out of the other groups' outputs; the packing and the weight shape check."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tilecraft as tc
from tilecraft import te
from tilecraft.topi.conv2d import (
    conv2d_info,
    conv2d_space,
    conv2d_straddle_compute,
    default_config,
    find_reduction,
    pack_data,
    pack_straddle_weight,
    schedule_conv2d,
    straddle_rows,
    unpack_data,
)

RNG = np.random.default_rng(12)


def randn(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def step(c: int, groups: int) -> int:
    """The channels a straddling row reads per step (what alter-layout picks)."""
    return math.gcd(c // groups, 16)


def grouped_conv(x, w, groups, stride, pad):
    """numpy reference: NCHW x, OIHW w (I = C / groups), symmetric pad."""
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg].astype(np.float64)
        ws = w[g * og : (g + 1) * og].astype(np.float64)
        for ry in range(kh):
            for rx in range(kw):
                patch = xs[:, :, ry : ry + stride * oh : stride, rx : rx + stride * ow : stride]
                out[:, g * og : (g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, ry, rx])
    return out


CASES = [
    # batch, in channels, out channels, groups, kernel, stride, (h, w)
    (1, 272, 272, 4, 1, 1, (14, 14)),  # 68 per group: ShuffleNet v1's 272-channel 1x1
    (1, 544, 544, 4, 1, 1, (7, 7)),  # 136 per group
    (2, 160, 80, 4, 1, 1, (9, 7)),  # 40 -> 20 per group, batch 2, odd sizes
    (1, 272, 272, 8, 1, 1, (5, 6)),  # 34 per group
    (1, 80, 80, 2, 3, 2, (13, 11)),  # 40 per group, 3x3 stride 2 pad 1
    (2, 272, 544, 4, 3, 1, (6, 5)),  # 68 -> 136 per group, 3x3
    (2, 136, 136, 4, 1, 2, (8, 9)),  # 34 per group (2 at a time), 136 in 9 blocks, stride 2, batch 2
    (1, 60, 48, 3, 1, 1, (4, 5)),  # groups 3: 20 -> 16 per group, 60 in 4 blocks
]


@pytest.mark.parametrize("bias_relu", [False, True])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:4])) + f"-k{c[4]}s{c[5]}")
def test_straddle_matches_numpy(case, bias_relu):
    n, c, o, groups, k, stride, (h, w) = case
    assert (c // groups) % 16 or (o // groups) % 16  # the groups cut blocks
    x, wt = randn(n, c, h, w), randn(o, c // groups, k, k)
    pad = k // 2
    packed = pack_straddle_weight(wt, c, groups, step(c, groups), 16)
    cb, ob = -(-c // 16), -(-o // 16)
    X = te.placeholder((n, cb, h, w, 16), "float32", name="x")
    W = te.placeholder(packed.shape, "float32", name="w")
    args = [X, W]
    B = te.placeholder((ob * 16,), "float32", name="b") if bias_relu else None
    conv = conv2d_straddle_compute(X, W, B, groups=groups, channels=(c, o), strides=(stride, stride), pads=(pad,) * 4)
    out, inlined = conv, []
    if bias_relu:
        args.append(B)
        out = te.compute(conv.shape, lambda *i: te.maximum(conv[i], te.const(0, "float32")), name="relu")
        inlined = [conv]
    s = te.create_schedule(out)
    schedule_conv2d(s, out, conv, inlined)
    f = tc.build(s, [*args, out])
    result = np.full(out.shape, np.nan, np.float32)
    # padded input channels hold NaN: a row reads only its group's channels
    xp = np.pad(x, [(0, 0), (0, cb * 16 - c), (0, 0), (0, 0)], constant_values=np.nan)
    inputs = [pack_data(xp, 16), packed]
    bias = np.pad(randn(o), (0, ob * 16 - o))
    if bias_relu:
        inputs.append(bias)
    f(*inputs, result)
    expected = grouped_conv(x, wt, groups, stride, pad)
    if bias_relu:
        expected = np.maximum(expected + bias[None, :o, None, None], 0)
    got = unpack_data(result)
    np.testing.assert_allclose(got[:, :o], expected, rtol=1e-4, atol=1e-3)
    assert not got[:, o:].any()  # padded output lanes are zeros


def test_straddle_rows_and_packing():
    # 68 channels per group in blocks of 16: each of the 17 output blocks has a row
    # for its first group, and blocks 4, 8 and 12 (lanes of two groups) one more;
    # a row reads its group's 68 channels 4 at a time (17 steps).
    rows = straddle_rows(272, 272, 4, 4, 16)
    assert len(rows.group) == 20
    assert rows.block[17:] == (4, 8, 12) and rows.group[17:] == (1, 2, 3)
    assert rows.group[4] == 0 and rows.group[5] == 1
    assert rows.extra(4) == [17] and rows.extra(5) == []
    w = randn(272, 68, 1, 1)
    packed = pack_straddle_weight(w, 272, 4, 4, 16)
    assert packed.shape == (20, 17, 1, 1, 4, 16)
    # output channel 70 (group 1, block 4 lane 6) is in block 4's second row (17),
    # its group's input channel 7 at step 1, lane 3; its first row (group 0) has
    # nothing for that lane.
    assert packed[17, 1, 0, 0, 3, 6] == w[70, 7, 0, 0]
    assert not packed[4, :, 0, 0, :, 6].any()
    # every weight lands exactly once
    assert np.count_nonzero(packed) == np.count_nonzero(w)


def test_straddle_rejects_a_wrong_weight():
    X = te.placeholder((1, 17, 4, 4, 16), "float32", name="x")
    W = te.placeholder((17, 9, 1, 1, 4, 16), "float32", name="w")
    with pytest.raises(ValueError, match="has 17 rows of 9 channel steps, 20 of 17 expected"):
        conv2d_straddle_compute(X, W, groups=4, channels=(272, 272))
    W = te.placeholder((20, 17, 1, 1, 3, 16), "float32", name="w")
    with pytest.raises(ValueError, match="in-block 3 does not divide"):
        conv2d_straddle_compute(X, W, groups=4, channels=(272, 272))
    with pytest.raises(ValueError, match="groups=3"):
        straddle_rows(272, 272, 3, 4, 16)
    with pytest.raises(ValueError, match="not blocks of 8"):  # 68 per group
        straddle_rows(272, 272, 4, 8, 16)
    with pytest.raises(ValueError, match="more than two groups"):  # 4 per group
        straddle_rows(272, 272, 68, 4, 16)


def test_straddle_default_config_in_its_space():
    X = te.placeholder((1, 17, 14, 14, 16), "float32", name="x")
    W = te.placeholder((20, 17, 1, 1, 4, 16), "float32", name="w")
    red = find_reduction(conv2d_straddle_compute(X, W, groups=4, channels=(272, 272)))
    info = conv2d_info(red)
    config = default_config(red, info)
    space = conv2d_space(red, info)
    assert all(
        (list(v) if isinstance(v, (list, tuple)) else v) in [list(a) if isinstance(a, (list, tuple)) else a for a in space[key]]
        for key, v in config.items()
    )
    # its schedule always accumulates whole output rows: no `row` knob to spend trials on
    assert space["row"] == (0,) and config["row"] == 0


@pytest.mark.parametrize("case", [(2, 24, 112, 4, 1, 1, (6, 5), 8), (1, 40, 80, 2, 3, 2, (7, 9), 8), (1, 36, 48, 3, 1, 1, (4, 4), 4)])
def test_straddle_narrow_data_blocks(case):
    # NCHW8c / NCHW4c data (24, 40, 36 channels), 16-lane output: the rows read
    # gcd(C/groups, b) channels a step (2, 4, 4) from the narrower data blocks.
    n, c, o, groups, k, stride, (h, w), db = case
    x, wt = randn(n, c, h, w), randn(o, c // groups, k, k)
    pad = k // 2
    sub = math.gcd(c // groups, db)
    packed = pack_straddle_weight(wt, c, groups, sub, 16)
    X = te.placeholder((n, c // db, h, w, db), "float32", name="x")
    W = te.placeholder(packed.shape, "float32", name="w")
    conv = conv2d_straddle_compute(X, W, groups=groups, channels=(c, o), strides=(stride, stride), pads=(pad,) * 4)
    s = te.create_schedule(conv)
    schedule_conv2d(s, conv, conv)
    f = tc.build(s, [X, W, conv])
    result = np.full(conv.shape, np.nan, np.float32)
    f(pack_data(x, db), packed, result)
    got = unpack_data(result)
    np.testing.assert_allclose(got[:, :o], grouped_conv(x, wt, groups, stride, pad), rtol=1e-4, atol=1e-3)
    assert not got[:, o:].any()


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("c, groups", [(272, 4), (136, 4), (80, 2), (160, 8)], ids=["68x4", "34x4", "40x2", "20x8"])
def test_straddle_keeps_non_finite_inputs_in_their_group(c, groups, bad):
    # One input channel of group 1 is inf (or NaN): the outputs of group 1 are not
    # finite, those of every other group are what numpy computes without it (a lane
    # of group 0 in a block straddling groups 0 and 1 must not see 0 * inf).
    x, wt = randn(1, c, 3, 4), randn(c, c // groups, 1, 1)
    cg = c // groups
    x[0, cg + 1, 1, 2] = bad
    packed = pack_straddle_weight(wt, c, groups, step(c, groups), 16)
    cb = -(-c // 16)
    X = te.placeholder((1, cb, 3, 4, 16), "float32", name="x")
    W = te.placeholder(packed.shape, "float32", name="w")
    conv = conv2d_straddle_compute(X, W, groups=groups, channels=(c, c))
    s = te.create_schedule(conv)
    schedule_conv2d(s, conv, conv)
    f = tc.build(s, [X, W, conv])
    result = np.zeros(conv.shape, np.float32)
    f(pack_data(np.pad(x, [(0, 0), (0, cb * 16 - c), (0, 0), (0, 0)]), 16), packed, result)
    got = unpack_data(result)[:, :c]
    clean = x.copy()
    clean[0, cg + 1, 1, 2] = 0
    expected = grouped_conv(clean, wt, groups, 1, 0)
    others = np.r_[0:cg, 2 * cg : c]
    np.testing.assert_allclose(got[:, others], expected[:, others], rtol=1e-4, atol=1e-3)
    assert not np.isfinite(got[0, cg : 2 * cg, 1, 2]).any()
    elsewhere = np.ones((3, 4), bool)
    elsewhere[1, 2] = False
    assert np.isfinite(got[0, cg : 2 * cg][:, elsewhere]).all()


# (batch, cin, cout, groups, kernel, stride, (h, w), bias, relu, straddles): alter-layout
# gives the straddling kernel to groups that cut 16-lane blocks where it wastes few
# multiply-adds (rows x 16 lanes per useful output channel: 68 per group 1.18x, 28
# per group 1.43x), not 12 per group in 48 channels (6 rows for 3 blocks: 2x).
ONNX_CASES = {
    "g4-68-1x1": (1, 272, 272, 4, 1, 1, (14, 14), True, True, True),
    "g4-68-3x3-s2-batch2": (2, 272, 272, 4, 3, 2, (9, 7), True, False, True),
    "g4-68-to-136-1x1": (1, 272, 544, 4, 1, 1, (5, 5), False, True, True),
    "g4-28-1x1": (1, 112, 112, 4, 1, 1, (8, 8), True, True, True),
    "g4-12-1x1-b4": (1, 48, 48, 4, 1, 1, (8, 8), True, True, False),
}


@pytest.mark.parametrize("name", sorted(ONNX_CASES))
def test_straddle_from_onnx_matches_onnxruntime(name):
    from test_topi_grouped import compiled_convs, grouped_model

    batch, cin, cout, groups, k, stride, hw, bias, relu, straddles = ONNX_CASES[name]
    m = grouped_model(batch, cin, cout, groups, k, stride, hw, bias, relu)
    (call,) = compiled_convs(m, randn(batch, cin, *hw))
    shape = call.arguments[-1].type.get_shape()
    assert len(shape) == 5 and shape[-1] == (16 if straddles else 4)


@pytest.mark.parametrize("k, stride", [(1, 1), (3, 2)])
def test_alter_layout_straddle_keeps_the_reference_values(k, stride):
    """The graph evaluator before alter-layout (OIHW) and after (the straddling
    kernel layout, unpacked by graph_reference) agree."""
    from test_graph_passes import check_pass, ops_named, parse
    from tilecraft.transforms.alter_layout import AlterLayoutPass

    pad = k // 2
    oh, ow = (7 + 2 * pad - k) // stride + 1, (6 + 2 * pad - k) // stride + 1
    out = f"tensor<1x272x{oh}x{ow}xf32>"
    text = f"""
func.func @main(%x: tensor<1x272x7x6xf32>) -> {out} {{
  %w = graph.weight "w" : tensor<272x68x{k}x{k}xf32>
  %b = graph.weight "b" : tensor<272xf32>
  %y = graph.conv2d %x, %w, %b {{groups = 4 : i64, strides = array<i64: {stride}, {stride}>, pads = array<i64: {pad}, {pad}, {pad}, {pad}>}} : (tensor<1x272x7x6xf32>, tensor<272x68x{k}x{k}xf32>, tensor<272xf32>) -> {out}
  func.return %y : {out}
}}
"""
    module = check_pass(parse(text, {"w": randn(272, 68, k, k), "b": randn(272)}), AlterLayoutPass(), rtol=1e-4, atol=1e-4)
    (conv,) = ops_named(module, "graph.conv2d")
    assert conv.kernel_layout == "straddle272c272o4i16o"


def test_straddle_tuning_template():
    """The tuning template "conv2d" rebuilds a straddling workload from its params
    (the kernel layout names the channels) and schedules each config of its space."""
    from tilecraft.autotune.topi_templates import Conv2d

    X = te.placeholder((1, 17, 7, 7, 16), "float32", name="x")
    W = te.placeholder((20, 17, 1, 1, 4, 16), "float32", name="w")
    conv = conv2d_straddle_compute(X, W, groups=4, channels=(272, 272))
    params = conv2d_info(find_reduction(conv)).params
    assert params[7] == "straddle272c272o4i16o"
    template = Conv2d()
    space = template.space(*params)
    config = template.default_config(*params)
    s, args = template.schedule(*params, config=config)
    f = tc.build(s, args)
    x, w = randn(1, 272, 7, 7), randn(272, 68, 1, 1)
    out = np.zeros(args[2].shape, np.float32)
    f(pack_data(x, 16), pack_straddle_weight(w, 272, 4, 4, 16), out)
    np.testing.assert_allclose(unpack_data(out), grouped_conv(x, w, 4, 1, 0), rtol=1e-4, atol=1e-3)
    assert space is not None and template.flops(*params) > 0


def test_straddle_fused_with_a_reshape_after():
    """A group that reshapes after a straddling conv (here back to NCHW) schedules
    the accumulators at the root and the rest as an elementwise stage."""
    x, wt = randn(1, 272, 5, 6), randn(272, 68, 1, 1)
    packed = pack_straddle_weight(wt, 272, 4, 4, 16)
    X = te.placeholder((1, 17, 5, 6, 16), "float32", name="x")
    W = te.placeholder(packed.shape, "float32", name="w")
    conv = conv2d_straddle_compute(X, W, groups=4, channels=(272, 272))
    out = te.compute((1, 272, 5, 6), lambda n, c, h, w: conv[n, c // 16, h, w, c % 16], name="unpack")
    s = te.create_schedule(out)
    schedule_conv2d(s, out, conv)
    f = tc.build(s, [X, W, out])
    result = np.zeros(out.shape, np.float32)
    f(pack_data(x, 16), packed, result)
    np.testing.assert_allclose(result, grouped_conv(x, wt, 4, 1, 0), rtol=1e-4, atol=1e-3)


def test_straddle_tuning_template_narrow_data_random_configs():
    """A straddling workload on 8-lane data (24 -> 112 channels, 2 a step): the
    template rebuilds it and every config it draws computes the grouped conv."""
    from tilecraft.autotune.topi_templates import Conv2d

    X = te.placeholder((1, 3, 8, 8, 8), "float32", name="x")
    W = te.placeholder((10, 3, 1, 1, 2, 16), "float32", name="w")
    params = conv2d_info(find_reduction(conv2d_straddle_compute(X, W, groups=4, channels=(24, 112)))).params
    assert params[6:9] == ("NCHW8c", "straddle24c112o2i16o", "NCHW16c")
    template = Conv2d()
    space = template.space(*params)
    x, w = randn(1, 24, 8, 8), randn(112, 6, 1, 1)
    expected = grouped_conv(x, w, 4, 1, 0)
    rng = np.random.default_rng(3)
    for config in [template.default_config(*params), *(space.random(rng) for _ in range(3))]:
        s, args = template.schedule(*params, config=config)
        out = np.zeros(args[2].shape, np.float32)
        tc.build(s, args)(pack_data(x, 8), pack_straddle_weight(w, 24, 4, 2, 16), out)
        np.testing.assert_allclose(unpack_data(out), expected, rtol=1e-4, atol=1e-3, err_msg=str(config))
