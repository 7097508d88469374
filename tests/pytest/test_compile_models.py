"""Whole models through `tilecraft.compile`, compared with onnxruntime.

The models are built with onnx.helper here (small, random weights, fixed seed):
an MLP, a CNN with batch_norm and pooling, a residual block, a MobileNet block
(depthwise convs, ReLU6) and a MobileNet-v3 one (HardSwish, squeeze-excitation),
an Inception block (branches, a grouped conv, Concat), a ResNeXt block (a grouped
conv of whole channel blocks), a transformer encoder layer (attention, layer_norm,
gelu), a Gather embedding, a model with scalar (rank-0) inputs and outputs, one
whose outputs are its input and a weight, a classifier head ending in ArgMax, an
FPN-style upsampling (Resize) and a UNet-style decoder step (ConvTranspose). Each is
compiled with fusion on and off; both must give onnxruntime's numbers. Then the
runtime's own contract: save/load round trip and input checking. A graph module
written by hand runs too, so the runtime is tested without the ONNX frontend.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import onnx  # noqa: E402 - onnx and onnxruntime are test extras: missing is a failure
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import tilecraft as tc  # noqa: E402
from tilecraft.runtime import load  # noqa: E402

RNG = np.random.default_rng(7)


def weights(**arrays):
    return [numpy_helper.from_array(np.asarray(v), k) for k, v in arrays.items()]


def randn(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def model(nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, "m", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def reference(m, feeds):
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def mlp():
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["m"]),
        helper.make_node("Add", ["m", "b2"], ["a"]),
        helper.make_node("Softmax", ["a"], ["y"], axis=-1),
    ]
    inits = weights(w1=randn(64, 32, scale=0.2), b1=randn(64), w2=randn(64, 10, scale=0.2), b2=randn(10))
    return model(nodes, [value("x", [8, 32])], [value("y", [8, 10])], inits), {"x": randn(8, 32)}


def cnn():
    c = 8
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"], epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("AveragePool", ["p"], ["q"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["q"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    inits = weights(
        w=randn(c, 3, 3, 3, scale=0.3), b=randn(c), s=randn(c), bb=randn(c), m=randn(c),
        v=np.abs(randn(c)) + 0.5, fw=randn(5, c), fb=randn(5),
    )
    return model(nodes, [value("x", [2, 3, 16, 16])], [value("y", [2, 5])], inits), {"x": randn(2, 3, 16, 16)}


def residual():
    c = 8
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "x"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    inits = weights(w1=randn(c, c, 3, 3, scale=0.2), w2=randn(c, c, 3, 3, scale=0.2), b2=randn(c))
    return model(nodes, [value("x", [1, c, 10, 10])], [value("y", [1, c, 10, 10])], inits), {"x": randn(1, c, 10, 10)}


def bn(name, c):
    """A BatchNormalization's four initializers for `c` channels."""
    return {f"{name}_s": randn(c), f"{name}_b": randn(c), f"{name}_m": randn(c),
            f"{name}_v": np.abs(randn(c)) + 0.5}  # fmt: skip


def bn_node(x, name, y):
    return helper.make_node("BatchNormalization", [x, f"{name}_s", f"{name}_b", f"{name}_m", f"{name}_v"], [y])


def mobilenet_block():
    """MobileNet-v1/v2 style: depthwise 3x3 + BN + ReLU6, pointwise 1x1 + BN + ReLU6,
    a strided depthwise conv, global pooling; 32 channels, so the convs are blocked."""
    nodes = [
        helper.make_node("Conv", ["x", "dw1"], ["d1"], group=32, pads=[1, 1, 1, 1]),
        bn_node("d1", "bn1", "n1"),
        helper.make_node("Clip", ["n1", "zero", "six"], ["r1"]),
        helper.make_node("Conv", ["r1", "pw"], ["p1"]),
        bn_node("p1", "bn2", "n2"),
        helper.make_node("Clip", ["n2", "zero", "six"], ["r2"]),
        helper.make_node("Conv", ["r2", "dw2", "db2"], ["d2"], group=64, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["d2"], ["r3"]),
        helper.make_node("GlobalAveragePool", ["r3"], ["y"]),
    ]
    inits = weights(
        dw1=randn(32, 1, 3, 3, scale=0.5), pw=randn(64, 32, 1, 1, scale=0.2), dw2=randn(64, 1, 3, 3, scale=0.5),
        db2=randn(64), zero=np.array(0.0, np.float32), six=np.array(6.0, np.float32), **bn("bn1", 32), **bn("bn2", 64),
    )  # fmt: skip
    return model(nodes, [value("x", [1, 32, 14, 14])], [value("y", [1, 64, 1, 1])], inits), {"x": randn(1, 32, 14, 14)}


