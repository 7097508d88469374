"""Weight arrays of the wrong shape or dtype (issue 26, section 5).

A weight store is checked against the module that names it: an array with as
many elements in another shape (a transposed matrix) used to be reshaped and
compute wrong numbers, a wrongly sized one ended in an internal error inside a
reshape. Now each is an error naming the weight, the shape it has and the shape
the module takes, at the op that reads it. The tools' messages are checked by
FileCheck (tests/filecheck/tools/weights-errors*.mlir); these cases are the
Python API's.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft.driver.context import parse_text
from tilecraft.runtime.model import WEIGHT, Port, _bind_weight
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.weights import WeightStore

DENSE = """\
func.func @main(%x: tensor<4x16xf32> {tc.name = "x"}) -> tensor<4x8xf32> {
  %w = graph.weight "w" : tensor<8x16xf32>
  %s = graph.weight "s" : tensor<f32>
  %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %y = graph.mul %d, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
"""

RNG = np.random.default_rng(26)
W = RNG.standard_normal((8, 16)).astype(np.float32)
X = RNG.standard_normal((4, 16)).astype(np.float32)


@pytest.fixture(scope="module")
def module():
    return parse_text(DENSE, "dense.mlir")


def test_the_right_shapes_compute(module):
    model = tc.compile(module, store=WeightStore({"w": W, "s": np.float32(3)}))
    np.testing.assert_allclose(model(X), 3 * X @ W.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "w, words",
    [
        (np.ascontiguousarray(W.T), "is float32[16, 8], the module takes float32[8, 16] (as many elements"),
        (W[:4], "is float32[4, 16], the module takes float32[8, 16]"),
        (W.reshape(-1), "is float32[128], the module takes float32[8, 16]"),
        (W.astype(np.float64), "is float64[8, 16], the module takes float32[8, 16]"),
    ],
    ids=["transposed", "too-few-rows", "flat", "float64"],
)
def test_a_wrong_weight_is_named_at_its_op(module, w, words):
    with pytest.raises(OpError) as raised:
        tc.compile(module, store=WeightStore({"w": w, "s": np.float32(3)}))
    assert str(raised.value).startswith("dense.mlir:2:3: error: weight 'w' ")
    assert words in str(raised.value)


def test_a_one_element_weight_may_differ_in_rank(module):
    """A scalar weight is a one-element buffer: (1,) for tensor<f32> has one order."""
    model = tc.compile(module, store=WeightStore({"w": W, "s": np.full((1,), 2, np.float32)}))
    np.testing.assert_allclose(model(X), 2 * X @ W.T, rtol=1e-5, atol=1e-5)


def test_binding_a_weight_checks_its_shape_not_only_its_size():
    port = Port("w", WEIGHT, (8, 16), np.dtype(np.float32), (8, 16))
    with pytest.raises(ValueError, match=r"weight 'w' is float32\[16, 8\], the module takes float32\[8, 16\]"):
        _bind_weight(port, {"w": np.ascontiguousarray(W.T)})
    np.testing.assert_array_equal(_bind_weight(port, {"w": W}), W)
