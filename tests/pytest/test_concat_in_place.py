"""concat-in-place end to end: models whose concats the kernels write in place
(SqueezeNet's fire module, a DenseNet block's growing feature map) and models whose
concats must stay copies (an input operand, two images, a returned concat,
unaligned operands), compiled with `tc.compile` and run against onnxruntime; the
kernel list says which concats were left to a kernel.
"""

from __future__ import annotations

import numpy as np
import onnx  # noqa: F401 - a test extra: missing is a failure, never a skip
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilecraft as tc


class Graph:
    """A small ONNX graph built node by node, with random conv weights."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def conv(self, x: str, cin: int, cout: int, k: int = 1) -> str:
        w, b, y = self.name("w"), self.name("b"), self.name("conv")
        scale = 1.0 / np.sqrt(cin * k * k)
        self.inits += [numpy_helper.from_array((self.rng.standard_normal((cout, cin, k, k)) * scale).astype(np.float32), w),
                       numpy_helper.from_array(self.rng.standard_normal(cout).astype(np.float32) * 0.1, b)]  # fmt: skip
        self.nodes.append(helper.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k], pads=[k // 2] * 4))
        return self.op("Relu", y)

    def op(self, kind: str, *xs: str, **attrs) -> str:
        y = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, list(xs), [y], **attrs))
        return y

    def concat(self, *xs: str) -> str:
        return self.op("Concat", *xs, axis=1)

    def model(self, inputs: dict[str, tuple], outputs: list[str]) -> onnx.ModelProto:
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()]
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
        g = helper.make_graph(self.nodes, "g", ins, outs, self.inits)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tc.CompiledModel:
    """Compile, run and compare every output with onnxruntime; the compiled model."""
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    m = tc.compile(model)
    got = m(**feeds)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)
    return m


def concat_kernels(m: tc.CompiledModel) -> list[str]:
    return [k for k in m.kernel_calls if "concat" in k]


def image(n: int, c: int, hw: int) -> np.ndarray:  # NCHW
    return np.random.default_rng(1).standard_normal((n, c, hw, hw)).astype(np.float32)


def test_fire_module_concat_is_written_in_place():
    """SqueezeNet's fire module: the two expand convs write their halves of the
    concat, which no kernel copies; the module after it reads the whole."""
    g = Graph()
    s = g.conv("x", 32, 16)
    c = g.concat(g.conv(s, 16, 32), g.conv(s, 16, 32, k=3))
    y = g.conv(g.concat(g.conv(c, 64, 32), g.conv(c, 64, 32, k=3)), 64, 8)
    m = run(g.model({"x": (1, 32, 9, 9)}, [y]), {"x": image(1, 32, 9)})
    assert concat_kernels(m) == []


def test_dense_block_chain_is_written_in_place():
    """A DenseNet block: each layer's output is concatenated to all before it; the
    nested concats all live in the last one's buffer, each layer reading a prefix."""
    g = Graph(2)
    x, channels = g.conv("x", 16, 32), 32
    for _ in range(4):
        x = g.concat(x, g.conv(g.conv(x, channels, 32), 32, 16, k=3))
        channels += 16
    y = g.op("GlobalAveragePool", g.conv(x, channels, 16))
    m = run(g.model({"x": (1, 16, 8, 8)}, [y]), {"x": image(1, 16, 8)})
    assert concat_kernels(m) == []


def test_concat_operand_read_after_the_concat():
    """An operand stays intact in the concat's buffer for readers after the concat."""
    g = Graph(3)
    a, b = g.conv("x", 16, 16), g.conv("x", 16, 32, k=3)
    y = g.op("Add", g.conv(g.concat(a, b), 48, 16), g.conv(a, 16, 16, k=3))
    m = run(g.model({"x": (1, 16, 6, 6)}, [y]), {"x": image(1, 16, 6)})
    assert concat_kernels(m) == []


@pytest.mark.parametrize("case", ["two_images", "returned", "unaligned", "twice"])
def test_concats_left_to_a_kernel_still_compute(case):
    """Where the operands cannot live in the concat's buffer, a kernel copies them,
    and the answer is the same."""
    g = Graph(4)
    n, c, hw = (2, 16, 5) if case == "two_images" else (1, 16, 5)
    if case == "unaligned":  # 3 x 5 x 5 floats: 300 bytes, not a multiple of 64
        a, b = g.conv("x", c, 3), g.conv("x", c, 5, k=3)
        out, ch = g.conv(g.concat(a, b), 8, 4), 8
    else:
        a = g.conv("x", c, 16)
        b = a if case == "twice" else g.conv("x", c, 16, k=3)
        cat = g.concat(a, b)
        out = cat if case == "returned" else g.conv(cat, 32, 8)
        ch = 32 if case == "returned" else 8
    m = run(g.model({"x": (n, c, hw, hw)}, [out]), {"x": image(n, c, hw)})
    assert len(concat_kernels(m)) == 1, (ch, m.kernel_calls)


def test_concat_of_an_input_and_an_elementwise_op():
    """No conv, so no layout transform: the concat reads the model's input itself
    (which no kernel writes), whatever fusion makes of the relu."""
    g = Graph(5)
    y = g.op("Sigmoid", g.concat("x", g.op("Relu", "x")))
    run(g.model({"x": (1, 16, 4, 4)}, [y]), {"x": image(1, 16, 4)})
