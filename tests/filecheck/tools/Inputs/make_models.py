"""Tiny ONNX models for the tilecraft-import FileCheck tests: `python make_models.py DIR`.

Written at test time (not checked in as binaries) with fixed random weights:
- mlp.onnx: Gemm(transB) + Relu + MatMul with a weight + Add + Softmax, input x[2, 8];
- dynamic.onnx: Relu on x[batch, 4] (a dynamic dimension);
- dynamic_squeeze.onnx: Squeeze on x[batch, 1, 8] (an op that takes static sizes only);
- nms.onnx: an unsupported operator in node 'nms_1';
- opset11.onnx: Relu under opset 11.
"""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, path.stem, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    onnx.save(m, str(path))


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    w = lambda name, *shape: numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)  # noqa: E731
    f32 = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa: E731
    save(
        out / "mlp.onnx",
        [
            helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
            helper.make_node("Relu", ["h"], ["a"], name="relu"),
            helper.make_node("MatMul", ["a", "fc2.weight"], ["z"], name="fc2"),
            helper.make_node("Add", ["z", "fc2.bias"], ["logits"], name="fc2_bias"),
            helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
        ],
        [f32("x", [2, 8])],
        [f32("logits", [2, 4]), f32("probs", [2, 4])],
        [w("fc1.weight", 16, 8), w("fc1.bias", 16), w("fc2.weight", 16, 4), w("fc2.bias", 4)],
    )
    save(out / "dynamic.onnx", [helper.make_node("Relu", ["x"], ["y"])], [f32("x", ["batch", 4])], [f32("y", ["batch", 4])])
    save(
        out / "dynamic_squeeze.onnx",
        [helper.make_node("Squeeze", ["x", "axes"], ["y"], name="squeeze")],
        [f32("x", ["batch", 1, 8])],
        [f32("y", ["batch", 8])],
        [numpy_helper.from_array(np.array([1], np.int64), "axes")],
    )
    save(
        out / "nms.onnx",
        [helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["y"], name="nms_1")],
        [f32("boxes", [1, 4, 4]), f32("scores", [1, 1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [None, 3])],
    )
    save(out / "opset11.onnx", [helper.make_node("Relu", ["x"], ["y"])], [f32("x", [4])], [f32("y", [4])], opset=11)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
