"""Converters of the model-zoo activations and small NN operators, each an exact
composition of elementwise graph ops (so they fuse with their neighbours):

- Elu, Selu, Celu, ThresholdedRelu, Shrink, PRelu: `where` on a comparison with 0
  or a threshold, exp for the negative branch;
- Softplus as max(x, 0) + log(1 + exp(-|x|)) (no overflow for large x), Softsign
  x / (1 + |x|), Mish x * tanh(softplus(x)), Swish x * sigmoid(alpha x), SwiGLU
  swish(a) * b;
- Hardmax: 1 at the first maximum along `axis` (the ArgMax recipe, compared with
  the index), 0 elsewhere;
- LRN: the squares summed over a window of channels (a padded channel axis and
  `size` slices added), then x / (bias + alpha / size * sum) ** beta.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f16, f32, f64
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import Node, converter


def select(node: Node, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return node.emit(graph.WhereOp, [cond, a, b])


def mul(node: Node, x: SSAValue, c: float) -> SSAValue:
    return node.emit(graph.MulOp, [x, node.scalar(c, x)])


def expm1(node: Node, x: SSAValue) -> SSAValue:
    """exp(x) - 1 (as onnx's reference computes it)."""
    return node.emit(graph.SubOp, [node.emit(graph.ExpOp, [x]), node.scalar(1.0, x)])


def softplus(node: Node, x: SSAValue) -> SSAValue:
    """log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)), which never overflows."""
    tail = node.emit(graph.ExpOp, [node.emit(graph.NegOp, [node.emit(graph.AbsOp, [x])])])
    log = node.emit(graph.LogOp, [node.emit(graph.AddOp, [tail, node.scalar(1.0, x)])])
    return node.emit(graph.AddOp, [node.emit(graph.MaximumOp, [x, node.scalar(0.0, x)]), log])


def require_float(node: Node) -> None:
    if node.element_type(0) != f32:
        raise node.error(f"input of element type {node.element_type(0)} is not supported (float32)")


def require_floating(node: Node, i: int = 0) -> None:
    element = node.element_type(i)
    if element not in (f16, f32, f64):
        raise node.error(f"input of element type {element} is not supported (floating point only)")


@converter("Elu")
def convert_elu(node: Node):
    require_floating(node)
    x = node.input(0)
    alpha = float(node.attr("alpha", 1.0))
    negative = node.emit(graph.LessOp, [x, node.scalar(0.0, x)])
    return [select(node, negative, mul(node, expm1(node, x), alpha), x)]


@converter("Selu")
def convert_selu(node: Node):
    require_float(node)
    x = node.input(0)
    alpha = float(node.attr("alpha", 1.67326319217681884765625))
    gamma = float(node.attr("gamma", 1.05070102214813232421875))
    positive = node.emit(graph.GreaterOp, [x, node.scalar(0.0, x)])
    below = mul(node, node.emit(graph.SubOp, [mul(node, node.emit(graph.ExpOp, [x]), alpha), node.scalar(alpha, x)]), gamma)
    return [select(node, positive, mul(node, x, gamma), below)]


@converter("Celu")
def convert_celu(node: Node):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    require_floating(node)
    x = node.input(0)
    alpha = float(node.attr("alpha", 1.0))
    zero = node.scalar(0.0, x)
    negative = mul(node, expm1(node, mul(node, x, 1.0 / alpha)), alpha)
    return [node.emit(graph.AddOp, [node.emit(graph.MaximumOp, [x, zero]), node.emit(graph.MinimumOp, [negative, zero])])]


@converter("ThresholdedRelu")
def convert_thresholded_relu(node: Node):
    require_float(node)
    x = node.input(0)
    alpha = float(node.attr("alpha", 1.0))
    above = node.emit(graph.GreaterOp, [x, node.scalar(alpha, x)])
    return [select(node, above, x, node.scalar(0.0, x))]


@converter("Shrink")
def convert_shrink(node: Node):
    """x + bias below -lambd, x - bias above lambd, 0 between."""
    require_float(node)
    x = node.input(0)
    lambd = float(node.attr("lambd", 0.5))
    bias = float(node.attr("bias", 0.0))
    low = node.emit(graph.LessOp, [x, node.scalar(-lambd, x)])
    high = node.emit(graph.GreaterOp, [x, node.scalar(lambd, x)])
    inner = select(node, high, node.emit(graph.SubOp, [x, node.scalar(bias, x)]), node.scalar(0.0, x))
    return [select(node, low, node.emit(graph.AddOp, [x, node.scalar(bias, x)]), inner)]


@converter("Softplus")
def convert_softplus(node: Node):
    require_float(node)
    return [softplus(node, node.input(0))]


@converter("Softsign")
def convert_softsign(node: Node):
    require_float(node)
    x = node.input(0)
    denominator = node.emit(graph.AddOp, [node.emit(graph.AbsOp, [x]), node.scalar(1.0, x)])
    return [node.emit(graph.DivOp, [x, denominator])]


@converter("Mish")
def convert_mish(node: Node):
    require_float(node)
    x = node.input(0)
    return [node.emit(graph.MulOp, [x, node.emit(graph.TanhOp, [softplus(node, x)])])]


@converter("PRelu")
def convert_prelu(node: Node):
    """x where x >= 0, slope * x elsewhere; slope broadcasts to x (unidirectionally).
    Models written for opset < 7 give one slope per channel as a [C] vector."""
    require_float(node)
    x, slope = node.input(0), node.input(1)
    xs, ss = node.shape(0), node.shape(1)
    legacy = node.importer.source_opset < 7 and len(ss) == 1 and len(xs) > 2 and ss[0] == xs[1] != xs[-1]
    if legacy:
        slope = node.emit(graph.ReshapeOp, [slope], shape=[ss[0]] + [1] * (len(xs) - 2))
        ss = graph.shape_of(slope.type)
    try:
        fits = graph.broadcast_shapes(xs, ss) == tuple(xs)
    except graph.ShapeError:
        fits = False
    if not fits:
        raise node.error(f"slope of shape {ss} does not broadcast to the input's {xs}")
    negative = node.emit(graph.LessOp, [x, node.scalar(0.0, x)])
    return [select(node, negative, node.emit(graph.MulOp, [x, slope]), x)]


@converter("Hardmax")
def convert_hardmax(node: Node):
    require_float(node)
    xs = node.shape(0)
    axis = node.axis_attr(len(xs))
    x = node.input(0)
    best = node.emit(graph.ReduceMaxOp, [x], axes=[axis], keepdims=True)
    hit = node.emit(graph.EqualOp, [x, best])
    shape = [1] * len(xs)
    shape[axis] = xs[axis]
    index = node.constant(np.arange(xs[axis], dtype=np.int64).reshape(shape), "index")
    # The first hit is the largest -index among hits; a miss scores below all.
    scored = select(node, hit, node.emit(graph.NegOp, [index]), node.constant(np.array(-xs[axis], np.int64), "miss"))
    first = node.emit(graph.NegOp, [node.emit(graph.ReduceMaxOp, [scored], axes=[axis], keepdims=True)])
    one_hot = node.emit(graph.EqualOp, [index, first])
    return [select(node, one_hot, node.scalar(1.0, x), node.scalar(0.0, x))]


@converter("LRN")
def convert_lrn(node: Node):
    """y = x / (bias + alpha / size * sum of x^2 over channels c - (size-1)//2 ..
    c + size//2) ** beta (AlexNet, GoogLeNet)."""
    require_float(node)
    xs = node.shape(0)
    if len(xs) < 3:
        raise node.error(f"input of shape {xs} has no channel and spatial axes")
    size = int(node.attr("size"))
    if size < 1:
        raise node.error(f"size {size} must be positive")
    alpha = float(node.attr("alpha", 1e-4))
    beta = float(node.attr("beta", 0.75))
    bias = float(node.attr("bias", 1.0))
    x = node.input(0)
    square = node.emit(graph.MulOp, [x, x])
    before, after = (size - 1) // 2, size // 2
    rank = len(xs)
    pads = [0] * (2 * rank)
    pads[1], pads[rank + 1] = before, after
    padded = node.emit(graph.PadOp, [square], pads=pads) if size > 1 else square
    total = None
    channels = xs[1]
    for offset in range(size):
        window = padded if size == 1 else node.emit(graph.SliceOp, [padded], starts=[offset], ends=[offset + channels], axes=[1])
        total = window if total is None else node.emit(graph.AddOp, [total, window])
    scaled = node.emit(graph.AddOp, [mul(node, total, alpha / size), node.scalar(bias, x)])
    denominator = node.emit(graph.PowOp, [scaled, node.scalar(beta, x)])
    return [node.emit(graph.DivOp, [x, denominator])]


def swish(node: Node, x: SSAValue, alpha: float) -> SSAValue:
    """x * sigmoid(alpha * x), in x's float type."""
    scaled = x if alpha == 1.0 else mul(node, x, alpha)
    return node.emit(graph.MulOp, [x, node.emit(graph.SigmoidOp, [scaled])])


@converter("Swish")
def convert_swish(node: Node):
    require_floating(node)
    return [swish(node, node.input(0), float(node.attr("alpha", 1.0)))]


@converter("SwiGLU")
def convert_swiglu(node: Node):
    """swish(a) * b; a and b have one shape (ONNX does not broadcast them)."""
    require_floating(node)
    if node.shape(0) != node.shape(1):
        raise node.error(f"inputs of shapes {node.shape(0)} and {node.shape(1)} differ (SwiGLU does not broadcast)")
    gate = swish(node, node.input(0), float(node.attr("alpha", 1.0)))
    return [node.emit(graph.MulOp, [gate, node.input(1)])]
