"""Model-zoo files (the onnx package's "light" models: opset 9, Dropout, LRN, weights
as ConstantOfShape) compiled by tilecraft and compared with onnxruntime, with the
constant weights replaced by random ones (frontends/onnx/zoo.py) so that the
comparison means something.

Compiling a whole zoo model takes tens of seconds on a 2-core machine and making its
random weights (VGG19: 143M) more, so the suite compiles SqueezeNet end to end, imports
all nine files as shipped, and checks their opset-9 operators (LRN, Dropout with its
mask output) on a small model against onnxruntime; `bench/models.py --models zoo`
compiles, checks and times all nine.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import tilecraft as tc  # noqa: E402
from tilecraft.frontends.onnx import from_onnx, zoo  # noqa: E402

MODELS = zoo.available()


def test_all_nine_light_models_are_there():
    assert sorted(MODELS) == sorted(zoo.LIGHT_MODELS), "the onnx package lacks some light models"


def test_random_weights_replace_the_constants():
    model = zoo.load("squeezenet")
    assert not any(n.op_type == "ConstantOfShape" for n in model.graph.node)
    assert [i.name for i in model.graph.input] == ["data_0"]
    weights = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    conv1 = weights["conv1_w_0"]
    assert conv1.shape == (64, 3, 3, 3) and conv1.std() > 0.1  # random, not 0.02 everywhere


@pytest.mark.parametrize("name", MODELS)
def test_light_model_imports(name):
    """Every zoo file as shipped converts (opset 9 -> 13, Dropout with its mask,
    LRN, BatchNormalization, Sum...)."""
    module, _ = from_onnx(onnx.load(os.path.join(zoo.LIGHT_DIR, zoo.LIGHT_MODELS[name])))
    assert "graph.conv2d" in str(module)


def test_squeezenet_matches_onnxruntime():
    model = zoo.load("squeezenet", seed=1)
    x = np.random.default_rng(2).standard_normal((1, 3, 224, 224)).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"data_0": x})
    got = tc.compile(model)(x)
    assert got.shape == expected.shape == (1, 1000, 1, 1)
    # A softmax over 1000 classes: random weights make it far from uniform.
    assert expected.max() > 2 * expected.mean()
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("size", [3, 5])
def test_opset9_lrn_and_dropout_mask_match_onnxruntime(size):
    """AlexNet's and GoogLeNet's layer kinds at opset 9: Conv, LRN (a window over
    channels, clipped at the edges), Dropout with a (float, at opset 9) mask output,
    MaxPool."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(size)
    w = (rng.standard_normal((6, 3, 3, 3)) * 0.5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("LRN", ["c"], ["n"], size=size, alpha=0.01, beta=0.75, bias=2.0),
        helper.make_node("Dropout", ["n"], ["d", "mask"], ratio=0.5),
        helper.make_node("MaxPool", ["d"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    graph = helper.make_graph(
        nodes, "lrn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 4, 4]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 6, 8, 8])],
        [numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)], ir_version=8)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32) * 3
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected_y, expected_mask = session.run(None, {"x": x})
    got_y, got_mask = tc.compile(model)(x)
    # Before opset 10 the mask has the input's type. Its value in inference is not
    # specified there ("not filled"; onnxruntime leaves zeros): tilecraft gives ones,
    # nothing dropped, as the bool mask of opset 10+ says.
    assert got_mask.dtype == expected_mask.dtype == np.float32
    assert (got_mask == 1).all()
    np.testing.assert_allclose(got_y, expected_y, rtol=1e-4, atol=1e-5)
