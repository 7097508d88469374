"""Data movement: gathers and scatters, pad, reshape, flatten, squeeze,
transpose, concat, split, slice, layout transforms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from tilecraft.dialects.graph.traits import Injective, Opaque
from tilecraft.dialects.graph.shapes import ShapeError, layout_shape, normalize_axis, ranked, shape_of, tensor
from tilecraft.dialects.graph.properties import Enum, Float, Int, Ints, ScatterReductionAttr, Str
from tilecraft.dialects.graph.op import GraphOp
from tilecraft.utils.symbolic import SymExpr, size

__all__ = [
    "GatherElementsOp", "GatherNDOp", "ScatterElementsOp", "ScatterNDOp", "PadOp", "ReshapeOp", "FlattenOp",
    "SqueezeOp", "UnsqueezeOp", "TransposeOp", "ConcatOp", "SplitOp", "SliceOp", "GatherOp", "LayoutTransformOp",
]  # fmt: skip


# -- gathers and scatters by element (ONNX GatherElements, GatherND, Scatter*) ---------


def _integer_ids(t: Attribute, op: str) -> None:
    if not isinstance(ranked(t).get_element_type(), IntegerType):
        raise ShapeError(f"{op} indices must be integers")


@irdl_op_definition
class GatherElementsOp(GraphOp):
    """out[i] = data[i with i[axis] replaced by indices[i]] (ONNX GatherElements):
    `indices` has data's rank; the result has its shape."""

    name = "graph.gather_elements"
    traits = traits_def(Pure(), Injective())
    input = operand_def()
    indices = operand_def()
    axis = Int(default=0)

    def infer(self, types):
        x, idx = shape_of(types[0]), shape_of(types[1])
        _integer_ids(types[1], self.name)
        if len(idx) != len(x):
            raise ShapeError(f"indices of rank {len(idx)} for data of rank {len(x)}")
        normalize_axis(self.axis, len(x))
        return [tensor(idx, ranked(types[0]).get_element_type())]


@irdl_op_definition
class GatherNDOp(GraphOp):
    """ONNX GatherND: each row of the last axis of `indices` (k ids) picks a slice
    data[b..., i_0, ..., i_k-1, :...] after `batch_dims` shared leading axes."""

    name = "graph.gather_nd"
    traits = traits_def(Pure(), Injective())
    input = operand_def()
    indices = operand_def()
    batch_dims = Int(default=0)

    def infer(self, types):
        x, idx = shape_of(types[0]), shape_of(types[1])
        _integer_ids(types[1], self.name)
        b = self.batch_dims
        if not idx or not 0 <= b < len(idx) or b + idx[-1] > len(x) or tuple(idx[:b]) != tuple(x[:b]):
            raise ShapeError(f"indices {idx} do not index data {x} with batch_dims {b}")
        return [tensor((*idx[:-1], *x[b + idx[-1] :]), ranked(types[0]).get_element_type())]


class _Scatter(GraphOp):
    traits = traits_def(Pure(), Opaque())
    input = operand_def()
    indices = operand_def()
    updates = operand_def()
    reduction = Enum(ScatterReductionAttr, default="none", doc="none (the last update wins), add, mul, max or min")


@irdl_op_definition
class ScatterElementsOp(_Scatter):
    """ONNX ScatterElements: data with updates[j] written (or combined, `reduction`) at
    j with j[axis] replaced by indices[j]."""

    name = "graph.scatter_elements"
    axis = Int(default=0)

    def infer(self, types):
        x, idx, upd = shape_of(types[0]), shape_of(types[1]), shape_of(types[2])
        _integer_ids(types[1], self.name)
        axis = normalize_axis(self.axis, len(x))
        if idx != upd or len(idx) != len(x) or any(i > n for d, (i, n) in enumerate(zip(idx, x)) if d != axis):
            raise ShapeError(f"indices {idx} and updates {upd} do not fit data {x}")
        return [ranked(types[0])]


@irdl_op_definition
class ScatterNDOp(_Scatter):
    """ONNX ScatterND: `indices` [m, k] and `updates` [m, *data[k:]] (leading axes
    flattened): data with update j written (or combined) at data[indices[j], :...]."""

    name = "graph.scatter_nd"

    def infer(self, types):
        x, idx, upd = shape_of(types[0]), shape_of(types[1]), shape_of(types[2])
        _integer_ids(types[1], self.name)
        if len(idx) != 2 or idx[1] > len(x) or tuple(upd) != (idx[0], *x[idx[1] :]):
            raise ShapeError(f"indices {idx} and updates {upd} do not fit data {x}")
        return [ranked(types[0])]


