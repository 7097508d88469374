"""bfloat16 Attention: float32 inside, one rounding at the output (issue 26, section 5).

An Attention node on bfloat16 tensors is computed on its inputs widened exactly
to float32; only its results are rounded to bfloat16. So its output is the
float32 computation rounded once, which is the correctly rounded result: the
float64 computation rounded to bfloat16.

ONNX's reference (which wrote the conformance outputs) computes with numpy on
bfloat16 arrays, so every intermediate (Q * scale, the scores, exp, the sum,
the probabilities) is rounded to bfloat16. Its outputs are one or two bfloat16
ulps away from the correctly rounded ones in about a quarter of the elements;
the conformance suite accepts two ulps (`Runner.assert_similar_outputs`), and
that is what these tests hold tilecraft to against it.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import tilecraft as tc

BF16 = np.dtype(ml_dtypes.bfloat16)


def attention_model(elem_type: int, causal: bool) -> onnx.ModelProto:
    shape = [2, 3, 4, 8]  # batch, heads, sequence, head size
    node = helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=int(causal))
    graph = helper.make_graph(
        [node], "attention",
        [helper.make_tensor_value_info(n, elem_type, shape) for n in "QKV"],
        [helper.make_tensor_value_info("Y", elem_type, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many bfloat16 steps apart (same-sign values)."""
    return np.abs(a.view(np.int16).astype(np.int32) - b.view(np.int16).astype(np.int32))


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "causal"])
def case(request):
    causal = request.param
    rng = np.random.default_rng(23)
    # In [0, 1), as the conformance cases' inputs: outputs of one sign, so bfloat16
    # steps between two outputs are counted on their bits.
    feeds = {n: rng.random(size=(2, 3, 4, 8)).astype(BF16) for n in "QKV"}
    y = tc.compile(attention_model(TensorProto.BFLOAT16, causal))(**feeds)
    return causal, feeds, y


def test_the_output_is_the_exact_result_rounded_once(case):
    causal, feeds, y = case
    assert y.dtype == BF16
    exact = ReferenceEvaluator(attention_model(TensorProto.DOUBLE, causal)).run(
        None, {n: a.astype(np.float64) for n, a in feeds.items()}
    )[0]
    # Rounded through float32 as tilecraft's result is; no element is off.
    np.testing.assert_array_equal(ulps(y, exact.astype(np.float32).astype(BF16)), 0)


def test_within_two_ulps_of_the_onnx_reference(case):
    causal, feeds, y = case
    (reference,) = ReferenceEvaluator(attention_model(TensorProto.BFLOAT16, causal)).run(None, feeds)
    assert reference.dtype == BF16
    assert ulps(y, reference).max() <= 2
