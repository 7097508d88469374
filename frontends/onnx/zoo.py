"""The model-zoo files the onnx package ships as "light" models (AlexNet, GoogLeNet
= Inception v1, Inception v2, SqueezeNet, VGG19, DenseNet121, ShuffleNet, ResNet-50,
ZFNet-512; opset 9, 1x3x224x224 input), made checkable.

In those files every weight is a `ConstantOfShape` of 0.02 (the real weights are
left out to keep the package small), so almost any wrong kernel would still give
the expected near-uniform softmax. `with_random_weights` replaces each such weight
by a random initializer of its shape (He-scaled for convolution and fully
connected weights, 1 + noise for vectors such as biases, batch-norm scales and
variances, so variances stay positive), which makes a comparison with onnxruntime
mean something. Used by tests/pytest/test_onnx_zoo.py and `bench/models.py
--models zoo`.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")

# name -> file in LIGHT_DIR
LIGHT_MODELS = {
    "alexnet": "light_bvlc_alexnet.onnx",
    "googlenet": "light_inception_v1.onnx",
    "inception_v2": "light_inception_v2.onnx",
    "squeezenet": "light_squeezenet.onnx",
    "vgg19": "light_vgg19.onnx",
    "densenet121": "light_densenet121.onnx",
    "shufflenet": "light_shufflenet.onnx",
    "resnet50": "light_resnet50.onnx",
    "zfnet512": "light_zfnet512.onnx",
}


def available() -> list[str]:
    """The light models present in the installed onnx package."""
    present = {os.path.basename(p) for p in glob.glob(os.path.join(LIGHT_DIR, "*.onnx"))}
    return [name for name, file in LIGHT_MODELS.items() if file in present]


def random_weight(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    if len(shape) > 1:
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """`model` with every ConstantOfShape of a known shape replaced by a random
    initializer (see the module docstring); the other initializers kept; the graph
    inputs reduced to the ones that are not initializers (the image)."""
    rng = np.random.default_rng(seed)
    g = model.graph
    known = {init.name: numpy_helper.to_array(init) for init in g.initializer}
    nodes, initializers = [], []
    for node in g.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in known:
            shape = tuple(int(d) for d in known[node.input[0]])
            initializers.append(numpy_helper.from_array(random_weight(rng, shape), node.output[0]))
        else:
            nodes.append(node)
    used = {name for node in nodes for name in node.input}
    initializers += [numpy_helper.from_array(a, name) for name, a in known.items() if name in used]
    defined = {init.name for init in initializers}
    inputs = [vi for vi in g.input if vi.name in used and vi.name not in defined]
    graph = helper.make_graph(nodes, g.name, inputs, list(g.output), initializers)
    # IR 8: initializers need not be graph inputs (the files are IR 3); onnxruntime reads it.
    return helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=8)


def load(name: str, seed: int = 0) -> onnx.ModelProto:
    """Light model `name` (a key of LIGHT_MODELS) with random weights."""
    return with_random_weights(onnx.load(os.path.join(LIGHT_DIR, LIGHT_MODELS[name])), seed)
