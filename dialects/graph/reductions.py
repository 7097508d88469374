"""Reductions (sum, mean, max, min, prod over axes), scans (`graph.cumulative`)
and normalizations (softmax, layer norm, batch norm).
"""

from __future__ import annotations

from typing import ClassVar
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from tilecraft.dialects.graph.traits import Opaque, Reduction
from tilecraft.dialects.graph.shapes import ShapeError, normalize_axis, ranked, shape_of, tensor
from tilecraft.dialects.graph.properties import Bool, CumulativeKindAttr, Enum, Float, Int, Ints
from tilecraft.dialects.graph.op import GraphOp

__all__ = [
    "ReduceSumOp", "ReduceMeanOp", "ReduceMaxOp", "ReduceMinOp", "ReduceProdOp", "CumulativeOp", "SoftmaxOp",
    "LayerNormOp", "BatchNormOp",
]  # fmt: skip


# -- reductions and normalizations ----------------------------------------------------


class _Reduce(GraphOp):
    """Reduce over `axes` (all when absent), keeping them as 1s if `keepdims` (default 1)."""
    input = operand_def()

    traits = traits_def(Pure(), Reduction())
    axes = Ints(default=None, doc="the axes to reduce; None: all")
    keepdims = Bool(default=True)
    SYMBOLIC: ClassVar[bool] = True  # (a reduced `seq` becomes 1 or goes)

    def reduce_axes(self, rank: int) -> list[int]:
        axes = range(rank) if self.axes is None else self.axes
        return sorted({normalize_axis(a, rank) for a in axes})

    def infer(self, types):
        x = shape_of(types[0])
        axes = self.reduce_axes(len(x))
        keep = self.keepdims
        shape = [1 if d in axes else n for d, n in enumerate(x)] if keep else [n for d, n in enumerate(x) if d not in axes]
        return [tensor(shape, ranked(types[0]).get_element_type())]


@irdl_op_definition
class ReduceSumOp(_Reduce):
    name = "graph.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(_Reduce):
    name = "graph.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(_Reduce):
    name = "graph.reduce_max"


# -- reductions of the ONNX Reduce* family (min, prod) and scans ------------------------


@irdl_op_definition
class ReduceMinOp(_Reduce):
    name = "graph.reduce_min"


@irdl_op_definition
class ReduceProdOp(_Reduce):
    name = "graph.reduce_prod"


@irdl_op_definition
class CumulativeOp(GraphOp):
    """Running sums (`kind` "sum") or products ("prod") along `axis`: element i is the
    sum of elements 0..i (`exclusive`: 0..i-1; `reverse`: from the end), ONNX CumSum
    and CumProd."""

    name = "graph.cumulative"
    input = operand_def()
    traits = traits_def(Pure(), Opaque())
    axis = Int(default=0)
    kind = Enum(CumulativeKindAttr, default="sum")
    exclusive = Bool(default=False)
    reverse = Bool(default=False)

    def infer(self, types):
        x = ranked(types[0])
        normalize_axis(self.axis, len(x.get_shape()))
        return [x]


@irdl_op_definition
class SoftmaxOp(GraphOp):
    """softmax along `axis` (default -1)."""

    name = "graph.softmax"
    input = operand_def()
    traits = traits_def(Pure(), Opaque())
    axis = Int(default=-1)

    SYMBOLIC: ClassVar[bool] = True

    def infer(self, types):
        x = ranked(types[0])
        normalize_axis(self.axis, len(x.get_shape()))
        return [x]


@irdl_op_definition
class LayerNormOp(GraphOp):
    """(x - mean) / sqrt(var + epsilon) * scale + bias over the last axes from `axis`."""

    name = "graph.layer_norm"
    traits = traits_def(Pure(), Opaque())
    input = operand_def()
    params = var_operand_def()  # scale, then bias, each optional
    VARIADIC: ClassVar = (0, 2)
    axis = Int(default=-1)
    epsilon = Float(default=1e-5)

    SYMBOLIC: ClassVar[bool] = True

    def infer(self, types):
        x = shape_of(types[0])
        axis = normalize_axis(self.axis, len(x))
        norm = x[axis:]
        for t in types[1:]:
            if shape_of(t) != norm:
                raise ShapeError(f"scale and bias must have shape {norm}, got {shape_of(t)}")
        return [ranked(types[0])]


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch norm on NCHW: (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c];
    operands x, scale, bias, mean, var."""

    name = "graph.batch_norm"
    traits = traits_def(Pure(), Opaque())
    input = operand_def()
    scale = operand_def()
    bias = operand_def()
    mean = operand_def()
    variance = operand_def()
    epsilon = Float(default=1e-5)
    SYMBOLIC: ClassVar[bool] = True  # (the result is the input's type)

    def parameters(self) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        """scale, bias, mean, variance."""
        return self.scale, self.bias, self.mean, self.variance

    def infer(self, types):
        x = shape_of(types[0])
        if len(x) < 2:
            raise ShapeError("batch_norm needs a channel axis")
        for t in types[1:]:
            if shape_of(t) != (x[1],):
                raise ShapeError(f"batch_norm parameters must have shape ({x[1]},), got {shape_of(t)}")
        return [ranked(types[0])]
