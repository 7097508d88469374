"""Converters of the ONNX Reduce* family and of CumSum/CumProd.

ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd are graph reductions of
their own. The others are those composed with elementwise ops, exactly as ONNX
defines them: ReduceL1 = sum(|x|), ReduceL2 = sqrt(sum(x^2)), ReduceSumSquare =
sum(x^2), ReduceLogSum = log(sum(x)), ReduceLogSumExp = log(sum(exp(x - m))) + m with
m the maximum (so exp cannot overflow). Axes come as an attribute (opset < 18) or as
input 1, which must be known at import time; no axes reduce everything, unless
`noop_with_empty_axes`, which makes the op an identity. A max or min of booleans is
computed on int32 (any / all).

A reduction whose input is known (a constant, or an empty tensor) is evaluated here
with numpy, with ONNX's values for an empty set: 0 for sums, 1 for a product, the
lowest (highest) value of the type for a max (min), -inf for the logarithms.

CumSum and CumProd (`exclusive`, `reverse`) are `graph.cumulative`; the axis is input
1 of both, and must be known at import time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import i1, i32
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.fold import axes_of, folder
from tilecraft.frontends.onnx.importer import Node, converter

# Reductions that are one graph op.
REDUCTIONS: dict[str, type[graph.GraphOp]] = {
    "ReduceSum": graph.ReduceSumOp,
    "ReduceMean": graph.ReduceMeanOp,
    "ReduceMax": graph.ReduceMaxOp,
    "ReduceMin": graph.ReduceMinOp,
    "ReduceProd": graph.ReduceProdOp,
}
COMPOSED = ("ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")


def reduce_axes(node: Node, rank: int, axes_input: np.ndarray | None) -> list[int] | None:
    """The normalized axes to reduce, or None when the op is an identity
    (no axes and noop_with_empty_axes)."""
    axes = axes_of(node, [None, axes_input], 1)
    if not axes:
        if int(node.attr("noop_with_empty_axes", 0)):
            return None
        return list(range(rank))
    node.ignore("noop_with_empty_axes")
    for a in axes:
        if not -rank <= a < rank:
            raise node.error(f"axis {a} is out of range for rank {rank}")
    return sorted({a % rank for a in axes})


def _extreme(x: np.ndarray, highest: bool):
    if x.dtype == np.bool_:
        return highest
    if np.issubdtype(x.dtype, np.integer):
        info = np.iinfo(x.dtype)
        return info.max if highest else info.min
    return np.inf if highest else -np.inf


_NUMPY: dict[str, Callable[[np.ndarray, tuple, bool], np.ndarray]] = {
    "ReduceSum": lambda x, a, k: np.sum(x, axis=a, keepdims=k),
    "ReduceMean": lambda x, a, k: np.mean(x, axis=a, keepdims=k),
    "ReduceMax": lambda x, a, k: np.max(x, axis=a, keepdims=k, initial=_extreme(x, False)),
    "ReduceMin": lambda x, a, k: np.min(x, axis=a, keepdims=k, initial=_extreme(x, True)),
    "ReduceProd": lambda x, a, k: np.prod(x, axis=a, keepdims=k),
    "ReduceL1": lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k),
    "ReduceL2": lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)),
    "ReduceSumSquare": lambda x, a, k: np.sum(x * x, axis=a, keepdims=k),
    "ReduceLogSum": lambda x, a, k: np.log(np.sum(x, axis=a, keepdims=k)),
    "ReduceLogSumExp": lambda x, a, k: np.log(np.sum(np.exp(x), axis=a, keepdims=k)),
}


@folder(*_NUMPY)
def fold_reduce(node: Node, arrays):
    x = arrays[0]
    keepdims = bool(node.attr("keepdims", 1))  # read even when the op is an identity
    axes = reduce_axes(node, x.ndim, arrays[1] if len(arrays) > 1 else None)
    if axes is None:
        return [x]
    with np.errstate(divide="ignore", invalid="ignore"):
        return [np.asarray(_NUMPY[node.op_type](x, tuple(axes), keepdims)).astype(x.dtype)]


@converter(*REDUCTIONS, *COMPOSED)
def convert_reduce(node: Node):
    keepdims = bool(node.attr("keepdims", 1))  # read even when the op is an identity
    axes = reduce_axes(node, len(node.shape(0)), node.optional_const(1, "axes"))
    if axes is None:
        return [node.input(0)]
    x = node.input(0)

    def reduce(cls: type[graph.GraphOp], v: SSAValue, keep: bool = keepdims) -> SSAValue:
        return node.emit(cls, [v], axes=axes, keepdims=keep)

    op = node.op_type
    if op in REDUCTIONS:
        if node.element_type(0) == i1 and op in ("ReduceMax", "ReduceMin"):
            # 0/1 in i32; over no elements max gives INT32_MIN and min INT32_MAX,
            # which `> 0` makes false and true (ONNX's empty-set values for bool)
            wide = reduce(REDUCTIONS[op], node.emit(graph.CastOp, [x], to=i32))
            return [node.emit(graph.GreaterOp, [wide, node.scalar(0, wide)])]
        return [reduce(REDUCTIONS[op], x)]
    if op == "ReduceL1":
        return [reduce(graph.ReduceSumOp, node.emit(graph.AbsOp, [x]))]
    if op in ("ReduceL2", "ReduceSumSquare"):
        total = reduce(graph.ReduceSumOp, node.emit(graph.MulOp, [x, x]))
        return [node.emit(graph.SqrtOp, [total]) if op == "ReduceL2" else total]
    if op == "ReduceLogSum":
        return [node.emit(graph.LogOp, [reduce(graph.ReduceSumOp, x)])]
    # ReduceLogSumExp: log(sum(exp(x - m))) + m, m the maximum (kept for the broadcast).
    m = reduce(graph.ReduceMaxOp, x, keep=True)
    total = reduce(graph.ReduceSumOp, node.emit(graph.ExpOp, [node.emit(graph.SubOp, [x, m])]), keep=True)
    out = node.emit(graph.AddOp, [node.emit(graph.LogOp, [total]), m])
    if not keepdims:
        out = node.emit(graph.SqueezeOp, [out], axes=axes)
    return [out]


@converter("CumSum", "CumProd")
def convert_cumulative(node: Node):
    rank = len(node.shape(0))
    axis = int(node.const(1, "axis").reshape(-1)[0])
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    kind = "sum" if node.op_type == "CumSum" else "prod"
    exclusive = bool(node.attr("exclusive", 0))
    reverse = bool(node.attr("reverse", 0))
    return [node.emit(graph.CumulativeOp, [node.input(0)], axis=axis % rank, kind=kind,
                      exclusive=exclusive, reverse=reverse)]  # fmt: skip
