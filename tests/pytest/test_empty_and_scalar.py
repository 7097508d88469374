"""Zero-size tensors and rank-0 (scalar) values through the whole pipeline:
`tc.compile` on graph IR and on ONNX, and saved models.

Empty tensors never reach a kernel: fold-empty-tensors (compile-model's first
stage) makes them constants and folds what reads them; the caller passes and
gets empty numpy arrays. A scalar is a one-element buffer inside, a 0-d array
outside. Expected values come from numpy (and onnxruntime for the ONNX models).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.driver.context import parse_text
from tilecraft.utils.diagnostics import OpError

RNG = np.random.default_rng(8)


def ir(body: str, signature: str) -> object:
    return tc.compile(parse_text(f"func.func @main{signature} {{\n{body}\n}}\n"))


# -- graph IR ------------------------------------------------------------------------


def test_empty_argument_and_result():
    m = ir(
        """  %e = graph.exp %x : (tensor<2x0x4xf32>) -> tensor<2x0x4xf32>
  %r = graph.relu %y : (tensor<3xf32>) -> tensor<3xf32>
  func.return %e, %r : tensor<2x0x4xf32>, tensor<3xf32>""",
        "(%x: tensor<2x0x4xf32>, %y: tensor<3xf32>) -> (tensor<2x0x4xf32>, tensor<3xf32>)",
    )
    assert m.inputs[0][1] == (2, 0, 4) and m.outputs[0][1] == (2, 0, 4)
    y = np.array([-1.0, 2.0, -3.0], np.float32)
    e, r = m(np.zeros((2, 0, 4), np.float32), y)
    assert e.shape == (2, 0, 4) and e.dtype == np.float32
    np.testing.assert_array_equal(r, np.maximum(y, 0))
    with pytest.raises(ValueError, match=r"input 'x' has shape \(2, 1, 4\), expected \(2, 0, 4\)"):
        m(np.zeros((2, 1, 4), np.float32), y)


@pytest.mark.parametrize(
    "op, dtype, expected",
    [
        ("reduce_sum", "f32", lambda x: np.sum(x, axis=1)),
        ("reduce_prod", "f32", lambda x: np.prod(x, axis=1)),
        ("reduce_max", "f32", lambda x: np.max(x, axis=1, initial=-np.inf)),
        ("reduce_min", "f32", lambda x: np.min(x, axis=1, initial=np.inf)),
        ("reduce_mean", "f64", lambda x: np.full((2, 4), np.nan)),
        ("reduce_max", "i32", lambda x: np.max(x, axis=1, initial=np.iinfo(np.int32).min)),
        ("reduce_min", "i64", lambda x: np.min(x, axis=1, initial=np.iinfo(np.int64).max)),
        ("reduce_sum", "i32", lambda x: np.sum(x, axis=1, dtype=np.int32)),
    ],
)
def test_reduction_over_an_empty_axis(op, dtype, expected):
    m = ir(
        f"""  %s = graph.{op} %x {{axes = array<i64: 1>, keepdims = false}} : (tensor<2x0x4x{dtype}>) -> tensor<2x4x{dtype}>
  func.return %s : tensor<2x4x{dtype}>""",
        f"(%x: tensor<2x0x4x{dtype}>) -> tensor<2x4x{dtype}>",
    )
    np_dtype = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}[dtype]
    x = np.zeros((2, 0, 4), np_dtype)
    y = m(x)
    assert y.dtype == np_dtype
    np.testing.assert_array_equal(y, expected(x).astype(np_dtype))


def test_concat_split_and_contractions_with_empty_parts():
    m = ir(
        """  %k = graph.concat %a, %e, %a {axis = 1 : i64} : (tensor<3x2xf32>, tensor<3x0xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  %p, %q, %r = graph.split %k {axis = 1 : i64, sizes = array<i64: 1, 0, 3>} : (tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<3x0xf32>, tensor<3x3xf32>)
  %m = graph.matmul %e, %f : (tensor<3x0xf32>, tensor<0x5xf32>) -> tensor<3x5xf32>
  %d = graph.dense %e, %w, %b : (tensor<3x0xf32>, tensor<5x0xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  func.return %p, %q, %r, %m, %d : tensor<3x1xf32>, tensor<3x0xf32>, tensor<3x3xf32>, tensor<3x5xf32>, tensor<3x5xf32>""",
        "(%a: tensor<3x2xf32>, %e: tensor<3x0xf32>, %f: tensor<0x5xf32>, %w: tensor<5x0xf32>, %b: tensor<5xf32>)"
        " -> (tensor<3x1xf32>, tensor<3x0xf32>, tensor<3x3xf32>, tensor<3x5xf32>, tensor<3x5xf32>)",
    )
    a = RNG.standard_normal((3, 2)).astype(np.float32)
    e, f, w = np.zeros((3, 0), np.float32), np.zeros((0, 5), np.float32), np.zeros((5, 0), np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    p, q, r, mm, d = m(a, e, f, w, b)
    k = np.concatenate([a, e, a], axis=1)
    np.testing.assert_array_equal(p, k[:, :1])
    assert q.shape == (3, 0)
    np.testing.assert_array_equal(r, k[:, 1:])
    np.testing.assert_array_equal(mm, e @ f)
    np.testing.assert_array_equal(d, e @ w.T + b)


def test_an_empty_tensor_that_cannot_be_folded_is_a_diagnostic():
    module = parse_text(
        """func.func @main(%x: tensor<1x0x4x4xf32>, %w: tensor<2x0x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %y = graph.conv2d %x, %w, %b : (tensor<1x0x4x4xf32>, tensor<2x0x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}"""
    )
    with pytest.raises(OpError, match=r"check-graph-level: 'graph.conv2d' on an empty tensor \(tensor<1x0x4x4xf32>\)"):
        tc.compile(module)


def test_compile_model_starts_with_fold_empty_tensors():
    m = ir("  func.return %x : tensor<2xf32>", "(%x: tensor<2xf32>) -> tensor<2xf32>")
    assert m.passes[:2] == ["fold-empty-tensors", "check-graph-level"]


def test_scalar_arguments_and_results():
    m = ir(
        """  %s = graph.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %t = graph.reduce_sum %v {keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  %r = graph.reshape %s {shape = array<i64>} : (tensor<f32>) -> tensor<f32>
  %u = graph.mul %v, %a : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  func.return %r, %t, %u : tensor<f32>, tensor<f32>, tensor<3x4xf32>""",
        "(%a: tensor<f32>, %b: tensor<f32>, %v: tensor<3x4xf32>) -> (tensor<f32>, tensor<f32>, tensor<3x4xf32>)",
    )
    a, b = np.array(1.5, np.float32), np.array(-4.0, np.float32)
    v = RNG.standard_normal((3, 4)).astype(np.float32)
    r, t, u = m(a, b, v)
    assert r.shape == () and t.shape == () and isinstance(r, np.ndarray)
    assert float(r) == -2.5
    np.testing.assert_allclose(t, v.sum(), rtol=1e-5)
    np.testing.assert_array_equal(u, v * a)
    with pytest.raises(ValueError, match=r"input 'a' has shape \(1,\), expected \(\)"):
        m(np.array([1.5], np.float32), b, v)


def test_python_numbers_for_scalar_inputs():
    m = ir(
        """  %s = graph.exp %a : (tensor<f32>) -> tensor<f32>
  %t = graph.neg %n : (tensor<i32>) -> tensor<i32>
  func.return %s, %t : tensor<f32>, tensor<i32>""",
        "(%a: tensor<f32>, %n: tensor<i32>) -> (tensor<f32>, tensor<i32>)",
    )
    s, t = m(0.1, 3)  # rounded to float32; exactly an int32
    assert s.dtype == np.float32 and s == np.exp(np.float32(0.1))
    assert t.dtype == np.int32 and t == -3
    with pytest.raises(ValueError, match="input 'n' has dtype float64, expected int32"):
        m(0.1, 2.5)
    with pytest.raises(ValueError, match="input 'n' has dtype int64, expected int32"):
        m(0.1, 2**40)


def test_saved_model_with_empty_and_scalar_ports(tmp_path):
    m = ir(
        """  %s = graph.reduce_sum %x {keepdims = false} : (tensor<0x3xf32>) -> tensor<f32>
  %e = graph.neg %x : (tensor<0x3xf32>) -> tensor<0x3xf32>
  func.return %s, %e : tensor<f32>, tensor<0x3xf32>""",
        "(%x: tensor<0x3xf32>) -> (tensor<f32>, tensor<0x3xf32>)",
    )
    m.save(tmp_path / "model")
    loaded = tc.runtime.load(tmp_path / "model")
    s, e = loaded(np.zeros((0, 3), np.float32))
    assert s.shape == () and float(s) == 0.0
    assert e.shape == (0, 3)


# -- ONNX --------------------------------------------------------------------------------


def onnx_model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def value(name: str, shape, elem=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def check_against_onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    got = tc.compile(model)(**feeds)
    got = list(got) if isinstance(got, tuple) else [got]
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    return got


def test_onnx_empty_input_slice_split_and_concat():
    init = [
        numpy_helper.from_array(np.array([3], np.int64), "starts"),
        numpy_helper.from_array(np.array([1], np.int64), "ends"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.array([2, 0, 2], np.int64), "split"),
    ]
    nodes = [
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["empty"]),  # rows 3..1: none
        helper.make_node("Concat", ["x", "empty", "e"], ["k"], axis=0),
        helper.make_node("Split", ["k", "split"], ["s0", "s1", "s2"], axis=0),
        helper.make_node("ReduceSum", ["e"], ["total"], keepdims=0),
        helper.make_node("Shape", ["e"], ["shape"]),
    ]
    model = onnx_model(
        nodes,
        [value("x", [4, 3]), value("e", [0, 3])],
        [value("s0", None), value("s1", None), value("s2", None), value("empty", None),
         value("total", None), value("shape", None, TensorProto.INT64)],
        init,
    )
    feeds = {"x": RNG.standard_normal((4, 3)).astype(np.float32), "e": np.zeros((0, 3), np.float32)}
    _, s1, _, empty, total, shape = check_against_onnxruntime(model, feeds)
    assert s1.shape == (0, 3) and empty.shape == (0, 3) and total.shape == ()
    np.testing.assert_array_equal(shape, [0, 3])


@pytest.mark.parametrize(
    "equation, shapes",
    [("i,i", [(5,)]), ("i,i->", [(5,)]), ("ij->", [(3, 4)]), ("ij,ij->", [(3, 4)]), ("ii->", [(4, 4)])],
)
def test_onnx_einsum_to_a_scalar(equation, shapes):
    terms = equation.split("->")[0].split(",")
    shapes = shapes * len(terms)
    names = [f"x{n}" for n in range(len(terms))]
    model = onnx_model(
        [helper.make_node("Einsum", names, ["y"], equation=equation)],
        [value(n, s) for n, s in zip(names, shapes)],
        [value("y", [])],
    )
    feeds = {n: RNG.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    (y,) = check_against_onnxruntime(model, feeds)
    assert y.shape == ()
    np.testing.assert_allclose(y, np.einsum(equation, *feeds.values()), rtol=1e-5)


def test_onnx_scalar_results_and_inputs():
    init = [numpy_helper.from_array(np.array(2, np.int64), "two")]
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["dot"]),
        helper.make_node("ReduceMax", ["m"], ["top"], keepdims=0),
        helper.make_node("Gather", ["m", "two"], ["row"], axis=0),
        helper.make_node("Gather", ["m", "i"], ["column"], axis=1),
        helper.make_node("Gather", ["a", "i"], ["element"], axis=0),
        helper.make_node("Mul", ["dot", "s"], ["scaled"]),
    ]
    model = onnx_model(
        nodes,
        [value("a", [4]), value("b", [4]), value("m", [3, 4]), value("i", [], TensorProto.INT64), value("s", [])],
        [value(n, None) for n in ("dot", "top", "row", "column", "element", "scaled")],
        init,
    )
    feeds = {
        "a": RNG.standard_normal(4).astype(np.float32),
        "b": RNG.standard_normal(4).astype(np.float32),
        "m": RNG.standard_normal((3, 4)).astype(np.float32),
        "i": np.array(-1, np.int64),
        "s": np.array(3.0, np.float32),
    }
    dot, top, row, column, element, scaled = check_against_onnxruntime(model, feeds)
    assert dot.shape == top.shape == element.shape == scaled.shape == ()
    assert row.shape == (4,) and column.shape == (3,)


def test_reference_evaluator_agrees_on_empty_reductions():
    """The graph evaluator (the oracle, and the folders' meaning) gives the same
    empty-set values as the compiled model, and names the undefined integer mean."""
    from tilecraft.dialects.graph_reference import evaluate
    from tilecraft.utils.diagnostics import EvaluationError

    text = """func.func @main(%x: tensor<2x0x3xi32>) -> (tensor<2x3xi32>, tensor<2x1x3xi32>, tensor<2x3xi32>) {
  %a = graph.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0x3xi32>) -> tensor<2x3xi32>
  %b = graph.reduce_prod %x {axes = array<i64: 1>} : (tensor<2x0x3xi32>) -> tensor<2x1x3xi32>
  %c = graph.reduce_min %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0x3xi32>) -> tensor<2x3xi32>
  func.return %a, %b, %c : tensor<2x3xi32>, tensor<2x1x3xi32>, tensor<2x3xi32>
}"""
    x = np.zeros((2, 0, 3), np.int32)
    main = next(op for op in parse_text(text).walk() if op.name == "func.func")
    expected = evaluate(main, None, [x])
    for got, want in zip(tc.compile(parse_text(text))(x), expected):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(expected[0], np.full((2, 3), np.iinfo(np.int32).min))
    mean = parse_text(text.replace("graph.reduce_max", "graph.reduce_mean"))
    with pytest.raises(EvaluationError, match="graph.reduce_mean of no elements of int32 is undefined"):
        evaluate(next(op for op in mean.walk() if op.name == "func.func"), None, [x])
