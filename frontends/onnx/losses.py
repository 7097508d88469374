"""Converters of LogSoftmax and the classification losses, composed of graph ops.

- LogSoftmax: (x - max) - log(sum(exp(x - max))) along `axis` (no log of a
  probability that underflowed to 0);
- NegativeLogLikelihoodLoss on x [N, C, d...] and integer targets [N, d...]: the
  picked value x[n, target[n, d...], d...] is a one-hot mask (target == c, c along
  the class axis) applied with a where and summed over the classes — no data-
  dependent gather, so a target out of range picks 0 instead of reading outside x;
  the class weight is picked the same way; `ignore_index` zeroes the loss and the
  weight of its targets; `reduction` none, sum, or mean (weighted: sum of the
  losses over the sum of the weights, as onnx's reference);
- SoftmaxCrossEntropyLoss: NLL of LogSoftmax(x, axis=1), the log-probabilities as
  an optional second output.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import Node, converter


def log_softmax(node: Node, x: SSAValue, axis: int) -> SSAValue:
    peak = node.emit(graph.ReduceMaxOp, [x], axes=[axis], keepdims=True)
    shifted = node.emit(graph.SubOp, [x, peak])
    total = node.emit(graph.ReduceSumOp, [node.emit(graph.ExpOp, [shifted])], axes=[axis], keepdims=True)
    return node.emit(graph.SubOp, [shifted, node.emit(graph.LogOp, [total])])


@converter("LogSoftmax")
def convert_log_softmax(node: Node):
    xs = node.shape(0)
    if node.element_type(0) != f32:
        raise node.error(f"input of element type {node.element_type(0)} is not supported (float32)")
    return [log_softmax(node, node.input(0), node.axis_attr(len(xs)))]


def nll_loss(node: Node, log_prob: SSAValue, quirk_minus_one: bool) -> SSAValue:
    """The reduced negative log-likelihood of the targets (input 1) under `log_prob`
    [N, C, d...], with the optional class weights (input 2)."""
    xs = graph.shape_of(log_prob.type)
    ts = node.shape(1)
    if len(xs) < 2 or ts != (xs[0], *xs[2:]):
        raise node.error(f"target of shape {ts} does not fit input {xs} ([N, C, d...] and [N, d...])")
    if str(node.element_type(1)) not in ("i32", "i64"):
        raise node.error(f"target of element type {node.element_type(1)} is not supported (int32, int64)")
    reduction = node.attr("reduction", "mean")
    if reduction not in ("none", "sum", "mean"):
        raise node.error(f"unsupported reduction '{reduction}'")
    ignore_index = node.attr("ignore_index", None)
    classes = xs[1]
    target = node.input(1)
    element = graph.ranked(target.type).get_element_type()
    dtype = np.int32 if str(element) == "i32" else np.int64
    class_shape = [1, classes] + [1] * (len(xs) - 2)
    index = node.constant(np.arange(classes, dtype=dtype).reshape(class_shape), "class_index")
    one_hot = node.emit(graph.EqualOp, [node.emit(graph.UnsqueezeOp, [target], axes=[1]), index])
    zero = node.scalar(0.0, log_prob)

    def pick(values: SSAValue) -> SSAValue:
        return node.emit(graph.ReduceSumOp, [node.emit(graph.WhereOp, [one_hot, values, zero])], axes=[1], keepdims=False)

    loss = node.emit(graph.NegOp, [pick(log_prob)])
    weight = None
    if node.has_input(2):
        if node.shape(2) != (classes,):
            raise node.error(f"weight of shape {node.shape(2)} must have one value per class ({classes})")
        w = node.input(2)
        weight = pick(node.emit(graph.ReshapeOp, [w], shape=class_shape) if not node.is_const(2)
                      else node.constant(node.const(2, "weight").reshape(class_shape), node.proto.input[2]))
    if ignore_index is not None:
        ignored = node.emit(graph.EqualOp, [target, node.constant(np.array(int(ignore_index), dtype), "ignore_index")])
        kept = node.emit(graph.WhereOp, [ignored, zero, node.scalar(1.0, log_prob)])
        weight = kept if weight is None else node.emit(graph.MulOp, [weight, kept])
        if quirk_minus_one and int(ignore_index) == -1 and not node.has_input(2):
            # onnx's reference NLL skips the ignored targets but, for ignore_index
            # -1 without weights, still averages over all of them.
            loss = node.emit(graph.MulOp, [loss, kept])
            weight = None
    if weight is not None:
        loss = node.emit(graph.MulOp, [loss, weight])
    if reduction == "none":
        return loss
    total = node.emit(graph.ReduceSumOp, [loss], keepdims=False)
    if reduction == "sum":
        return total
    if weight is None:
        count = float(np.prod(ts))
        return node.emit(graph.DivOp, [total, node.scalar(count, total)])
    return node.emit(graph.DivOp, [total, node.emit(graph.ReduceSumOp, [weight], keepdims=False)])


def check_input(node: Node) -> None:
    if node.element_type(0) != f32:
        raise node.error(f"input of element type {node.element_type(0)} is not supported (float32)")


@converter("NegativeLogLikelihoodLoss")
def convert_nll_loss(node: Node):
    check_input(node)
    return [nll_loss(node, node.input(0), quirk_minus_one=True)]


@converter("SoftmaxCrossEntropyLoss")
def convert_softmax_cross_entropy(node: Node):
    check_input(node)
    if len(node.shape(0)) < 2:
        raise node.error(f"scores of shape {node.shape(0)} need a class axis")
    log_prob = log_softmax(node, node.input(0), 1)
    return [nll_loss(node, log_prob, quirk_minus_one=False), log_prob]
