"""topi conv2d / dense / matmul: computes + default schedules, built and run, vs numpy.

Each case builds the te compute and its schedule (with fused epilogues inlined into
the output where the case says so), compiles it through LLVM and compares with a
float64 numpy reference that shares no code with the compute. No timing here: the
figures live in bench/models.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.topi.conv2d import (
    conv2d_compute,
    data_block,
    kernel_blocks,
    pack_conv2d_weight,
    pack_data,
    schedule_conv2d,
    unpack_data,
)
from tilecraft.topi.dense import (
    dense_compute,
    matmul_compute,
    pack_dense_weight,
    schedule_dense,
    schedule_matmul,
)

# ---------------------------------------------------------------------------------
# numpy references


def numpy_conv2d(x, w, strides, pads, dilations, groups):
    """NCHW x OIHW -> NCHW in float64, one kernel tap at a time."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    N, C, H, W = x.shape
    O, Cg, KH, KW = w.shape
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = strides, dilations, pads
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    OH = (H + pt + pb - dh * (KH - 1) - 1) // sh + 1
    OW = (W + pl + pr - dw * (KW - 1) - 1) // sw + 1
    out = np.zeros((N, O, OH, OW))
    Og = O // groups
    for g in range(groups):
        xs = xp[:, g * Cg : (g + 1) * Cg]
        ws = w[g * Og : (g + 1) * Og]
        for i in range(KH):
            for j in range(KW):
                patch = xs[:, :, i * dh : i * dh + sh * (OH - 1) + 1 : sh,
                           j * dw : j * dw + sw * (OW - 1) + 1 : sw]  # fmt: skip
                out[:, g * Og : (g + 1) * Og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    return out


def build_and_run(s, args, inputs):
    f = tc.build(s, args)
    outputs = [np.zeros(t.shape, np.float32) for t in args[len(inputs) :]]
    f(*inputs, *outputs)
    return outputs[0]


# ---------------------------------------------------------------------------------
# conv2d

# (N, C, H, W, O, K, strides, pads, dilations, groups)
SHAPES = {
    "resnet-3x3": (1, 64, 28, 28, 64, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "resnet-3x3-s2": (1, 32, 14, 14, 64, 3, (2, 2), (1, 1, 1, 1), (1, 1), 1),
    "resnet-1x1-s2": (1, 32, 14, 14, 64, 1, (2, 2), (0, 0, 0, 0), (1, 1), 1),
    "resnet-stem": (1, 3, 30, 30, 32, 7, (2, 2), (3, 3, 3, 3), (1, 1), 1),
    "odd-asym-pad": (2, 16, 11, 9, 32, 3, (2, 1), (1, 0, 2, 1), (1, 1), 1),
    "dilated": (1, 16, 12, 10, 16, 3, (1, 1), (2, 2, 2, 2), (2, 2), 1),
    "depthwise": (1, 32, 13, 13, 32, 3, (1, 1), (1, 1, 1, 1), (1, 1), 32),
    "depthwise-s2": (1, 32, 14, 14, 32, 3, (2, 2), (1, 1, 1, 1), (1, 1), 32),
    "grouped": (1, 32, 9, 9, 32, 3, (1, 1), (1, 1, 1, 1), (1, 1), 4),
    "groups-of-16": (1, 64, 8, 8, 32, 3, (1, 1), (1, 1, 1, 1), (1, 1), 2),
    "wide-prime": (1, 16, 5, 37, 16, 3, (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "odd-s2": (1, 16, 9, 11, 16, 3, (2, 2), (1, 0, 1, 2), (1, 1), 1),
    "dilated-s3": (1, 16, 13, 14, 16, 3, (1, 3), (2, 2, 2, 1), (2, 2), 1),
}

# (data, kernel, out) layouts; blocks that the shape's channels allow are used.
LAYOUTS = [
    ("NCHW", "OIHW", "NCHW"),
    ("NCHW16c", "OIHW16i16o", "NCHW16c"),
    ("NCHW", "OIHW16i16o", "NCHW16c"),
    ("NCHW16c", "OIHW", "NCHW"),
    ("NCHW8c", "OIHW8i8o", "NCHW8c"),
    ("NCHW16c", "OIHW8i16o", "NCHW16c"),
]


def _fits(shape, layouts) -> bool:
    N, C, H, W, O, K, st, pads, dil, groups = shape
    db, (kib, kob), ob = data_block(layouts[0]), kernel_blocks(layouts[1]), data_block(layouts[2])
    return (not db or C % db == 0) and (not kib or (C // groups) % kib == 0) and (
        not kob or O % kob == 0) and (not ob or O % ob == 0)  # fmt: skip


def _kernel_layout_for(shape, layouts):
    """Depthwise and small-channel kernels block their input channels by what they have."""
    N, C, H, W, O, K, st, pads, dil, groups = shape
    kib, kob = kernel_blocks(layouts[1])
    if kib and (C // groups) % kib:
        return (layouts[0], f"OIHW{C // groups}i{kob}o", layouts[2])
    return layouts


def run_conv(shape, layouts, *, bias=False, epilogue=None, seed=0, config=None):
    N, C, H, W, O, K, strides, pads, dilations, groups = shape
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((O, C // groups, K, K)).astype(np.float32)
    b = rng.standard_normal(O).astype(np.float32)
    expected = numpy_conv2d(x, w, strides, pads, dilations, groups)
    if bias:
        expected += b[None, :, None, None]

    dl, kl, ol = layouts
    db, (kib, kob), ob = data_block(dl), kernel_blocks(kl), data_block(ol)
    xi = pack_data(x, db) if db else x
    wi = pack_conv2d_weight(w, kib, kob) if kob else w
    X = te.placeholder(xi.shape, "float32", name="x")
    Wt = te.placeholder(wi.shape, "float32", name="w")
    B = te.placeholder((O,), "float32", name="b") if bias else None
    conv = conv2d_compute(X, Wt, B, strides=strides, pads=pads, dilations=dilations,
                          groups=groups, data_layout=dl, kernel_layout=kl,
                          out_layout=ol)  # fmt: skip
    args, inputs = [X, Wt] + ([B] if bias else []), [xi, wi] + ([b] if bias else [])
    out, inlined = conv, []
    if epilogue is not None:
        out, inlined, extra_args, extra_inputs, expected = epilogue(conv, expected, rng)
        args, inputs = args + extra_args, inputs + extra_inputs
    s = te.create_schedule(out)
    if callable(config):  # a change to the default config
        from tilecraft.topi.conv2d import conv2d_info, default_config, find_reduction

        red = find_reduction(conv)
        config = config(default_config(red, conv2d_info(red)))
    schedule_conv2d(s, out, conv, inlined, config=config)
    got = build_and_run(s, args + [out], inputs)
    if ob and got.ndim == 5:
        got = unpack_data(got)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.sqrt(C * K * K))


def _conv_cases():
    """(shape name, layouts) pairs whose channels split into the layouts' blocks."""
    for name in sorted(SHAPES):
        for layouts in LAYOUTS:
            if _fits(SHAPES[name], _kernel_layout_for(SHAPES[name], layouts)):
                yield pytest.param(name, layouts, id=f"{name}-{'/'.join(layouts)}")


@pytest.mark.parametrize("name,layouts", list(_conv_cases()))
def test_conv2d(name, layouts):
    shape = SHAPES[name]
    run_conv(shape, _kernel_layout_for(shape, layouts))


def _bias_relu_residual(conv, expected, rng):
    """out = relu(conv + bias[c] + residual): the BasicBlock epilogue, blocked or not."""
    shape = conv.shape
    blocked = len(shape) == 5
    channels = shape[1] * shape[4] if blocked else shape[1]
    bias = rng.standard_normal(channels).astype(np.float32)
    res = rng.standard_normal(expected.shape).astype(np.float32)
    Bias = te.placeholder((channels,), "float32", name="bias")
    if blocked:
        Res = te.placeholder(shape, "float32", name="res")
        biased = te.compute(shape, lambda n, c, h, w, b: conv[n, c, h, w, b] + Bias[c * shape[4] + b],
                            name="biased")  # fmt: skip
        added = te.compute(shape, lambda n, c, h, w, b: biased[n, c, h, w, b] + Res[n, c, h, w, b],
                           name="added")  # fmt: skip
        out = te.compute(shape, lambda n, c, h, w, b: te.maximum(added[n, c, h, w, b], 0.0),
                         name="relu")  # fmt: skip
        res_in = pack_data(res, shape[4])
    else:
        Res = te.placeholder(shape, "float32", name="res")
        biased = te.compute(shape, lambda n, c, h, w: conv[n, c, h, w] + Bias[c], name="biased")
        added = te.compute(shape, lambda n, c, h, w: biased[n, c, h, w] + Res[n, c, h, w],
                           name="added")  # fmt: skip
        out = te.compute(shape, lambda n, c, h, w: te.maximum(added[n, c, h, w], 0.0), name="relu")
        res_in = res
    expected = np.maximum(expected + bias[None, :, None, None] + res, 0.0)
    return out, [biased, added], [Bias, Res], [bias, res_in], expected


@pytest.mark.parametrize("layouts", LAYOUTS[:3], ids="/".join)
@pytest.mark.parametrize("name", ["resnet-3x3", "resnet-1x1-s2", "odd-asym-pad", "depthwise"])
def test_conv2d_fused_epilogue(name, layouts):
    shape = SHAPES[name]
    layouts = _kernel_layout_for(shape, layouts)
    if not _fits(shape, layouts):
        pytest.skip("channels do not split into these blocks")
    run_conv(shape, layouts, epilogue=_bias_relu_residual)


@pytest.mark.parametrize("row", [1, 2], ids=["row", "plane"])
@pytest.mark.parametrize("name", ["resnet-3x3-s2", "odd-asym-pad", "resnet-1x1-s2", "wide-prime"])
def test_conv2d_accumulating_rows_or_planes_matches_numpy(name, row):
    """`row` = 1 accumulates an output row per channel block, 2 the whole output
    plane (two images in odd-asym-pad; a guarded column tail in wide-prime), with the
    BasicBlock epilogue reading the accumulators."""
    config = lambda default: {**default, "algorithm": "direct", "row": row, "unroll_rx": int(name != "resnet-1x1-s2")}  # noqa: E731
    layouts = ("NCHW16c", "OIHW16i16o", "NCHW16c")
    run_conv(SHAPES[name], layouts, epilogue=_bias_relu_residual, config=config)


def _blocked_default(c, hw, o, k, strides=(1, 1)):
    from tilecraft.topi.conv2d import conv2d_info, default_config, find_reduction

    X = te.placeholder((1, c // 16, hw, hw, 16), "float32", name="x")
    W = te.placeholder((-(-o // 16), c // 16, k, k, 16, 16), "float32", name="w")
    pad = k // 2
    conv = conv2d_compute(X, W, strides=strides, pads=(pad,) * 4, data_layout="NCHW16c",
                          kernel_layout="OIHW16i16o", out_layout="NCHW16c")  # fmt: skip
    red = find_reduction(conv)
    return default_config(red, conv2d_info(red))


@pytest.mark.parametrize(
    "c, hw, o, k, tile, row",
    [
        (2048, 7, 512, 1, [2, 7], 2),  # ResNet-50's 7x7 layers: 256 KiB of weights per tile, a 6 KiB plane
        (1024, 14, 256, 1, [2, 7], 2),  # a 25 KiB plane
        (512, 7, 512, 3, [2, 7], 2),
        (64, 112, 64, 3, [2, 7], 1),  # (stride 2) a 400 KiB plane: rows (weights over L1, 8 tiles a row)
        (256, 7, 128, 3, [2, 7], 0),  # 4 channel tiles to share out: one register tile a row, no rows
        (256, 14, 1024, 1, [2, 7], 0),  # 32 KiB of weights a tile: they stay in L1
        (512, 13, 1000, 1, [3, 4], 2),  # 63 blocks: 3-block tiles, not one
    ],
    ids=str,
)
def test_default_conv_tiles_rows_and_planes(c, hw, o, k, tile, row):
    """The untuned register tile and accumulation (topi/conv2d.py
    _default_schedule_config): a whole plane where the weights of a channel tile
    overflow L1, its accumulators fit PLANE_BYTES and there are PLANE_MIN_TILES
    channel tiles; rows where the planes are larger; an odd count of blocks takes
    3-block tiles."""
    config = _blocked_default(c, hw, o, k, strides=(2, 2) if hw == 112 else (1, 1))
    assert config["algorithm"] == "direct"
    assert (config["tile"], config["row"]) == (tile, row)


@pytest.mark.parametrize("row", [0, 1, 2])
def test_a_plane_unrolls_the_channel_lanes_of_a_block(row):
    """Accumulating a whole plane (row = 2), the 16 lanes of an input-channel block
    are unrolled around the register tile (the plane's accumulators are loaded and
    stored around them); a register tile (row 0) or a row (row 1) keeps them a loop."""
    import re

    from tilecraft.autotune.templates import get_template, sched_ir

    params = [[1, 64, 14, 14, 16], [16, 64, 1, 1, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1], 1,
              "NCHW16c", "OIHW16i16o", "NCHW16c", "float32", "float32"]  # fmt: skip
    t = get_template("conv2d")
    config = t.space(*params).normalize({**t.default_config(*params), "tile": [2, 7], "row": row})
    text = sched_ir("conv2d", params, config)
    (lanes,) = re.findall(r"(%rci_\d+) = sched.axis %s_conv2d.local", text)
    assert (f"sched.unroll {lanes}\n" in text) == (row == 2)


@pytest.mark.parametrize("c, hw, o, tile", [(256, 14, 1024, [2, 14]), (512, 13, 1024, [2, 13]), (64, 56, 64, [1, 28]), (256, 14, 1024, [2, 7])], ids=str)
def test_wide_register_tiles_keep_their_accumulators_in_registers(c, hw, o, tile):
    """A register tile of up to 28 accumulators (with a weight vector per channel
    block and one broadcast: at most 31 zmm registers) compiles without spilling a
    zmm register to the stack: the tile's columns are outside its channel blocks, so
    LLVM does not keep every column's broadcast live across the blocks (2 x 14 then
    needed 44 registers and ran 1.3-1.6x slower)."""
    import re

    from tilecraft.autotune.templates import get_template, lower
    from tilecraft.driver.emit import emit_assembly

    params = [[1, c // 16, hw, hw, 16], [o // 16, c // 16, 1, 1, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1], 1,
              "NCHW16c", "OIHW16i16o", "NCHW16c", "float32", "float32"]  # fmt: skip
    t = get_template("conv2d")
    space = t.space(*params)
    config = space.normalize({**t.default_config(*params), "tile": tile, "row": 0})
    assert space.contains(config), config
    assembly = emit_assembly(lower("conv2d", params, config))
    assert "vfmadd231ps" in assembly
    assert not re.findall(r"vmov\w+\s+%zmm\d+, -?\d*\(%rsp\)", assembly)


@pytest.mark.parametrize("layouts", LAYOUTS[:3], ids="/".join)
def test_conv2d_bias_operand(layouts):
    run_conv(SHAPES["odd-asym-pad"], layouts, bias=True)


def test_conv2d_bias_then_relu():
    """conv2d_compute's own bias stage followed by a fused relu."""

    def relu(conv, expected, rng):
        out = te.compute(conv.shape, lambda *i: te.maximum(conv[i], 0.0), name="relu")
        return out, [], [], [], np.maximum(expected, 0.0)

    run_conv(SHAPES["resnet-3x3"], LAYOUTS[1], bias=True, epilogue=relu)


def test_conv2d_epilogue_changes_layout():
    """A blocked conv whose group ends in NCHW (a fused layout transform): the conv
    keeps its own tiles, the transform is scheduled as an elementwise stage."""

    def to_nchw(conv, expected, rng):
        N, CB, OH, OW, b = conv.shape
        out = te.compute((N, CB * b, OH, OW), lambda n, c, h, w: conv[n, c // b, h, w, c % b],
                         name="to_nchw")  # fmt: skip
        return out, [], [], [], expected

    run_conv(SHAPES["resnet-3x3-s2"], LAYOUTS[1], epilogue=to_nchw)


def test_pack_conv2d_weight_layout():
    w = np.arange(32 * 8 * 3 * 3, dtype=np.float32).reshape(32, 8, 3, 3)
    p = pack_conv2d_weight(w, 4, 16)
    assert p.shape == (2, 2, 3, 3, 4, 16)
    assert p[1, 1, 2, 0, 3, 5] == w[16 + 5, 4 + 3, 2, 0]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(groups=3), "do not match"),
        (dict(data_layout="NHWC"), "unknown data layout"),
        (dict(kernel_layout="OIHW16o"), "unknown kernel layout"),
    ],
)
def test_conv2d_errors(kwargs, message):
    X = te.placeholder((1, 8, 5, 5), "float32", name="x")
    W = te.placeholder((8, 8, 3, 3), "float32", name="w")
    with pytest.raises(ValueError, match=message):
        conv2d_compute(X, W, None, **kwargs)


# ---------------------------------------------------------------------------------
# dense and matmul


@pytest.mark.parametrize("layout", ["NK", "KN"])
@pytest.mark.parametrize(
    "x_shape, units",
    [((128, 96), 80), ((13, 70), 130), ((1, 40), 10), ((2, 7, 33), 19), ((33,), 19), ((64, 64), 64)],
    ids=str,
)
def test_dense(x_shape, units, layout):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((units, x_shape[-1])).astype(np.float32)
    b = rng.standard_normal(units).astype(np.float32)
    wi = w if layout == "NK" else pack_dense_weight(w)
    X = te.placeholder(x.shape, "float32", name="x")
    W = te.placeholder(wi.shape, "float32", name="w")
    B = te.placeholder(b.shape, "float32", name="b")
    out = dense_compute(X, W, B, weight_layout=layout)
    s = te.create_schedule(out)
    schedule_dense(s, out, out, [])
    got = build_and_run(s, [X, W, B, out], [x, wi, b])
    expected = x.astype(np.float64) @ w.T.astype(np.float64) + b
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.sqrt(x_shape[-1]))


@pytest.mark.parametrize("layout", ["NK", "KN"])
def test_dense_fused_gelu_residual(layout):
    """BERT's FFN epilogue: out = gelu(x @ w^T + b) + residual, all inlined into out."""
    rng = np.random.default_rng(2)
    M, K, N = 20, 48, 72
    x = rng.standard_normal((1, M, K)).astype(np.float32)
    w = rng.standard_normal((N, K)).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    r = rng.standard_normal((1, M, N)).astype(np.float32)
    wi = w if layout == "NK" else pack_dense_weight(w)
    X = te.placeholder(x.shape, "float32", name="x")
    W = te.placeholder(wi.shape, "float32", name="w")
    B = te.placeholder(b.shape, "float32", name="b")
    R = te.placeholder(r.shape, "float32", name="r")
    dense = dense_compute(X, W, None, weight_layout=layout)
    biased = te.compute(dense.shape, lambda *i: dense[i] + B[i[-1]], name="biased")
    gelu = te.compute(
        dense.shape,
        lambda *i: 0.5 * biased[i] * (1.0 + te.erf(biased[i] * 0.7071067811865476)),
        name="gelu",
    )
    out = te.compute(dense.shape, lambda *i: gelu[i] + R[i], name="out")
    s = te.create_schedule(out)
    schedule_dense(s, out, dense, [biased, gelu])
    got = build_and_run(s, [X, W, B, R, out], [x, wi, b, r])
    h = x.astype(np.float64) @ w.T.astype(np.float64) + b
    from math import erf

    expected = 0.5 * h * (1 + np.vectorize(erf)(h / np.sqrt(2))) + r
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.sqrt(K))


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((1, 12, 128, 64), (1, 12, 64, 128)),
        ((12, 128, 128), (12, 128, 64)),
        ((3, 10, 7), (7, 9)),
        ((5, 13), (2, 1, 13, 17)),
        ((4, 1, 6, 5), (3, 5, 70)),
        ((9, 4), (4, 3)),
    ],
    ids=str,
)
def test_matmul(a_shape, b_shape):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    A = te.placeholder(a.shape, "float32", name="a")
    B = te.placeholder(b.shape, "float32", name="b")
    out = matmul_compute(A, B)
    s = te.create_schedule(out)
    schedule_matmul(s, out, out, [])
    got = build_and_run(s, [A, B, out], [a, b])
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.sqrt(a_shape[-1]))


def test_matmul_fused_scale():
    """Attention scores: (q @ k) * scale, the scale inlined into the output."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 16, 8)).astype(np.float32)
    b = rng.standard_normal((2, 8, 24)).astype(np.float32)
    A = te.placeholder(a.shape, "float32", name="a")
    B = te.placeholder(b.shape, "float32", name="b")
    mm = matmul_compute(A, B)
    out = te.compute(mm.shape, lambda *i: mm[i] * 0.125, name="scaled")
    s = te.create_schedule(out)
    schedule_matmul(s, out, mm, [])
    got = build_and_run(s, [A, B, out], [a, b])
    np.testing.assert_allclose(got, (a @ b) * 0.125, rtol=1e-4, atol=1e-4)


def test_dense_and_matmul_errors():
    X = te.placeholder((4, 8), "float32", name="x")
    with pytest.raises(ValueError, match="does not end in K"):
        dense_compute(X, te.placeholder((5, 7), "float32", name="w"))
    with pytest.raises(ValueError, match="unknown weight layout"):
        dense_compute(X, te.placeholder((5, 8), "float32", name="w"), weight_layout="KN16n")
    with pytest.raises(ValueError, match="do not broadcast"):
        matmul_compute(te.placeholder((2, 3, 4), "float32", name="a"),
                       te.placeholder((3, 4, 5), "float32", name="b"))  # fmt: skip


# ---------------------------------------------------------------------------------
# The GEMM knob `kc` (cache blocking of the reduction), alone and in random configs


def _dense_config_run(x_shape, units, layout, config, bias=True, seed=5):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((units, x_shape[-1])).astype(np.float32)
    b = rng.standard_normal(units).astype(np.float32)
    wi = w if layout == "NK" else pack_dense_weight(w, layout)
    X = te.placeholder(x.shape, "float32", name="x")
    W = te.placeholder(wi.shape, "float32", name="w")
    B = te.placeholder(b.shape, "float32", name="b")
    out = dense_compute(X, W, B if bias else None, weight_layout=layout)
    s = te.create_schedule(out)
    schedule_dense(s, out, out, [], config=config)
    got = build_and_run(s, [X, W, B, out] if bias else [X, W, out], [x, wi, b] if bias else [x, wi])
    expected = x.astype(np.float64) @ w.T.astype(np.float64) + (b if bias else 0.0)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.sqrt(x_shape[-1]))


def _gemm_knobs(x_shape, units, layout):
    from tilecraft.topi.dense import default_gemm_config, gemm_space

    K = x_shape[-1]
    wshape = {"KN": (K, units), "NK64n": (units // 64, K, 64), "NK": (units, K)}[layout]
    red = dense_compute(te.placeholder(x_shape, "float32", name="x"), te.placeholder(wshape, "float32", name="w"),
                        weight_layout=layout)  # fmt: skip
    return gemm_space(red), default_gemm_config(red)


@pytest.mark.parametrize(
    "x_shape, units, layout",
    [((40, 256), 128, "NK64n"), ((2, 15, 192), 96, "KN"), ((30, 320), 72, "KN")],
    ids=str,
)
def test_dense_kc_alone_and_random_configs_match_numpy(x_shape, units, layout):
    """Every chunk of the `kc` knob on the default config, then random configs of
    the whole space (kc with tiles that overhang M, packed panels, no parallel)."""
    knobs, default = _gemm_knobs(x_shape, units, layout)
    assert default["kc"] == 0 and len(knobs["kc"]) > 1, knobs["kc"]
    for kc in knobs["kc"][1:]:
        _dense_config_run(x_shape, units, layout, {**default, "kc": kc})
    rng = np.random.default_rng(7)
    for _ in range(4):
        config = {k: v[rng.integers(len(v))] for k, v in knobs.items()}
        config["kc"] = knobs["kc"][1 + rng.integers(len(knobs["kc"]) - 1)]
        _dense_config_run(x_shape, units, layout, config, bias=bool(rng.integers(2)))


def test_dense_kc_is_offered_where_row_tiles_share_a_panel():
    # one row tile (a GEMV, M <= 6) or a per-call transposed NK weight: no kc
    assert _gemm_knobs((4, 256), 128, "KN")[0]["kc"] == (0,)
    assert _gemm_knobs((40, 256), 128, "KN")[0]["kc"] == (0, 64, 128)
    assert _gemm_knobs((40, 250), 128, "NK")[0].get("kc", (0,)) == (0,)


@pytest.mark.parametrize("units, panels_parallel", [(3072, True), (256, False)], ids=["48 panels", "4 panels"])
def test_a_row_tile_overhanging_m_leaves_its_guard_to_loop_partition(units, panels_parallel):
    """128 rows in tiles of 6 (the last one overhangs) under a GELU epilogue: with
    enough panels the parallel loop runs the panels and the row tiles run serially
    inside, so the tail guard reads a serial loop variable that loop-partition can
    bound (fused into the parallel loop it stayed in every tile: 1.9x slower on
    BERT's 768 -> 3072 dense); with few panels the row tiles stay in the parallel
    loop. Either way the answer is numpy's."""
    M, K = 128, 96
    x = te.placeholder((1, M, K), "float32", name="x")
    w = te.placeholder((units // 64, K, 64), "float32", name="w")
    d = dense_compute(x, w, None, weight_layout="NK64n")
    g = te.compute(d.shape, lambda *i: d(*i) * (te.erf(d(*i) * 0.7071) + 1.0) * 0.5, name="gelu")
    s = te.create_schedule(g)
    schedule_dense(s, g, d, (), config={"kc": 0, "pack": 0, "parallel": 1, "tile": [6, 64]})
    text = str(tc.lower(s, [x, w, g]))
    tiles = -(-M // 6)
    extent = units // 64 if panels_parallel else units // 64 * tiles
    assert f"= 0 to {extent} parallel" in text
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((1, M, K)).astype(np.float32)
    wv = (rng.standard_normal((K, units)) / np.sqrt(K)).astype(np.float32)
    out = np.zeros((1, M, units), np.float32)
    tc.build(s, [x, w, g])(xv, pack_dense_weight(np.ascontiguousarray(wv.T), "NK64n"), out)
    from math import erf

    y = xv.astype(np.float64) @ wv.astype(np.float64)
    expected = y * (np.vectorize(erf)(y * 0.7071) + 1.0) * 0.5
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "x_shape, units, rows",
    [
        ((1, 128, 768), 3072, 6),  # BERT: 22 tiles of 6 (the last overhangs) beat 32 of 4
        ((1, 128, 768), 768, 6),
        ((32, 1024), 1024, 6),
        ((1, 128, 192), 3072, 4),  # a short reduction: the overhang is not paid back
        ((1, 128, 768), 256, 4),  # 4 panels: the row tiles stay in the parallel loop, guarded
        ((10, 1024), 1024, 5),  # two tiles either way: the divisor, no overhang
        ((36, 1024), 1024, 6),  # 6 divides M
    ],
    ids=str,
)
def test_default_register_tile_rows(x_shape, units, rows):
    """Default rows of a panel dense's register tile (topi/dense.py _tile_rows): 6
    also where they overhang M, when K is long and the row tiles run inside panels."""
    _, default = _gemm_knobs(x_shape, units, "NK64n")
    assert default["tile"] == [rows, 64]


def test_default_six_row_tiles_that_overhang_m_match_numpy():
    """The default schedule of a 70-row dense (11 full tiles of 6, one of 4 rows)
    with a bias and relu epilogue, against numpy."""
    M, K, N = 70, 256, 512
    x = te.placeholder((M, K), "float32", name="x")
    w = te.placeholder((N // 64, K, 64), "float32", name="w")
    b = te.placeholder((N,), "float32", name="b")
    d = dense_compute(x, w, b, weight_layout="NK64n")
    g = te.compute(d.shape, lambda i, j: te.maximum(d(i, j), 0.0), name="relu")
    s = te.create_schedule(g)
    schedule_dense(s, g, d, ())
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((M, K)).astype(np.float32)
    wv = (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32)
    bv = rng.standard_normal(N).astype(np.float32)
    out = np.zeros((M, N), np.float32)
    tc.build(s, [x, w, b, g])(xv, pack_dense_weight(np.ascontiguousarray(wv.T), "NK64n"), bv, out)
    np.testing.assert_allclose(out, np.maximum(xv @ wv + bv, 0.0), rtol=1e-4, atol=1e-4)