# -- data movement ---------------------------------------------------------------------


class _Injective(GraphOp):
    traits = traits_def(Pure(), Injective())


@irdl_op_definition
class PadOp(_Injective):
    """Constant padding: `pads` [begin_0.., end_0..], `value` (default 0)."""

    name = "graph.pad"
    input = operand_def()
    pads = Ints()
    value = Float(default=0.0)

    def infer(self, types):
        x = shape_of(types[0])
        pads = list(self.pads)
        if len(pads) != 2 * len(x):
            raise ShapeError(f"pads needs {2 * len(x)} values for rank {len(x)}, got {len(pads)}")
        out = [n + pads[d] + pads[d + len(x)] for d, n in enumerate(x)]
        if any(n < 0 for n in out):  # 0 is an empty tensor (fold-empty-tensors)
            raise ShapeError(f"padding {pads} crops more than the extents {tuple(x)}")
        return [tensor(out, ranked(types[0]).get_element_type())]


@irdl_op_definition
class ReshapeOp(_Injective):
    """Row-major reshape to `shape` (one -1 allowed, 0 copies the input extent)."""

    name = "graph.reshape"
    input = operand_def()
    shape = Ints()
    SYMBOLIC: ClassVar[bool] = True  # (0 copies a `seq`; -1 is what the others leave: `batch * seq * 64 / 64`)

    def infer(self, types):
        x = shape_of(types[0])
        shape = list(self.shape)
        if any(s == 0 and d >= len(x) for d, s in enumerate(shape)) or any(s < -1 for s in shape):
            raise ShapeError(f"bad target shape {shape} for input {x} (0 copies an input extent, -1 is inferred)")
        shape = [x[d] if s == 0 else s for d, s in enumerate(shape)]
        total = math.prod(x)
        if shape.count(-1) > 1:
            raise ShapeError("reshape allows one -1")
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            rest = SymExpr.lift(total).exact_quotient(known) if known != 0 else None
            if rest is None:
                raise ShapeError(f"cannot reshape {x} to {shape}")
            shape[shape.index(-1)] = size(rest)
        if math.prod(shape) != total:
            raise ShapeError(f"cannot reshape {x} ({total} elements) to {tuple(shape)}")
        return [tensor(shape, ranked(types[0]).get_element_type())]


@irdl_op_definition
class FlattenOp(_Injective):
    """To 2-D: dims before `axis` (default 1) and from it."""

    name = "graph.flatten"
    SYMBOLIC: ClassVar[bool] = True  # (sizes multiply: `batch` and 48 give `batch` x 48)
    input = operand_def()
    axis = Int(default=1)

    def infer(self, types):
        x = shape_of(types[0])
        axis = self.axis
        axis = axis + len(x) if axis < 0 else axis
        if not 0 <= axis <= len(x):
            raise ShapeError(f"flatten axis {axis} out of range for rank {len(x)}")
        return [tensor((math.prod(x[:axis]), math.prod(x[axis:])), ranked(types[0]).get_element_type())]


@irdl_op_definition
class SqueezeOp(_Injective):
    name = "graph.squeeze"
    input = operand_def()
    axes = Ints(default=None, doc="the axes to remove; None: every axis of extent 1")

    def infer(self, types):
        x = shape_of(types[0])
        axes = {normalize_axis(a, len(x)) for a in (self.axes if self.axes is not None else [d for d, n in enumerate(x) if n == 1])}
        for a in axes:
            if x[a] != 1:
                raise ShapeError(f"cannot squeeze axis {a} of extent {x[a]}")
        return [tensor([n for d, n in enumerate(x) if d not in axes], ranked(types[0]).get_element_type())]


@irdl_op_definition
class UnsqueezeOp(_Injective):
    name = "graph.unsqueeze"
    input = operand_def()
    axes = Ints()

    def infer(self, types):
        x = list(shape_of(types[0]))
        rank = len(x) + len(self.axes)
        for a in sorted(normalize_axis(a, rank) for a in self.axes):
            x.insert(a, 1)
        return [tensor(x, ranked(types[0]).get_element_type())]


