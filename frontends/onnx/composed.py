"""Converters of small ONNX operators that are exact compositions of graph ops (so
they fuse with their neighbours), each as the ONNX function that defines it:

- Mean: the inputs added in order, divided by their count;
- MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes`;
- LpNormalization: x / ||x||_p along `axis` (p = 1: sum of |x|; p = 2: the root of
  the sum of squares), 0 where the norm is 0;
- DynamicQuantizeLinear: the uint8 scale and zero point of x's range widened to
  include 0, then x quantized with them (round half to even, saturated to [0, 255]);
- HannWindow, HammingWindow, BlackmanWindow: a constant, computed at import from the
  window's size (which must be known then: it is the output's shape).
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import f16, f32, f64, i16

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import ONNX_TYPES, Node, converter, onnx_type_name


@converter("Mean")
def convert_mean(node: Node):
    values = node.inputs()
    total = values[0]
    for v in values[1:]:
        total = node.emit(graph.AddOp, [total, v])
    if len(values) == 1:
        return [total]
    return [node.emit(graph.DivOp, [total, node.scalar(float(len(values)), total)])]


def _require_float(node: Node) -> None:
    element = node.element_type(0)
    if element not in (f16, f32, f64):
        raise node.error(f"input of element type {element} is not supported (floating point only)")


@converter("MeanVarianceNormalization")
def convert_mean_variance_normalization(node: Node):
    _require_float(node)
    rank = len(node.shape(0))
    axes = [int(a) for a in node.attr("axes", [0, 2, 3])]
    if any(not -rank <= a < rank for a in axes):
        raise node.error(f"axes {axes} are out of range for rank {rank}")
    axes = sorted({a % rank for a in axes})
    x = node.input(0)
    mean = node.emit(graph.ReduceMeanOp, [x], axes=axes, keepdims=True)
    mean_of_squares = node.emit(graph.ReduceMeanOp, [node.emit(graph.MulOp, [x, x])], axes=axes, keepdims=True)
    variance = node.emit(graph.SubOp, [mean_of_squares, node.emit(graph.MulOp, [mean, mean])])
    deviation = node.emit(graph.AddOp, [node.emit(graph.SqrtOp, [variance]), node.scalar(1e-9, x)])
    return [node.emit(graph.DivOp, [node.emit(graph.SubOp, [x, mean]), deviation])]


@converter("LpNormalization")
def convert_lp_normalization(node: Node):
    _require_float(node)
    axis = node.axis_attr(len(node.shape(0)))
    p = int(node.attr("p", 2))
    if p not in (1, 2):
        raise node.error(f"p={p} is not supported (1 or 2)")
    x = node.input(0)
    magnitude = node.emit(graph.AbsOp, [x]) if p == 1 else node.emit(graph.MulOp, [x, x])
    norm = node.emit(graph.ReduceSumOp, [magnitude], axes=[axis], keepdims=True)
    if p == 2:
        norm = node.emit(graph.SqrtOp, [norm])
    zero = node.scalar(0.0, x)
    is_zero = node.emit(graph.EqualOp, [norm, zero])
    return [node.emit(graph.WhereOp, [is_zero, zero, node.emit(graph.DivOp, [x, norm])])]


@converter("DynamicQuantizeLinear")
def convert_dynamic_quantize_linear(node: Node):
    if node.element_type(0) != f32:
        raise node.error(f"input of element type {node.element_type(0)} is not supported (float32)")
    x = node.input(0)
    zero, top = node.scalar(0.0, x), node.scalar(255.0, x)
    low = node.emit(graph.MinimumOp, [node.emit(graph.ReduceMinOp, [x], keepdims=False), zero])
    high = node.emit(graph.MaximumOp, [node.emit(graph.ReduceMaxOp, [x], keepdims=False), zero])
    scale = node.emit(graph.DivOp, [node.emit(graph.SubOp, [high, low]), top])
    initial = node.emit(graph.SubOp, [zero, node.emit(graph.DivOp, [low, scale])])
    zero_point = node.emit(graph.RoundOp, [node.emit(graph.ClipOp, [initial], min=0.0, max=255.0)])
    quantized = node.emit(graph.AddOp, [node.emit(graph.RoundOp, [node.emit(graph.DivOp, [x, scale])]), zero_point])
    quantized = node.emit(graph.ClipOp, [quantized], min=0.0, max=255.0)
    outputs = [node.emit(graph.CastOp, [v], to=i16) for v in (quantized, zero_point)]
    for v in outputs:  # uint8 values, held in i16 (importer.UNSIGNED)
        node.importer.unsigned[v] = 8
    return [outputs[0], scale, outputs[1]]


def _window(op_type: str, size: int, periodic: bool) -> np.ndarray:
    """The window of `size` points (float64), as the ONNX reference computes it."""
    n = np.arange(size, dtype=np.float64)
    period = size if periodic else size - 1
    if op_type == "HannWindow":
        return np.sin(n * np.pi / period) ** 2
    if op_type == "HammingWindow":
        alpha = 25.0 / 46.0
        return alpha - np.cos(n * np.pi * 2 / period) * (1 - alpha)
    return np.cos(n * np.pi * 2 / period) * -0.5 + np.cos(n * np.pi * 4 / period) * 0.08 + 0.42


@converter("HannWindow", "HammingWindow", "BlackmanWindow")
def convert_window(node: Node):
    size = np.asarray(node.const(0, "size"))
    if size.size != 1 or size.dtype.kind not in "iu":
        raise node.error(f"size must be one integer, not {size.dtype} of shape {size.shape}")
    size = int(size.reshape(-1)[0])
    periodic = int(node.attr("periodic", 1))
    if size < 1 or (size == 1 and not periodic):
        raise node.error(f"a window of size {size} is empty or undefined (periodic={periodic})")
    to = int(node.attr("output_datatype", onnx.TensorProto.FLOAT))
    if to not in ONNX_TYPES:
        raise node.error(f"output_datatype {onnx_type_name(to)} is not supported")
    return [_window(node.op_type, size, bool(periodic)).astype(ONNX_TYPES[to][1])]