def mobilenet_v3_block():
    """MobileNet-v3 style: 1x1 conv + HardSwish, depthwise 3x3, squeeze-excitation
    (global pool, 1x1 convs, HardSigmoid gate broadcast over the map)."""
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"]),
        helper.make_node("HardSwish", ["a"], ["h"]),
        helper.make_node("Conv", ["h", "dw"], ["d"], group=32, pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["d"], ["g"]),
        helper.make_node("Conv", ["g", "s1", "sb1"], ["s"]),
        helper.make_node("Relu", ["s"], ["sr"]),
        helper.make_node("Conv", ["sr", "s2", "sb2"], ["e"]),
        helper.make_node("HardSigmoid", ["e"], ["gate"], alpha=1 / 6, beta=0.5),
        helper.make_node("Mul", ["d", "gate"], ["y"]),
    ]
    inits = weights(w1=randn(32, 16, 1, 1, scale=0.3), dw=randn(32, 1, 3, 3, scale=0.3), s1=randn(8, 32, 1, 1, scale=0.3),
                    sb1=randn(8), s2=randn(32, 8, 1, 1, scale=0.3), sb2=randn(32))  # fmt: skip
    m = model(nodes, [value("x", [1, 16, 10, 10])], [value("y", [1, 32, 10, 10])], inits)
    m.opset_import[0].version = 14  # HardSwish
    return m, {"x": randn(1, 16, 10, 10)}