@irdl_op_definition
class TransposeOp(_Injective):
    """Permute axes by `perm` (default: reverse)."""

    name = "graph.transpose"
    input = operand_def()
    perm = Ints(default=None, doc="the permutation; None: reverse the axes")

    def permutation(self, rank: int) -> list[int]:
        return list(reversed(range(rank))) if self.perm is None else list(self.perm)

    SYMBOLIC: ClassVar[bool] = True

    def infer(self, types):
        x = shape_of(types[0])
        perm = self.permutation(len(x))
        if sorted(perm) != list(range(len(x))):
            raise ShapeError(f"perm {perm} is not a permutation of {len(x)} axes")
        return [tensor([x[p] for p in perm], ranked(types[0]).get_element_type())]


@irdl_op_definition
class ConcatOp(_Injective):
    name = "graph.concat"
    inputs = var_operand_def()
    VARIADIC: ClassVar = (1, None)
    axis = Int()

    SYMBOLIC: ClassVar[bool] = True

    def infer(self, types):
        shapes = [shape_of(t) for t in types]
        axis = normalize_axis(self.axis, len(shapes[0]))
        for s in shapes[1:]:
            if len(s) != len(shapes[0]) or any(a != b for d, (a, b) in enumerate(zip(s, shapes[0])) if d != axis):
                raise ShapeError(f"cannot concatenate {shapes[0]} and {s} along axis {axis}")
        if len({ranked(t).get_element_type() for t in types}) > 1:
            raise ShapeError("all operands must have one element type")
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        return [tensor(out, ranked(types[0]).get_element_type())]


@irdl_op_definition
class SplitOp(_Injective):
    """Split along `axis` into pieces of `sizes`."""

    name = "graph.split"
    input = operand_def()
    axis = Int(default=0)
    sizes = Ints()

    def infer(self, types):
        x = shape_of(types[0])
        axis = normalize_axis(self.axis, len(x))
        sizes = list(self.sizes)
        if not sizes or min(sizes) < 0:  # a 0 size is an empty piece (fold-empty-tensors)
            raise ShapeError(f"split sizes {sizes} must not be negative")
        if sum(sizes) != x[axis]:
            raise ShapeError(f"split sizes {sizes} do not add up to extent {x[axis]}")
        return [tensor([s if d == axis else n for d, n in enumerate(x)], ranked(types[0]).get_element_type()) for s in sizes]


@irdl_op_definition
class SliceOp(_Injective):
    """`starts`, `ends`, `axes`, `steps` as ONNX Slice (static)."""

    name = "graph.slice"
    input = operand_def()
    starts = Ints()
    ends = Ints()
    axes = Ints(default=None, doc="the axes sliced; None: the first len(starts)")
    steps = Ints(default=None, doc="the steps; None: 1 on every axis")

    def ranges(self, x: Sequence[int]) -> list[tuple[int, int, int]]:
        starts, ends = self.starts, self.ends
        axes = [normalize_axis(a, len(x)) for a in (self.axes if self.axes is not None else range(len(starts)))]
        steps = self.steps if self.steps is not None else (1,) * len(starts)
        out = [(0, n, 1) for n in x]
        for a, s, e, st in zip(axes, starts, ends, steps):
            if st == 0:
                raise ShapeError("slice step cannot be 0")
            s, e, _ = slice(s, e, st).indices(x[a])
            out[a] = (s, e, st)
        return out

    def infer(self, types):
        x = shape_of(types[0])
        shape = [len(range(s, e, st)) for s, e, st in self.ranges(x)]  # empty: 0 (fold-empty-tensors)
        return [tensor(shape, ranked(types[0]).get_element_type())]


@irdl_op_definition
class GatherOp(_Injective):
    """take(data, indices, axis): embeddings with integer ids."""

    name = "graph.gather"
    input = operand_def()
    indices = operand_def()
    axis = Int(default=0)

    def infer(self, types):
        x, idx = shape_of(types[0]), shape_of(types[1])
        if not isinstance(ranked(types[1]).get_element_type(), IntegerType):
            raise ShapeError("gather indices must be integers")
        axis = normalize_axis(self.axis, len(x))
        return [tensor((*x[:axis], *idx, *x[axis + 1 :]), ranked(types[0]).get_element_type())]


@irdl_op_definition
class LayoutTransformOp(_Injective):
    """Between NCHW and blocked NCHW[x]c: `src` and `dst` layouts, e.g. "NCHW" -> "NCHW16c"."""

    name = "graph.layout_transform"
    input = operand_def()
    src = Str()
    dst = Str()
    SYMBOLIC: ClassVar[bool] = True  # (a batch passes through; symbolic channels do not split into blocks)

    def infer(self, types):
        x = shape_of(types[0])
        return [tensor(layout_shape(x, self.src, self.dst), ranked(types[0]).get_element_type())]
