"""Models whose inputs have sizes known only when they run (ONNX `dim_param`),
compiled once by `tc.compile` and called at every size: results against
onnxruntime at batch sizes 1, primes and multiples of the row tile (6) +-1, no
compilation at any call, the sizes checked across inputs (a ValueError naming
the input and the dimension), `input_shapes=` still specializing, and the ops
that do not take such sizes yet saying how to compile for one shape."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc
from tilecraft.backends.llvm.compile import modules_built
from tilecraft.frontends.onnx.importer import OnnxImportError

BATCHES = [1, 2, 5, 6, 7, 13, 64]


def _mlp(batch_dim="batch", k: int = 64, hidden: int = 96, classes: int = 10, skip: bool = True):
    """MatMul + Add + Relu + MatMul (+ Add of a skip input): x[batch, k], s[batch, classes]."""
    rng = np.random.default_rng(0)
    weights = {
        "w1": rng.standard_normal((k, hidden)).astype("float32") / 8,
        "b1": rng.standard_normal(hidden).astype("float32"),
        "w2": rng.standard_normal((hidden, classes)).astype("float32") / 8,
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["z" if skip else "y"]),
    ] + ([helper.make_node("Add", ["z", "s"], ["y"])] if skip else [])
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch_dim, k])]
        + ([helper.make_tensor_value_info("s", TensorProto.FLOAT, [batch_dim, classes])] if skip else []),
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch_dim, classes])],
        [numpy_helper.from_array(v, n) for n, v in weights.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def mlp():
    model = _mlp()
    return model, tc.compile(model), ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _inputs(batch: int):
    rng = np.random.default_rng(batch)
    return rng.standard_normal((batch, 64)).astype("float32"), rng.standard_normal((batch, 10)).astype("float32")


def test_one_compile_for_every_batch(mlp):
    _, m, session = mlp
    assert [str(d) for d in m.inputs[0][1]] == ["batch", "64"]
    before = modules_built()
    for batch in BATCHES:
        x, s = _inputs(batch)
        expected = session.run(None, {"x": x, "s": s})[0]
        np.testing.assert_allclose(m(x, s), expected, rtol=1e-4, atol=1e-4, err_msg=f"batch {batch}")
    assert modules_built() == before


def test_sizes_that_disagree_are_refused(mlp):
    _, m, _ = mlp
    x, s = _inputs(3)
    with pytest.raises(ValueError, match=r"input 's': dimension 0 is 4, but batch is 3"):
        m(x, np.zeros((4, 10), np.float32))
    with pytest.raises(ValueError, match=r"input 'x': dimension 1 is 63, expected 64"):
        m(np.zeros((3, 63), np.float32), s)
    with pytest.raises(ValueError, match=r"input 'x': dimension 0 \(batch\) is 0; a size is at least 1"):
        m(np.zeros((0, 64), np.float32), np.zeros((0, 10), np.float32))


def test_input_shapes_still_specialize():
    m = tc.compile(_mlp(), input_shapes={"x": (3, 64), "s": (3, 10)})
    assert m.inputs[0][1] == (3, 64) and "?" not in m.ir
    x, s = _inputs(3)
    session = ort.InferenceSession(_mlp().SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(m(x, s), session.run(None, {"x": x, "s": s})[0], rtol=1e-4, atol=1e-4)


def test_an_anonymous_size_gets_a_name_of_its_own():
    # (`?` sizes of different inputs are independent: adding two of them is refused)
    model = _mlp(batch_dim=None, skip=False)
    m = tc.compile(model)
    assert [str(d) for d in m.inputs[0][1]] == ["x_0", "64"]
    x, _ = _inputs(5)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(m(x), session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)
    with pytest.raises(OnnxImportError, match=r"shapes \(x_0, 10\) and \(s_0, 10\) do not broadcast"):
        tc.compile(_mlp(batch_dim=None))


def test_an_op_without_symbolic_sizes_says_how_to_fix_the_shape():
    graph = helper.make_graph(
        [helper.make_node("Squeeze", ["x", "axes"], ["y"], name="squeeze")], "c",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match=r"graph.squeeze does not take symbolic sizes.*input_shapes=\{'x': \(1, 1, 8\)\}"):
        tc.compile(model)
    assert tc.compile(model, input_shapes={"x": (2, 1, 8)}).inputs[0][1] == (2, 1, 8)


def _cnn():
    """conv 3x3 + BN + ReLU, max pool, a residual block (3x3, 3x3, add), a depthwise
    3x3 + ReLU6, global average pool, flatten, Gemm: ResNet's and MobileNet's ops
    with the batch a dim_param."""
    rng = np.random.default_rng(4)

    def const(name, *shape, scale=0.2):
        return numpy_helper.from_array((scale * rng.standard_normal(shape)).astype(np.float32), name)

    init = [const("w1", 16, 3, 3, 3), const("w2", 16, 16, 3, 3), const("w3", 16, 16, 3, 3), const("fc", 10, 16),
            const("fcb", 10), const("wd", 16, 1, 3, 3), numpy_helper.from_array(np.linspace(0.5, 1.5, 16).astype(np.float32), "g"),
            const("b", 16), const("mu", 16), numpy_helper.from_array(np.linspace(1, 2, 16).astype(np.float32), "var"),
            numpy_helper.from_array(np.float32(0), "zero"), numpy_helper.from_array(np.float32(6), "six")]  # fmt: skip
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], **conv, strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c1", "g", "b", "mu", "var"], ["n1"]),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], **conv),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], **conv),
        helper.make_node("Add", ["c3", "p1"], ["a3"]),
        helper.make_node("Relu", ["a3"], ["r3"]),
        helper.make_node("Conv", ["r3", "wd"], ["d4"], **conv, group=16),
        helper.make_node("Clip", ["d4", "zero", "six"], ["r4"]),
        helper.make_node("GlobalAveragePool", ["r4"], ["g3"]),
        helper.make_node("Flatten", ["g3"], ["f3"]),
        helper.make_node("Gemm", ["f3", "fc", "fcb"], ["y"], transB=1),
    ]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 20, 20])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])], init)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_cnn_of_any_batch():
    model = _cnn()
    m = tc.compile(model)
    assert [str(d) for d in m.inputs[0][1]] == ["batch", "3", "20", "20"]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    before = modules_built()
    for batch in (1, 2, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 20, 20)).astype(np.float32)
        np.testing.assert_allclose(m(x), session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4, err_msg=f"batch {batch}")
    assert modules_built() == before


def test_the_accelerator_refuses_symbolic_sizes():
    with pytest.raises(ValueError, match=r"target 'accel' compiles static shapes.*\(batch\)"):
        tc.compile(_mlp(), target="accel")


def test_a_saved_model_takes_every_size(mlp, tmp_path):
    import json

    from tilecraft.runtime import load
    from tilecraft.runtime.saved import SavedModelError

    _, m, session = mlp
    m.save(tmp_path / "m")
    loaded = load(tmp_path / "m")
    assert [str(d) for d in loaded.inputs[0][1]] == ["batch", "64"]
    for batch in (1, 7, 13):
        x, s = _inputs(batch)
        np.testing.assert_allclose(loaded(x, s), session.run(None, {"x": x, "s": s})[0], rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match=r"input 's': dimension 0 is 4, but batch is 3"):
        loaded(_inputs(3)[0], np.zeros((4, 10), np.float32))
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    manifest["ports"][0]["shape"][0] = "batch +"
    (tmp_path / "m" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SavedModelError, match=r"key 'ports\[0\].shape' of port 'x': in size 'batch \+'"):
        load(tmp_path / "m")


def test_a_profile_at_any_size(mlp):
    _, m, _ = mlp
    for batch in (1, 9):
        profile = m.profile(*_inputs(batch), repeat=2)
        assert [k for k, _ in profile] == m.kernel_calls
        assert all(t >= 0 for _, t in profile)


def test_what_needs_static_shapes_says_so(mlp, tmp_path):
    _, m, _ = mlp
    x, s = _inputs(2)
    for call in (lambda: m.counters(x, s),):
        with pytest.raises(NotImplementedError, match="sizes known only when it runs is not supported yet"):
            call()


@pytest.mark.parametrize("shape", [["batch", 4], ["batch", 37], [3, "n"], ["b", 5, "n"]])
def test_elementwise_kernels_of_any_symbolic_axis(shape):
    # The injective schedule with a symbolic axis: static trailing axes vectorized,
    # or a symbolic last axis in vector tiles (the last one guarded).
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])  # fmt: skip
    m = tc.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    for size in (1, 17, 40):
        x = np.random.default_rng(size).standard_normal([size if isinstance(d, str) else d for d in shape])
        x = x.astype(np.float32)
        np.testing.assert_allclose(m(x), np.maximum(x, 0) + x)


def test_tilecraft_run_takes_input_files(tmp_path, capsys):
    import onnx

    from tilecraft.tools import run

    model = _mlp(skip=False)
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    x, _ = _inputs(5)
    np.save(tmp_path / "x.npy", x)
    assert run.main([str(path), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(tmp_path / "y.npy")]) == 0
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)
    assert run.main([str(path)]) == 1
    assert "random inputs need sizes" in capsys.readouterr().err


def test_a_classifier_as_pytorch_exports_it():
    # Flatten, then Gemm with transB (torch.onnx.export with dynamic_axes={"x": {0: "batch_size"}})
    rng = np.random.default_rng(3)
    init = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
            for name, shape in (("fc1.weight", (32, 48)), ("fc1.bias", (32,)), ("fc2.weight", (10, 32)), ("fc2.bias", (10,)))]  # fmt: skip
    nodes = [
        helper.make_node("Flatten", ["x"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "fc1.weight", "fc1.bias"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["a"]),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["y"], transB=1),
    ]
    graph = helper.make_graph(nodes, "classifier", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch_size", 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch_size", 10])], init)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m = tc.compile(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 3, 9):
        x = rng.standard_normal((batch, 3, 4, 4)).astype(np.float32)
        np.testing.assert_allclose(m(x), session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def bert():
    # One BERT encoder layer (hidden 64, 2 heads, FFN 256) with `batch` and `seq`:
    # head reshapes that copy those extents, attention's batch matmuls over a
    # symbolic row and column count, softmax over a symbolic row, layer norms.
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
    from models import bert_layer

    model = bert_layer(seq="seq", hidden=64, heads=2, ffn=256, batch="batch")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return tc.compile(model), session


@pytest.mark.parametrize("batch, seq", [(1, 1), (1, 7), (3, 16), (2, 33), (1, 65)])
def test_a_bert_layer_of_any_batch_and_sequence(bert, batch, seq):
    m, session = bert
    assert [str(d) for d in m.inputs[0][1]] == ["batch", "seq", "64"]
    x = np.random.default_rng(seq).standard_normal((batch, seq, 64)).astype(np.float32)
    before = modules_built()
    np.testing.assert_allclose(m(x), session.run(None, {"input": x})[0], rtol=1e-4, atol=1e-4)
    assert modules_built() == before


@pytest.mark.parametrize(
    "node",
    [
        helper.make_node("Softmax", ["x"], ["y"], axis=0),
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=0),
        helper.make_node("ReduceMean", ["x"], ["y"], axes=[0], keepdims=1),
        helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0]),
    ],
    ids=lambda n: n.op_type,
)
def test_row_kernels_over_a_symbolic_axis(node):
    # Reductions whose row is the symbolic axis: its length divides the mean and
    # the variance when the kernel runs; loops over it end at the size.
    init = [numpy_helper.from_array(np.linspace(0.5, 1.5, 8).astype(np.float32), "g"),
            numpy_helper.from_array(np.linspace(-1, 1, 8).astype(np.float32), "b")]  # fmt: skip
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], init)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m = tc.compile(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for size in (1, 17, 40):
        x = np.random.default_rng(size).standard_normal((size, 8)).astype(np.float32)
        np.testing.assert_allclose(m(x), session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_a_conv_over_a_symbolic_image_size_is_refused_by_name():
    from tilecraft.utils.diagnostics import OpError

    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OpError, match=r"'graph.conv2d' has sizes known only when it runs \(h, w\), which its lowering cannot take yet"):
        tc.compile(model)


def test_shapes_computed_from_symbolic_sizes_as_exporters_write_them():
    # torch.onnx's `x.view(x.size(0), x.size(1), heads, -1)` and `.view(-1, 64)`:
    # Shape -> Gather -> Unsqueeze -> Concat (-> Mul) -> Reshape, folded at import
    # into sizes (`batch`, `seq`, `batch * seq`), which the reshapes resolve.
    def const(name, value):
        return numpy_helper.from_array(np.array(value, np.int64), name)

    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        helper.make_node("Gather", ["s", "i1"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"]),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
        helper.make_node("Concat", ["b1", "n1", "heads"], ["split"], axis=0),
        helper.make_node("Reshape", ["x", "split"], ["h"]),
        helper.make_node("Transpose", ["h"], ["t"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["t"], ["u"], perm=[0, 2, 1, 3]),
        helper.make_node("Cast", ["n1"], ["n64"], to=TensorProto.INT64),
        helper.make_node("Concat", ["b1", "n64", "width"], ["merge"], axis=0),
        helper.make_node("Reshape", ["u", "merge"], ["g"]),
        helper.make_node("Mul", ["b1", "n1"], ["rows"]),
        helper.make_node("Concat", ["rows", "width"], ["flat"], axis=0),
        helper.make_node("Reshape", ["x", "flat"], ["f"]),
    ]
    init = [const("i0", 0), const("i1", 1), const("ax0", [0]), const("heads", [2, -1]), const("width", [64])]

    def model_of(outputs):
        graph = helper.make_graph(nodes, "views", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 64])],
                                  [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs], init)  # fmt: skip
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    model = model_of(["t", "g"])
    m = tc.compile(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, seq in ((1, 1), (2, 5)):
        x = np.random.default_rng(seq).standard_normal((batch, seq, 64)).astype(np.float32)
        for got, expected in zip(m(x), session.run(None, {"x": x})):
            np.testing.assert_array_equal(got, expected)
    # Rows of `batch * seq` (`.view(-1, 64)`) import; the kernel does not take the
    # merged size yet (it would divide by `seq` to find a row): an error naming it.
    from tilecraft.utils.diagnostics import OpError

    with pytest.raises(OpError, match=r"'graph.reshape' has sizes known only when it runs \(batch, seq\)"):
        tc.compile(model_of(["f"]))
