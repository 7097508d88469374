"""Typed properties of the graph ops, through the Python API: accessors and their
defaults, building from Python values, and the verifier's naming of wrong
attributes (the textual cases are in tests/filecheck/dialects/graph/)."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr, TensorType, f32, i1, i64
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from tilecraft.dialects import graph


def values(*shapes):
    return Block(arg_types=[TensorType(f32, list(s)) for s in shapes]).args


def test_defaults_live_in_the_op():
    x, w = values((1, 4, 9, 9), (8, 4, 3, 3))
    conv = graph.Conv2dOp([x, w])
    assert (conv.strides, conv.pads, conv.dilations, conv.groups) == ((1, 1), (0, 0, 0, 0), (1, 1), 1)
    assert (conv.data_layout, conv.kernel_layout, conv.out_layout) == ("NCHW", "OIHW", "NCHW")
    assert conv.properties == {}  # defaults are not written into the IR
    (xb,) = values((1, 1, 9, 9, 4))
    blocked = conv.with_properties([xb, w], data_layout="NCHW4c")
    assert blocked.out_layout == "NCHW4c"  # out_layout follows data_layout unless given
    assert graph.shape_of(blocked.outputs[0].type) == (1, 2, 7, 7, 4)
    (v,) = values((3, 4))
    assert graph.ReduceSumOp([v]).keepdims is True
    assert graph.TransposeOp([v]).permutation(2) == [1, 0]
    assert graph.ClipOp([v]).min is None
    assert graph.GeluOp([v]).approximate == graph.Approximate.NONE == "none"
    assert graph.SoftmaxOp([v]).axis == -1


def test_python_values_become_typed_attributes():
    x, w = values((1, 4, 9, 9), (8, 4, 3, 3))
    conv = graph.Conv2dOp([x, w], {"strides": [2, 2], "groups": 1, "pads": None})
    assert conv.properties["strides"] == DenseArrayBase.from_list(i64, [2, 2])
    assert conv.properties["groups"] == IntegerAttr(1, i64)
    assert "pads" not in conv.properties
    assert graph.shape_of(conv.outputs[0].type) == (1, 8, 4, 4)
    (v,) = values((3, 4))
    reduce = graph.ReduceMeanOp([v], {"axes": [1], "keepdims": 0})
    assert reduce.properties["keepdims"] == IntegerAttr(0, i1)
    assert graph.shape_of(reduce.outputs[0].type) == (3,)
    dense = graph.DenseOp(values((3, 16), (16, 10)), {"weight_layout": "KN"})
    assert dense.properties["weight_layout"] == graph.WeightLayoutAttr(graph.WeightLayout.KN)


def test_building_with_an_unknown_name_fails_at_once():
    x, w = values((1, 4, 9, 9), (8, 4, 3, 3))
    with pytest.raises(TypeError, match=r"graph.conv2d has no attribute 'stride' \(did you mean 'strides'\?\)"):
        graph.Conv2dOp([x, w], {"stride": [2, 2]})


def test_verifier_names_wrong_attributes():
    (v,) = values((3, 4))
    op = graph.SoftmaxOp([v])
    op.verify()
    op.attributes["tc.offsets"] = DenseArrayBase.from_list(i64, [0])  # namespaced: allowed
    op.verify()
    op.attributes["axis"] = IntegerAttr(0, i64)  # a property set as an attribute
    with pytest.raises(VerifyException, match=r"graph.softmax attribute 'axis' must be a property"):
        op.verify()
    del op.attributes["axis"]
    op.attributes["axsi"] = IntegerAttr(0, i64)
    with pytest.raises(VerifyException, match=r"has no attribute 'axsi' \(did you mean 'axis'\?\)"):
        op.verify()
    del op.attributes["axsi"]
    op.properties["axis"] = StringAttr("0")
    with pytest.raises(VerifyException, match=r"graph.softmax attribute 'axis' must be an i64 integer, not \"0\""):
        op.verify()


def test_with_properties_keeps_discardable_attributes():
    (v,) = values((2, 8, 4, 4))
    pool = graph.MaxPool2dOp([v], {"kernel": [2, 2]}, attributes={"tc.note": StringAttr("kept")})
    moved = pool.with_properties([v], strides=[2, 2])
    assert moved.kernel == (2, 2) and moved.strides == (2, 2)
    assert moved.attributes == {"tc.note": StringAttr("kept")}
    assert graph.shape_of(moved.outputs[0].type) == (2, 8, 2, 2)
