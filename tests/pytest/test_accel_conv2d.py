"""The accelerator's packed int8 conv2d compute and its numpy reference, run on the
CPU: packed layouts at BATCH 1 and 2, strides, pads, bias, relu, requantize."""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.topi import accel_conv2d as ac

RNG = np.random.default_rng(3)


def test_packing_round_trips():
    x = RNG.integers(-128, 128, (4, 32, 3, 5)).astype(np.int8)
    packed = ac.pack_data(x, 2, 16)
    assert packed.shape == (2, 2, 3, 5, 2, 16)
    assert packed[1, 1, 2, 4, 1, 7] == x[3, 23, 2, 4]
    np.testing.assert_array_equal(ac.unpack_result(packed), x)
    w = RNG.integers(-128, 128, (32, 16, 3, 3)).astype(np.int8)
    assert ac.pack_kernel(w, 16, 16)[1, 0, 2, 1, 5, 9] == w[21, 9, 2, 1]
    with pytest.raises(ValueError, match="does not split"):
        ac.pack_data(x, 3, 16)


@pytest.mark.parametrize(
    "n, c, hw, o, k, stride, pad, batch, shift, relu",
    [
        (1, 32, 8, 16, 3, 1, 1, 1, 8, True),
        (2, 32, 7, 32, 1, 2, 0, 2, 6, False),
        (1, 16, 9, 32, 3, 2, 1, 1, 9, True),
        (1, 16, 5, 16, 1, 1, 0, 1, 0, False),  # shift 0: only the clip
    ],
)
def test_packed_conv2d_matches_numpy(n, c, hw, o, k, stride, pad, batch, shift, relu):
    block = 16
    span = 128 if shift else 3  # without a shift, small values keep the result off the clip
    x = RNG.integers(-span, span, (n, c, hw, hw)).astype(np.int8)
    w = RNG.integers(-span, span, (o, c, k, k)).astype(np.int8)
    bias = RNG.integers(-3000, 3000, (o,)).astype(np.int32) if shift else RNG.integers(-20, 20, (o,)).astype(np.int32)
    data = te.placeholder(ac.pack_data(x, batch, block).shape, "int8", name="data")
    kernel = te.placeholder(ac.pack_kernel(w, block, block).shape, "int8", name="kernel")
    b = te.placeholder((o // block, block), "int32", name="bias")
    conv = ac.conv2d_packed(data, kernel, (stride, stride), (pad,) * 4)
    out = ac.requantize_epilogue(conv, shift, b, relu=relu)
    f = tc.build(te.create_schedule(out), [data, kernel, b, out])
    got = np.zeros(out.shape, np.int8)
    f(ac.pack_data(x, batch, block), ac.pack_kernel(w, block, block), bias.reshape(o // block, block), got)
    expected = ac.conv2d_reference(x, w, (stride, stride), (pad,) * 4, shift=shift, bias=bias, relu=relu)
    np.testing.assert_array_equal(ac.unpack_result(got), expected)
    assert len(np.unique(expected)) > 10  # not saturated to a constant
