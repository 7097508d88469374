"""topi computes with their default schedules, compiled and compared with numpy.

Each case builds one op's te compute on placeholders, schedules it the way
convert-graph-to-te would (`strategy.schedule_group`), builds it with LLVM and
checks the result against a numpy formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tilecraft as tc
from tilecraft.frontends import te
from tilecraft.topi import elementwise, pool, reduce, strategy, transform

RNG = np.random.default_rng(0)


def run(make, *arrays, anchor: str | None = None):
    """Build `make(*placeholders)` (one tensor or a list), run it on `arrays`."""
    ph = [te.placeholder(a.shape, str(a.dtype), name=f"in{n}") for n, a in enumerate(arrays)]
    out = make(*ph)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if anchor:
        s = strategy.schedule_group(outs, anchor, outs[0], [])
    else:
        s = strategy.schedule_group(outs)
    f = tc.build(s, ph + outs)
    results = [np.zeros(t.shape, t.dtype) for t in outs]
    f(*arrays, *results)
    return results if isinstance(out, (list, tuple)) else results[0]


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64)).astype(np.float32)


UNARY = [
    (elementwise.relu, lambda x: np.maximum(x, 0)),
    (elementwise.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (elementwise.tanh, np.tanh),
    (elementwise.erf, erf),
    (elementwise.exp, np.exp),
    (elementwise.negative, np.negative),
    (elementwise.abs, np.abs),
    (lambda x: elementwise.gelu(x), lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2)))),
    (
        lambda x: elementwise.gelu(x, "tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
    (lambda x: elementwise.clip(x, -0.5, 0.7), lambda x: np.clip(x, -0.5, 0.7)),
]


@pytest.mark.parametrize("f, ref", UNARY)
def test_unary(f, ref):
    x = randn(3, 5, 37)
    np.testing.assert_allclose(run(f, x), ref(x), rtol=1e-5, atol=1e-5)


def test_log_sqrt():
    x = np.abs(randn(7, 33)) + 0.1
    np.testing.assert_allclose(run(elementwise.log, x), np.log(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run(elementwise.sqrt, x), np.sqrt(x), rtol=1e-5)


@pytest.mark.parametrize(
    "a_shape, b_shape", [((4, 5), (4, 5)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((1,), (2, 3))]
)
def test_broadcast_binary(a_shape, b_shape):
    a, b = randn(*a_shape), randn(*b_shape)
    np.testing.assert_allclose(run(elementwise.add, a, b), a + b, rtol=1e-6)
    np.testing.assert_allclose(run(elementwise.subtract, a, b), a - b, rtol=1e-6)
    np.testing.assert_allclose(run(elementwise.multiply, a, b), a * b, rtol=1e-6)
    np.testing.assert_allclose(run(elementwise.divide, a, b + 3.0), a / (b + 3.0), rtol=1e-6)
    np.testing.assert_allclose(run(elementwise.maximum, a, b), np.maximum(a, b))


def test_integer_division_truncates():
    a = np.array([7, -7, 7, -7, 6], np.int64)
    b = np.array([2, 2, -2, -2, 3], np.int64)
    np.testing.assert_array_equal(run(elementwise.divide, a, b), np.trunc(a / b).astype(np.int64))


def test_power_cast_compare_where():
    a, b = np.abs(randn(4, 6)) + 0.5, randn(4, 6)
    np.testing.assert_allclose(run(lambda x, y: elementwise.power(x, y), a, b), a**b, rtol=1e-5)
    np.testing.assert_allclose(run(lambda x, y: elementwise.power(x, y, 2.0), b, b), b * b)
    np.testing.assert_array_equal(run(lambda x: elementwise.cast(x, "int32"), b * 10), (b * 10).astype(np.int32))
    cond = run(lambda x, y: elementwise.compare("less", x, y), a, b)
    np.testing.assert_array_equal(cond, a < b)
    np.testing.assert_array_equal(run(elementwise.where, cond, a, b), np.where(a < b, a, b))


def test_pad_reshape_transpose():
    x = randn(2, 3, 4)
    np.testing.assert_array_equal(
        run(lambda t: transform.pad(t, [0, 1, 2, 0, 2, 1], 0.5), x),
        np.pad(x, [(0, 0), (1, 2), (2, 1)], constant_values=0.5),
    )
    np.testing.assert_array_equal(run(lambda t: transform.reshape(t, (4, 6)), x), x.reshape(4, 6))
    np.testing.assert_array_equal(run(lambda t: transform.reshape(t, (2, 12, 1)), x), x.reshape(2, 12, 1))
    np.testing.assert_array_equal(run(lambda t: transform.reshape(t, (6, 2, 2)), x), x.reshape(6, 2, 2))
    np.testing.assert_array_equal(run(lambda t: transform.transpose(t, [2, 0, 1]), x), x.transpose(2, 0, 1))


def test_concat_split_slice():
    a, b, c = randn(2, 3, 4), randn(2, 1, 4), randn(2, 5, 4)
    np.testing.assert_array_equal(
        run(lambda *ts: transform.concat(ts, 1), a, b, c), np.concatenate([a, b, c], 1)
    )
    parts = run(lambda t: transform.split(t, 1, [2, 3]), c)
    np.testing.assert_array_equal(parts[0], c[:, :2])
    np.testing.assert_array_equal(parts[1], c[:, 2:])
    ranges = [(0, 2, 1), (4, 0, -2), (1, 4, 2)]
    np.testing.assert_array_equal(run(lambda t: transform.strided_slice(t, ranges), c), c[:, 4:0:-2, 1:4:2])


def test_gather_negative_ids():
    table = randn(10, 8)
    ids = np.array([[0, 3, -1], [9, 2, -10]], np.int64)
    np.testing.assert_array_equal(run(transform.gather, table, ids), table[ids])
    np.testing.assert_array_equal(run(lambda d, i: transform.gather(d, i, 1), table, ids[:1] + 2), table[:, ids[:1] + 2])


def test_layout_transform_round_trip():
    x = randn(1, 32, 3, 5)
    blocked = run(lambda t: transform.layout_transform(t, "NCHW", "NCHW16c"), x)
    np.testing.assert_array_equal(blocked, x.reshape(1, 2, 16, 3, 5).transpose(0, 1, 3, 4, 2))
    back = run(lambda t: transform.layout_transform(t, "NCHW16c", "NCHW8c"), blocked)
    np.testing.assert_array_equal(back, x.reshape(1, 4, 8, 3, 5).transpose(0, 1, 3, 4, 2))


@pytest.mark.parametrize("axes, keep", [([1], True), ([2], False), ([0, 2], True), ([1, 2], False)])
def test_reductions(axes, keep):
    x = randn(3, 20, 33)
    np.testing.assert_allclose(run(lambda t: reduce.reduce_sum(t, axes, keep), x), x.sum(tuple(axes), keepdims=keep), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(run(lambda t: reduce.reduce_mean(t, axes, keep), x), x.mean(tuple(axes), keepdims=keep), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(run(lambda t: reduce.reduce_max(t, axes, keep), x), x.max(tuple(axes), keepdims=keep))


@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax(axis):
    x = randn(4, 12, 50) * 3
    e = np.exp(x - x.max(axis, keepdims=True))
    np.testing.assert_allclose(run(lambda t: reduce.softmax(t, axis), x), e / e.sum(axis, keepdims=True), rtol=1e-5, atol=1e-6)


def test_layer_norm_and_batch_norm():
    x, g, b = randn(2, 7, 48), randn(48), randn(48)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    ref = (x - mean) / np.sqrt(var + 1e-5) * g + b
    np.testing.assert_allclose(run(lambda *t: reduce.layer_norm(*t, -1, 1e-5), x, g, b), ref, rtol=1e-4, atol=1e-4)
    x4 = randn(2, 3, 5, 5)
    s, bb, m, v = randn(3), randn(3), randn(3), np.abs(randn(3)) + 0.1
    ref = (x4 - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-5) * s[:, None, None] + bb[:, None, None]
    np.testing.assert_allclose(run(lambda *t: reduce.batch_norm(*t), x4, s, bb, m, v), ref, rtol=1e-5, atol=1e-5)


def _windows(x, k, stride, pads, fill):
    n, c, h, w = x.shape
    p = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])], constant_values=fill)
    oh = (h + pads[0] + pads[2] - k) // stride + 1
    ow = (w + pads[1] + pads[3] - k) // stride + 1
    return np.stack([p[:, :, i * stride : i * stride + k, j * stride : j * stride + k] for i in range(oh) for j in range(ow)], 2).reshape(n, c, oh, ow, k, k)


def test_pooling():
    x = randn(1, 4, 9, 9)
    pads = [1, 1, 1, 1]
    got = run(lambda t: pool.max_pool(t, [3, 3], [2, 2], pads), x)
    np.testing.assert_array_equal(got, _windows(x, 3, 2, pads, -np.inf).max((4, 5)))
    got = run(lambda t: pool.avg_pool(t, [3, 3], [2, 2], pads, count_include_pad=True), x)
    np.testing.assert_allclose(got, _windows(x, 3, 2, pads, 0).mean((4, 5)), rtol=1e-5, atol=1e-6)  # a mean near 0: its error scales with the inputs
    counts = _windows(np.ones_like(x), 3, 2, pads, 0).sum((4, 5))
    got = run(lambda t: pool.avg_pool(t, [3, 3], [2, 2], pads), x)
    np.testing.assert_allclose(got, _windows(x, 3, 2, pads, 0).sum((4, 5)) / counts, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run(reduce.global_avg_pool, x), x.mean((2, 3), keepdims=True), rtol=1e-5, atol=1e-6)
