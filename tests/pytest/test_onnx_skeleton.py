"""`frontends/onnx/skeleton.py`: an old-opset model converted without its weights'
data converts to exactly what the whole model converts to, and `model_digest`
tells apart models that differ in any field, a weight's last byte included."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, version_converter

from tilecraft.frontends.onnx.importer import MIN_OPSET, upgrade_opset
from tilecraft.frontends.onnx.skeleton import MIN_ELEMENTS, model_digest, skeleton

RNG = np.random.default_rng(3)


def old_model(as_float_data: bool = False) -> onnx.ModelProto:
    """Opset 9: Gemm with a large weight, Reshape whose shape is an initializer,
    Clip with min/max attributes (moved to inputs at opset 11)."""
    w = RNG.standard_normal((64, 128)).astype(np.float32)
    weight = numpy_helper.from_array(w, "w")
    if as_float_data:
        weight = helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.reshape(-1).tolist())
    b = numpy_helper.from_array(RNG.standard_normal(128).astype(np.float32), "b")
    shape = numpy_helper.from_array(np.array([2, 4, 32], np.int64), "shape")
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"]),
        helper.make_node("Reshape", ["g", "shape"], ["r"]),
        helper.make_node("Clip", ["r"], ["y"], min=-1.0, max=1.0),
    ]
    graph = helper.make_graph(
        nodes,
        "old",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 64))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 4, 32))],
        [weight, b, shape],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)], ir_version=6)


def test_the_skeleton_leaves_out_large_float_weights_only():
    model = old_model()
    shape, left_out = skeleton(model)
    assert set(left_out) == {"w"} and 64 * 128 >= MIN_ELEMENTS
    kept = {t.name: t for t in shape.graph.initializer}
    assert list(kept["w"].dims) == [64, 128] and not kept["w"].raw_data
    assert kept["shape"] == model.graph.initializer[2]  # integers stay: adapters read them
    assert model.graph.initializer[0].raw_data  # the caller's model is not changed


def test_converting_the_skeleton_gives_what_converting_the_model_gives():
    for as_float_data in (False, True):
        model = old_model(as_float_data)
        whole = version_converter.convert_version(model, MIN_OPSET)
        upgraded = upgrade_opset(model, 9)
        assert upgraded.SerializeToString() == whole.SerializeToString()
        ops = [n.op_type for n in upgraded.graph.node]
        assert ops[-1] == "Clip" and len(upgraded.graph.node[-1].input) == 3


def test_the_digest_tells_apart_any_change():
    model = old_model()
    digest = model_digest(model)
    same = onnx.ModelProto()
    same.CopyFrom(model)
    assert model_digest(same) == digest

    def changed(edit) -> str:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        edit(copy)
        return model_digest(copy)

    def last_byte(m):
        data = m.graph.initializer[0].raw_data
        m.graph.initializer[0].raw_data = data[:-1] + bytes([data[-1] ^ 1])

    edits = [
        last_byte,
        lambda m: setattr(m.graph.initializer[0], "doc_string", "w"),
        lambda m: setattr(m.graph.node[0], "name", "gemm"),
        lambda m: m.graph.initializer[2].int64_data.append(1),
    ]
    digests = {changed(e) for e in edits}
    assert digest not in digests and len(digests) == len(edits)
