"""loop-partition on compiled kernels: split tails in serial and parallel loops give
the numpy result, and the loops it splits run their whole tiles without guards."""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft.driver.context import parse_text
from tilecraft.dialects.loop import ForOp, GuardOp
from tilecraft.frontends import te
from tilecraft.transforms.loop_partition import LoopPartitionPass


def _tiled_scale(m: int, n: int, parallel: bool):
    """y = 2x + 1 on an [m, n] array, rows split by 4, columns by 16 (vectorized)."""
    x = te.placeholder((m, n), name="x")
    y = te.compute((m, n), lambda i, j: x[i, j] * 2.0 + 1.0, name="y")
    s = te.create_schedule(y.op)
    io, jo, ii, ji = s[y].tile(*s[y].op.axis, 4, 16)
    s[y].vectorize(ji)
    if parallel:
        s[y].parallel(io)
    return s, x, y


def _guards(module) -> int:
    return sum(isinstance(op, GuardOp) for op in module.walk())


@pytest.mark.parametrize("m, n", [(13, 37), (8, 32), (3, 5), (17, 16)])
@pytest.mark.parametrize("parallel", [False, True])
def test_split_tails_compute_what_numpy_does(m, n, parallel):
    s, x, y = _tiled_scale(m, n, parallel)
    f = tc.build(s, [x, y])
    a = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32)
    out = np.zeros((m, n), np.float32)
    f(a, out)
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6)


def test_whole_tiles_lose_their_guards():
    """13 x 37 tiled 4 x 16: the row loop's first 3 tiles and the column loop's
    first 2 tiles are whole, so one copy of the body has no guard at all."""
    s, x, y = _tiled_scale(13, 37, parallel=False)
    module = parse_text(str(tc.lower(s, [x, y])))
    assert _guards(module) > 0
    LoopPartitionPass().apply(None, module)
    inner = [op for op in module.walk() if isinstance(op, ForOp) and op.kind.data == "vectorized"]
    unguarded = [loop for loop in inner if not any(isinstance(o, GuardOp) for o in loop.walk())]
    assert unguarded, "no vectorized loop without guards"
    (outer, *_) = [op for op in module.walk() if isinstance(op, ForOp)]
    assert (outer.lb.data, outer.ub.data) == (0, 3)  # rows 0..11: whole tiles


def test_dense_with_a_column_tail_matches_numpy():
    """A KN dense of 100 columns (tiles of 64: one whole, one tail) and 7 rows."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    w = rng.standard_normal((100, 24)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [7, 100])],
        [numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = rng.standard_normal((7, 24)).astype(np.float32)
    np.testing.assert_allclose(tc.compile(model)(x), x @ w.T, rtol=1e-4, atol=1e-4)