def inception_block():
    """Inception-style branches joined by Concat: 1x1; 1x1 then a grouped 3x3;
    max pool then 1x1."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["a"]),
        helper.make_node("Conv", ["x", "w2", "b2"], ["b0"]),
        helper.make_node("Relu", ["b0"], ["b1r"]),
        helper.make_node("Conv", ["b1r", "w3"], ["b"], group=2, pads=[1, 1, 1, 1]),
        helper.make_node("MaxPool", ["x"], ["c0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["c0", "w4"], ["c"]),
        helper.make_node("Concat", ["a", "b", "c"], ["cat"], axis=1),
        helper.make_node("Relu", ["cat"], ["y"]),
    ]
    inits = weights(
        w1=randn(16, 32, 1, 1, scale=0.2), b1=randn(16), w2=randn(16, 32, 1, 1, scale=0.2), b2=randn(16),
        w3=randn(32, 8, 3, 3, scale=0.2), w4=randn(16, 32, 1, 1, scale=0.2),
    )  # fmt: skip
    return model(nodes, [value("x", [1, 32, 12, 12])], [value("y", [1, 64, 12, 12])], inits), {"x": randn(1, 32, 12, 12)}


def resnext_block():
    """ResNeXt-style bottleneck: 1x1, a 3x3 conv of 4 groups of 16 channels (whole
    blocks, so it runs blocked), 1x1, residual add."""
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"]),
        helper.make_node("Relu", ["a"], ["ar"]),
        helper.make_node("Conv", ["ar", "w2", "b2"], ["g"], group=4, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["g"], ["gr"]),
        helper.make_node("Conv", ["gr", "w3"], ["c"]),
        helper.make_node("Add", ["c", "x"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    inits = weights(w1=randn(64, 64, 1, 1, scale=0.15), w2=randn(64, 16, 3, 3, scale=0.1), b2=randn(64),
                    w3=randn(64, 64, 1, 1, scale=0.15))  # fmt: skip
    return model(nodes, [value("x", [1, 64, 10, 10])], [value("y", [1, 64, 10, 10])], inits), {"x": randn(1, 64, 10, 10)}


def scalars():
    """Rank-0 values: a scalar input, a reduction over everything (keepdims=0) that
    feeds a Div and is an output itself."""
    nodes = [
        helper.make_node("Mul", ["x", "k"], ["m"]),
        helper.make_node("ReduceSum", ["m"], ["s"], keepdims=0),
        helper.make_node("Div", ["m", "s"], ["y"]),
    ]
    feeds = {"x": np.abs(randn(3, 8)) + 0.1, "k": np.array(2.5, np.float32)}
    return model(nodes, [value("x", [3, 8]), value("k", [])], [value("y", [3, 8]), value("s", [])], []), feeds


def passthrough():
    """Outputs nothing computes: the input itself (Identity) and a weight."""
    nodes = [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Relu", ["x"], ["r"])]
    inits = weights(c=randn(2, 3))
    outputs = [value("y", [2, 3]), value("c", [2, 3]), value("r", [2, 3])]
    return model(nodes, [value("x", [2, 3])], outputs, inits), {"x": randn(2, 3)}


def classifier_head():
    """Gemm, then ArgMax over the classes (int64 labels), and the scores."""
    nodes = [helper.make_node("Gemm", ["x", "w"], ["s"], transB=1),
             helper.make_node("ArgMax", ["s"], ["y"], axis=1, keepdims=0)]  # fmt: skip
    outputs = [value("y", [4], TensorProto.INT64), value("s", [4, 10])]
    return model(nodes, [value("x", [4, 16])], outputs, weights(w=randn(10, 16))), {"x": randn(4, 16)}


def upsample():
    """FPN-style: a coarse map upsampled 2x (nearest) and added to a fine one, then
    resized bilinearly to a given size."""
    nodes = [
        helper.make_node("Conv", ["coarse", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Resize", ["c", "", "sc"], ["u"], mode="nearest"),
        helper.make_node("Add", ["u", "fine"], ["s"]),
        helper.make_node("Resize", ["s", "", "", "sz"], ["y"], mode="linear"),
    ]
    inits = weights(w=randn(16, 16, 3, 3, scale=0.1), sc=np.array([1, 1, 2, 2], np.float32),
                    sz=np.array([1, 16, 13, 19], np.int64))  # fmt: skip
    inputs = [value("coarse", [1, 16, 5, 6]), value("fine", [1, 16, 10, 12])]
    m = model(nodes, inputs, [value("y", [1, 16, 13, 19])], inits)
    m.opset_import[0].version = 18
    return m, {"coarse": randn(1, 16, 5, 6), "fine": randn(1, 16, 10, 12)}


def decoder():
    """A UNet-style decoder step: ConvTranspose 2x up (32 -> 16 channels, blocked),
    concatenated with a skip connection, conv, relu."""
    nodes = [
        helper.make_node("ConvTranspose", ["x", "wt", "bt"], ["u"], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
        helper.make_node("Concat", ["u", "skip"], ["c"], axis=1),
        helper.make_node("Conv", ["c", "w"], ["v"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["v"], ["y"]),
    ]
    inits = weights(wt=randn(32, 16, 3, 3, scale=0.1), bt=randn(16), w=randn(16, 32, 3, 3, scale=0.1))
    inputs = [value("x", [1, 32, 6, 7]), value("skip", [1, 16, 12, 14])]
    return model(nodes, inputs, [value("y", [1, 16, 12, 14])], inits), {"x": randn(1, 32, 6, 7), "skip": randn(1, 16, 12, 14)}


def encoder_layer():
    s, d, h = 16, 32, 4
    dh = d // h
    nodes = []

    def proj(name, src):
        nodes.append(helper.make_node("MatMul", [src, f"w{name}"], [f"{name}0"]))
        nodes.append(helper.make_node("Add", [f"{name}0", f"b{name}"], [f"{name}1"]))
        nodes.append(helper.make_node("Reshape", [f"{name}1", "heads"], [f"{name}2"]))

    for name in "qkv":
        proj(name, "x")
    nodes += [
        helper.make_node("Transpose", ["q2"], ["q3"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k2"], ["k3"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v2"], ["v3"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q3", "k3"], ["att0"]),
        helper.make_node("Div", ["att0", "scale"], ["att1"]),
        helper.make_node("Softmax", ["att1"], ["att2"], axis=-1),
        helper.make_node("MatMul", ["att2", "v3"], ["ctx0"]),
        helper.make_node("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx1", "flat"], ["ctx2"]),
        helper.make_node("MatMul", ["ctx2", "wo"], ["o0"]),
        helper.make_node("Add", ["o0", "bo"], ["o1"]),
        helper.make_node("Add", ["o1", "x"], ["res1"]),
        helper.make_node("LayerNormalization", ["res1", "ln1w", "be1"], ["ln1"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["ln1", "wf1"], ["f0"]),
        helper.make_node("Add", ["f0", "bf1"], ["f1"]),
        # gelu as ONNX exporters write it: x * 0.5 * (1 + erf(x / sqrt(2)))
        helper.make_node("Div", ["f1", "sqrt2"], ["g0"]),
        helper.make_node("Erf", ["g0"], ["g1"]),
        helper.make_node("Add", ["g1", "one"], ["g2"]),
        helper.make_node("Mul", ["f1", "g2"], ["g3"]),
        helper.make_node("Mul", ["g3", "half"], ["g4"]),
        helper.make_node("MatMul", ["g4", "wf2"], ["f2"]),
        helper.make_node("Add", ["f2", "bf2"], ["f3"]),
        helper.make_node("Add", ["f3", "ln1"], ["res2"]),
        helper.make_node("LayerNormalization", ["res2", "g2w", "be2"], ["y"], axis=-1, epsilon=1e-5),
    ]
    inits = weights(
        wq=randn(d, d, scale=0.2), bq=randn(d), wk=randn(d, d, scale=0.2), bk=randn(d),
        wv=randn(d, d, scale=0.2), bv=randn(d), wo=randn(d, d, scale=0.2), bo=randn(d),
        wf1=randn(d, 4 * d, scale=0.2), bf1=randn(4 * d), wf2=randn(4 * d, d, scale=0.1), bf2=randn(d),
        ln1w=randn(d), be1=randn(d), g2w=randn(d), be2=randn(d),
        heads=np.array([1, s, h, dh], np.int64), flat=np.array([1, s, d], np.int64),
        scale=np.array(np.sqrt(dh), np.float32), sqrt2=np.array(np.sqrt(2.0), np.float32),
        one=np.array(1.0, np.float32), half=np.array(0.5, np.float32),
    )
    return model(nodes, [value("x", [1, s, d])], [value("y", [1, s, d])], inits), {"x": randn(1, s, d)}


def embedding():
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["e"], axis=0),
        helper.make_node("Add", ["e", "pos"], ["p"]),
        helper.make_node("ReduceMean", ["p"], ["y"], axes=[1], keepdims=0),
    ]
    inits = weights(table=randn(50, 16), pos=randn(6, 16))
    feeds = {"ids": RNG.integers(0, 50, (3, 6)).astype(np.int64)}
    m = model(nodes, [value("ids", [3, 6], TensorProto.INT64)], [value("y", [3, 16])], inits)
    m.opset_import[0].version = 13  # ReduceMean takes `axes` as an attribute until 18
    return m, feeds


MODELS = {
    "mlp": mlp,
    "cnn": cnn,
    "residual": residual,
    "mobilenet_block": mobilenet_block,
    "mobilenet_v3_block": mobilenet_v3_block,
    "inception_block": inception_block,
    "resnext_block": resnext_block,
    "scalars": scalars,
    "passthrough": passthrough,
    "classifier_head": classifier_head,
    "upsample": upsample,
    "decoder": decoder,
    "encoder_layer": encoder_layer,
    "embedding": embedding,
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def case(request):
    m, feeds = MODELS[request.param]()
    return request.param, m, feeds, reference(m, feeds)


@pytest.mark.parametrize("fuse", [True, False])
def test_model_matches_onnxruntime(case, fuse):
    name, m, feeds, expected = case
    compiled = tc.compile(m, fuse=fuse)
    got = compiled(**feeds)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=2e-4, atol=2e-4, err_msg=name)
    assert compiled.compile_seconds > 0


def test_fusion_makes_fewer_kernel_calls():
    m, feeds = encoder_layer()
    fused, unfused = tc.compile(m), tc.compile(m, fuse=False)
    assert len(fused.kernel_calls) < len(unfused.kernel_calls)
    np.testing.assert_allclose(fused(**feeds), unfused(**feeds), rtol=1e-5, atol=1e-5)


def test_save_and_load(tmp_path):
    m, feeds = cnn()
    compiled = tc.compile(m)
    compiled.save(tmp_path / "cnn")
    loaded = load(tmp_path / "cnn")
    np.testing.assert_allclose(loaded(feeds["x"]), compiled(feeds["x"]), rtol=1e-6, atol=1e-6)
    assert loaded.input_names == ["x"]


def test_profile_times_each_kernel_call():
    m, feeds = cnn()
    compiled = tc.compile(m)
    profile = compiled.profile(feeds["x"], repeat=3)
    assert [k for k, _ in profile] == compiled.kernel_calls
    assert all(t > 0 for _, t in profile)
    # Profiling runs an instrumented copy: the model still gives onnxruntime's answer.
    np.testing.assert_allclose(compiled(feeds["x"]), reference(m, feeds)[0], rtol=1e-4, atol=1e-4)


def test_input_errors_name_the_input():
    m, feeds = mlp()
    compiled = tc.compile(m)
    x = feeds["x"]
    with pytest.raises(ValueError, match="input 'x' has shape"):
        compiled(x[:4])
    with pytest.raises(ValueError, match="input 'x' has dtype float64"):
        compiled(x.astype(np.float64))
    with pytest.raises(ValueError, match="missing input.*'x'"):
        compiled()
    with pytest.raises(ValueError, match="unexpected input.*'z'"):
        compiled(x=x, z=x)
    # A non-contiguous input is accepted (copied), and results are fresh arrays.
    wide = np.zeros((8, 64), np.float32)
    wide[:, ::2] = x
    first = compiled(wide[:, ::2])
    second = compiled(x)
    assert first is not second
    np.testing.assert_array_equal(first, second)


GRAPH_IR = """
builtin.module {
  func.func @main(%x: tensor<4x16xf32> {tc.name = "x"}, %w: tensor<8x16xf32> {tc.name = "w"}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    %r = graph.relu %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %s = graph.softmax %r {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %t = graph.tanh %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
    func.return %s, %t : tensor<4x8xf32>, tensor<4x8xf32>
  }
}
"""


@pytest.mark.parametrize("fuse", [True, False])
def test_hand_written_graph_module(fuse):
    from tilecraft.driver.context import parse_text

    compiled = tc.compile(parse_text(GRAPH_IR), fuse=fuse)
    x, w = randn(4, 16), randn(8, 16)
    s, t = compiled(x, w)
    d = x @ w.T
    e = np.exp(np.maximum(d, 0) - np.maximum(d, 0).max(-1, keepdims=True))
    np.testing.assert_allclose(s, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t, np.tanh(d), rtol=1e-5, atol=1e-6)


def test_tilecraft_run_on_a_model(tmp_path, capsys):
    from tilecraft.tools import run

    m, feeds = mlp()
    path = tmp_path / "mlp.onnx"
    onnx.save(m, str(path))
    x = tmp_path / "x.npy"
    np.save(x, feeds["x"])
    out = tmp_path / "y.npy"
    assert run.main([str(path), "--input", f"x={x}", "--output", str(out), "--bench", "--runs", "3"]) == 0
    np.testing.assert_allclose(np.load(out), reference(m, feeds)[0], rtol=2e-4, atol=2e-4)
    assert "latency: median" in capsys.readouterr().out
    bad = tmp_path / "bad.npy"
    np.save(bad, feeds["x"][:2])
    assert run.main([str(path), "--input", f"x={bad}"]) == 1
    assert capsys.readouterr().err.strip() == "tilecraft-run: error: input 'x' has shape (2, 32), expected (8, 32)"
    assert run.main([str(path), "--input", f"z={x}"]) == 1
    assert "the model has no input 'z' (its inputs: x)" in capsys.readouterr().err


def test_text_pipeline_matches_onnxruntime(case, tmp_path):
    """The whole lowering as text, a user's way: tilecraft-import, one tilecraft-opt
    pipeline down to loop IR (the graph function calls the kernels, weights are
    its arguments), tilecraft-run on the result."""
    from tilecraft.tools import import_model, opt, run

    name, m, feeds, expected = case
    onnx.save(m, str(tmp_path / "m.onnx"))
    assert import_model.main([str(tmp_path / "m.onnx"), "-o", str(tmp_path / "m.mlir")]) == 0
    lowered = tmp_path / "m.loop.mlir"
    opt.main([str(tmp_path / "m.mlir"), "-p", "compile-model", "--weights-out",
              str(tmp_path / "folded.npz"), "-o", str(lowered)])
    text = lowered.read_text()
    assert "graph." not in text.split("func.func @main")[1].split("func.func")[0]
    ins = []
    for n, (key, array) in enumerate(feeds.items()):
        ins += ["--input", str(tmp_path / f"in{n}.npy")]
        np.save(tmp_path / f"in{n}.npy", array)
    outs = []
    for n in range(len(expected)):
        outs += ["--output", str(tmp_path / f"out{n}.npy")]
    assert run.main([str(lowered), "--entry", "main", *ins, *outs]) == 0
    for n, e in enumerate(expected):
        np.testing.assert_allclose(np.load(tmp_path / f"out{n}.npy"), e, rtol=2e-4, atol=2e-4, err_msg=name)
    # The same IR compiled by tc.compile gives the same numbers, bit for bit.
    got = tc.compile(m)(**feeds)
    for n, g in enumerate(got if isinstance(got, tuple) else (got,)):
        np.testing.assert_array_equal(np.load(tmp_path / f"out{n}.npy"), g, err_msg=name)


def test_compiled_ir_is_what_tilecraft_opt_prints(case, tmp_path, capsys):
    """tc.compile runs compile-model: its IR is tilecraft-opt's output, apart from
    how the weight store is named (a file there, memory here)."""
    from tilecraft.tools import import_model, opt

    name, m, feeds, expected = case
    onnx.save(m, str(tmp_path / "m.onnx"))
    assert import_model.main([str(tmp_path / "m.onnx"), "-o", str(tmp_path / "m.mlir")]) == 0
    lowered = tmp_path / "m.loop.mlir"
    assert opt.main([str(tmp_path / "m.mlir"), "-p", "compile-model", "--weights-out",
                     str(tmp_path / "folded.npz"), "-o", str(lowered)]) == 0
    text = re.sub(r' attributes \{graph.weights = "[^"]*"\}', "", lowered.read_text()).strip()
    compiled = tc.compile(tmp_path / "m.onnx")
    assert compiled.ir.strip() == text, name
    assert compiled.passes[:4] == ["fold-empty-tensors", "check-graph-level", "infer-shapes", "canonicalize"]


def test_a_model_is_one_native_call_with_its_weights_bound():
    m, feeds = cnn()
    compiled = tc.compile(m)
    kinds = [p.kind for p in compiled.ports]
    # inputs, then weights, then outputs: the loop-level @main's signature.
    assert kinds == sorted(kinds, key=["input", "weight", "output"].index)
    assert kinds.count("input") == 1 and kinds.count("output") == 1 and "weight" in kinds
    assert set(compiled.weights) == {p.name for p in compiled.ports if p.kind == "weight"}
    assert not next(iter(compiled.weights.values())).flags.writeable


def test_bound_weights_and_outputs_start_on_a_cache_line():
    """numpy's arrays are 16-byte aligned; a kernel's zmm loads from a weight 16
    bytes off a line straddle two lines each (BERT's FFN dense 1.18x slower)."""
    m, feeds = cnn()
    compiled = tc.compile(m)
    names = [p.name for p in compiled.ports if p.kind == "weight"]
    assert all(compiled._weights[n].ctypes.data % 64 == 0 for n in names)
    for _ in range(3):
        out = compiled(**feeds)
        assert out.ctypes.data % 64 == 0 and out.flags.c_contiguous and out.flags.writeable

    def off_the_line(w):  # a copy 16 bytes past a cache line
        raw = np.empty(w.nbytes + 128, np.uint8)
        start = -raw.ctypes.data % 64 + 16
        copy = raw[start : start + w.nbytes].view(w.dtype).reshape(w.shape)
        copy[...] = w
        return copy

    given = {n: off_the_line(w) for n, w in compiled.weights.items()}
    rebound = type(compiled)(compiled._entry, compiled.ports, given, owner=compiled._owner)
    for n in names:
        assert rebound._weights[n].ctypes.data % 64 == 0
        np.testing.assert_array_equal(rebound._weights[n], given[n])
    np.testing.assert_array_equal(rebound(**feeds), out)


@pytest.mark.parametrize("threads", [1, 3])
def test_num_threads_is_honoured(threads):
    m, feeds = cnn()
    compiled = tc.compile(m, num_threads=threads)
    assert compiled.num_threads == threads
    np.testing.assert_allclose(compiled(feeds["x"]), reference(m, feeds)[0], rtol=2e-4, atol=2e-4)


def test_default_threads_follow_omp_num_threads(monkeypatch):
    from tilecraft.utils.threads import ThreadCountError, available_cpus, default_threads

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert default_threads() == available_cpus()
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert default_threads() == 3
    assert tc.compile(mlp()[0]).num_threads == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "4,2")  # one count per nesting level
    assert default_threads() == 4
    monkeypatch.setenv("OMP_NUM_THREADS", "zero")
    with pytest.raises(ThreadCountError, match="OMP_NUM_THREADS='zero'"):
        default_threads()
    with pytest.raises(ValueError, match="num_threads must be a positive integer, got -3"):
        tc.compile(mlp()[0], num_threads=-3)
