"""topi depthwise conv2d (groups = channels, blocked output): its own schedule and knobs.

Every case builds the te compute with a fused bias + relu6 (+ residual) epilogue,
schedules it with the default or a given config, compiles it through LLVM and
compares with the float64 numpy reference of test_topi_conv_dense. No timing here:
bench/models.py measures MobileNet-v2 against onnxruntime.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_topi_conv_dense import numpy_conv2d

import tilecraft as tc
from tilecraft import te
from tilecraft.topi.conv2d import (
    conv2d_compute,
    conv2d_info,
    conv2d_space,
    default_config,
    depthwise_space,
    is_depthwise,
    pack_conv2d_weight,
    pack_data,
    schedule_conv2d,
    unpack_data,
)

# name: (channels, block, H, W, kernel, strides, pads [t, l, b, r], dilations[, batch])
CASES = {
    "mobilenet-s1": (32, 16, 14, 14, 3, (1, 1), (1, 1, 1, 1), (1, 1)),
    "mobilenet-s2": (48, 16, 14, 14, 3, (2, 2), (1, 1, 1, 1), (1, 1)),
    "odd-s2": (32, 16, 15, 13, 3, (2, 2), (1, 1, 1, 1), (1, 1)),
    "k5-s1": (16, 16, 9, 11, 5, (1, 1), (2, 2, 2, 2), (1, 1)),
    "k5-s2-odd": (32, 16, 13, 17, 5, (2, 2), (2, 2, 2, 2), (1, 1)),
    "block8": (24, 8, 10, 9, 3, (1, 1), (1, 1, 1, 1), (1, 1)),  # 16 does not divide 24
    "block8-s2": (40, 8, 11, 11, 3, (2, 2), (1, 1, 1, 1), (1, 1)),
    "asym-pad": (16, 16, 8, 19, 3, (2, 1), (0, 1, 2, 0), (1, 1)),
    "no-pad": (16, 16, 9, 9, 3, (1, 1), (0, 0, 0, 0), (1, 1)),
    "dilated": (16, 16, 12, 10, 3, (1, 1), (2, 2, 2, 2), (2, 2)),
    "wide-tail": (16, 16, 4, 61, 3, (1, 1), (1, 1, 1, 1), (1, 1)),  # 61 columns: a guarded tile tail
    "batch3-s2": (32, 16, 9, 10, 3, (2, 2), (1, 1, 1, 1), (1, 1), 3),
}


def _depthwise(name, residual=False):
    """(out, conv, args, inputs, expected): relu6(conv + bias [+ residual]) blocked."""
    C, b, H, W, K, strides, pads, dilations, *batch = CASES[name]
    N = batch[0] if batch else 1
    rng = np.random.default_rng(7)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((C, 1, K, K)).astype(np.float32)
    bias = rng.standard_normal(C).astype(np.float32)
    expected = numpy_conv2d(x, w, strides, pads, dilations, C) + bias[None, :, None, None]
    X = te.placeholder((N, C // b, H, W, b), "float32", name="x")
    Wt = te.placeholder((C // b, 1, K, K, 1, b), "float32", name="w")
    B = te.placeholder((C,), "float32", name="b")
    conv = conv2d_compute(X, Wt, B, strides=strides, pads=pads, dilations=dilations, groups=C,
                          data_layout=f"NCHW{b}c", kernel_layout=f"OIHW1i{b}o", out_layout=f"NCHW{b}c")  # fmt: skip
    args, inputs = [X, Wt, B], [pack_data(x, b), pack_conv2d_weight(w, 1, b), bias]
    summed = conv
    if residual:
        r = rng.standard_normal(expected.shape).astype(np.float32)
        Res = te.placeholder(conv.shape, "float32", name="res")
        summed = te.compute(conv.shape, lambda n, c, h, w_, l: conv[n, c, h, w_, l] + Res[n, c, h, w_, l], name="add")
        args, inputs, expected = args + [Res], inputs + [pack_data(r, b)], expected + r
    out = te.compute(conv.shape, lambda n, c, h, w_, l: te.minimum(te.maximum(summed[n, c, h, w_, l], 0.0), 6.0),
                     name="relu6")  # fmt: skip
    return out, conv, args, inputs, np.clip(expected, 0.0, 6.0)


def _run(name, config=None, residual=False):
    out, conv, args, inputs, expected = _depthwise(name, residual)
    s = te.create_schedule(out)
    schedule_conv2d(s, out, conv, [], config=config)
    got = np.zeros(out.shape, np.float32)
    tc.build(s, args + [out])(*inputs, got)
    K = CASES[name][4]
    np.testing.assert_allclose(unpack_data(got), expected, rtol=1e-4, atol=1e-4 * K)
    return s, args + [out]


def _reduction(name):
    conv = _depthwise(name)[1]
    red = conv.op.input_tensors[0]  # conv2d_compute returned the bias stage
    return red, conv2d_info(red)


@pytest.mark.parametrize("name", sorted(CASES))
def test_depthwise_default(name):
    _run(name)


@pytest.mark.parametrize("name", ["mobilenet-s1", "k5-s2-odd", "block8-s2"])
def test_depthwise_residual_epilogue(name):
    _run(name, residual=True)


@pytest.mark.parametrize("name", ["mobilenet-s2", "k5-s1", "odd-s2", "wide-tail"])
def test_depthwise_every_knob_value(name):
    """Each value of each knob (the others at their defaults) computes the same."""
    red, info = _reduction(name)
    space, default = conv2d_space(red, info), default_config(red, info)
    _run(name, config=default)
    for knob, values in space.items():
        for value in values:
            if value != default[knob]:  # (the default itself: built once, above)
                _run(name, config={**default, knob: value})


def test_depthwise_space_holds_the_default():
    for name in CASES:
        red, info = _reduction(name)
        assert is_depthwise(info)
        space = depthwise_space(red, info)
        assert conv2d_space(red, info) == space
        config = default_config(red, info)
        assert set(config) == set(space)
        assert all(config[k] in space[k] for k in space), name
        # real choices where the shape has them
        assert len(space["regn"]) > 1 and space["unroll_rx"] == (0, 1)
        assert space["pad"] == ((0,) if name == "no-pad" else (0, 1))


def _buffers(s, args) -> set[str]:
    text = str(tc.lower(s, args))
    return {line.split('"')[1] for line in text.splitlines() if "loop.alloc" in line}


def test_depthwise_pad_inlined_or_copied():
    """pad=0 writes no padded copy (the loads are guarded); pad=1 allocates one."""
    red, info = _reduction("mobilenet-s2")
    default = default_config(red, info)
    assert default["pad"] == 0
    assert "pad" not in _buffers(*_run("mobilenet-s2"))
    assert "pad" in _buffers(*_run("mobilenet-s2", config={**default, "pad": 1}))


def test_grouped_conv_is_not_depthwise():
    """Groups of several channels keep the ordinary schedule and its knobs."""
    X = te.placeholder((1, 2, 8, 8, 16), "float32", name="x")
    Wt = te.placeholder((2, 1, 3, 3, 16, 16), "float32", name="w")
    conv = conv2d_compute(X, Wt, groups=2, pads=(1, 1, 1, 1), data_layout="NCHW16c",
                          kernel_layout="OIHW16i16o", out_layout="NCHW16c")  # fmt: skip
    info = conv2d_info(conv)
    assert not is_depthwise(info)
    assert "tile" in conv2d_space(conv, info)


def test_depthwise_bad_config_names_the_knob():
    red, info = _reduction("mobilenet-s1")
    out, conv, args, inputs, _ = _depthwise("mobilenet-s1")
    s = te.create_schedule(out)
    with pytest.raises(ValueError, match="knob 'regn'"):
        schedule_conv2d(s, out, conv, [], config={**default_config(red, info), "regn": 5})
