"""Converters of the neural-network ONNX operators: convolution, Gemm/MatMul,
pooling, normalizations, softmax, ArgMax/ArgMin (the Reduce* family: reduce.py).

Layout decisions made here, because they are cheap at import time and save the
graph passes work:

- `auto_pad` becomes explicit `pads` (the graph ops know only explicit padding);
- Gemm and MatMul with a 2-D weight initializer become `graph.dense`, whose weight
  is [N, K] (TVM's dense): the initializer is transposed once, in the store, and
  Gemm's `alpha`/`beta` are folded into the weight and bias when those are known;
- convolutions and pooling have 1 to 3 spatial axes (1-D ones are lifted to 2-D
  over a height of 1, so alter-layout may block them);
- ConvTranspose is a conv2d of the zero-interleaved input (gathers and masks)
  with the flipped, channel-swapped weight (the convolutions built on these:
  conv_variants.py);
- InstanceNormalization is spatial reductions and elementwise ops (they fuse);
  ArgMax/ArgMin are a max, an equality mask and a max over the masked indices;
- LayerNormalization's scale/bias are broadcast to the normalized shape if they
  are constants of a smaller rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import f16, f32, i32
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import Node, converter
from tilecraft.utils.symbolic import SymExpr


def window_pads(node: Node, spatial: Sequence[int], kernel: Sequence[int], strides, dilations) -> list[int]:
    """Explicit [begin..., end...] pads for a convolution or pooling window."""
    auto_pad = node.attr("auto_pad", "NOTSET")
    rank = len(spatial)
    if auto_pad == "NOTSET":
        pads = [int(p) for p in node.attr("pads", [0] * 2 * rank)]
        if len(pads) != 2 * rank:
            raise node.error(f"pads needs {2 * rank} values, got {len(pads)}")
        return pads
    if auto_pad == "VALID":
        node.ignore("pads")
        return [0] * 2 * rank
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"unsupported auto_pad '{auto_pad}'")
    node.ignore("pads")
    begin, end = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        # SAME_UPPER puts the odd extra pad at the end, SAME_LOWER at the beginning.
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


def nondefault(**kw):
    """Attributes without their default values: (value, default) pairs."""
    return {k: v for k, (v, default) in kw.items() if list(v) != list(default)}


def lift_1d(node: Node, value: SSAValue) -> SSAValue:
    """[N, C, L] -> [N, C, 1, L]: a 1-D window op is the 2-D one over a height of 1."""
    return node.emit(graph.UnsqueezeOp, [value], axes=[2])


def lift_pads(pads: list[int]) -> list[int]:
    """1-D pads [begin, end] as 2-D pads [0, begin, 0, end]."""
    return [0, pads[0], 0, pads[1]]


def convolution(node: Node, x: SSAValue, w: SSAValue, bias: SSAValue | None = None) -> SSAValue:
    """`x` convolved by `w` (+ `bias`) with the node's Conv attributes (kernel_shape,
    strides, dilations, pads or auto_pad, group): 2-D and 3-D; 1-D ones ([N, C, L])
    as 2-D over a height of 1 (so alter-layout may block them as 2-D ones)."""
    xs, ws = graph.shape_of(x.type), graph.shape_of(w.type)
    if len(xs) not in (3, 4, 5) or len(ws) != len(xs):
        raise node.error(f"only 1-D, 2-D and 3-D convolutions are supported, got input shape {xs}")
    one_d = len(xs) == 3
    rank = len(xs) - 2
    kernel = [int(k) for k in node.attr("kernel_shape", ws[2:])]
    if kernel != list(ws[2:]):
        raise node.error(f"kernel_shape {kernel} does not match the weight's {list(ws[2:])}")
    strides = [int(s) for s in node.attr("strides", [1] * rank)]
    dilations = [int(d) for d in node.attr("dilations", [1] * rank)]
    pads = window_pads(node, xs[2:], kernel, strides, dilations)
    group = int(node.attr("group", 1))
    if one_d:
        x, w = lift_1d(node, x), lift_1d(node, w)
        strides, dilations, pads = [1, *strides], [1, *dilations], lift_pads(pads)
    rank = len(strides)
    attributes = nondefault(strides=(strides, [1] * rank), pads=(pads, [0] * 2 * rank), dilations=(dilations, [1] * rank))
    if group != 1:
        attributes["groups"] = group
    y = node.emit(graph.Conv2dOp, [x, w] + ([bias] if bias is not None else []), **attributes)
    return node.emit(graph.SqueezeOp, [y], axes=[2]) if one_d else y


@converter("Conv")
def convert_conv(node: Node):
    inputs = [node.input(0), node.input(1)] + ([node.input(2)] if node.has_input(2) else [])
    # float16: accumulated in float32 and rounded once, as the reference computes (a
    # float16 sum rounds at every step and drifts by an ulp or more)
    half = node.element_type(0) == f16
    if half:
        inputs = [node.emit(graph.CastOp, [v], to=f32) for v in inputs]
    y = convolution(node, *inputs)
    return [node.emit(graph.CastOp, [y], to=f16) if half else y]


@converter("ConvInteger")
def convert_conv_integer(node: Node):
    """(x - x_zero_point) convolved by (w - w_zero_point, one per output channel or
    one for all) in int32, which holds every 8-bit product sum exactly."""
    x = node.emit(graph.CastOp, [node.input(0)], to=i32)
    w = node.emit(graph.CastOp, [node.input(1)], to=i32)
    if node.has_input(2):
        if int(np.prod(node.shape(2))) != 1:
            raise node.error(f"x_zero_point of shape {node.shape(2)} must be one value")
        zero = node.emit(graph.ReshapeOp, [node.emit(graph.CastOp, [node.input(2)], to=i32)], shape=[])
        x = node.emit(graph.SubOp, [x, zero])
    if node.has_input(3):
        ws = node.shape(1)
        count = int(np.prod(node.shape(3)))
        if count not in (1, ws[0]):
            raise node.error(f"w_zero_point of shape {node.shape(3)} must be one value or one per output channel")
        shape = [count] + [1] * (len(ws) - 1) if count > 1 else []
        zero = node.emit(graph.ReshapeOp, [node.emit(graph.CastOp, [node.input(3)], to=i32)], shape=shape)
        w = node.emit(graph.SubOp, [w, zero])
    return [convolution(node, x, w)]


def flipped_transposed_weight(node: Node, weight: np.ndarray | SSAValue, group: int, kernel: list[int]) -> SSAValue:
    """ConvTranspose's weight [C_in, C_out/g, kernel...] as the equivalent convolution's
    [C_out, C_in/g, kernel...], flipped in space: computed here when it is known, as
    reshape, transpose and reversing gathers when it is computed at run time."""
    spatial = list(range(3, 3 + len(kernel)))  # of the [g, C_in/g, C_out/g, kernel...] view
    if isinstance(weight, np.ndarray):
        c_in, c_out_g = weight.shape[:2]
        w = weight.reshape(group, c_in // group, c_out_g, *kernel).transpose(0, 2, 1, *spatial)
        w = np.flip(w.reshape(group * c_out_g, c_in // group, *kernel), axis=tuple(range(2, 2 + len(kernel))))
        return node.constant(np.ascontiguousarray(w), node.proto.input[1] + ".conv")
    c_in, c_out_g = graph.shape_of(weight.type)[:2]
    w = node.emit(graph.ReshapeOp, [weight], shape=[group, c_in // group, c_out_g, *kernel])
    w = node.emit(graph.TransposeOp, [w], perm=[0, 2, 1, *spatial])
    w = node.emit(graph.ReshapeOp, [w], shape=[group * c_out_g, c_in // group, *kernel])
    for axis, k in enumerate(kernel, start=2):
        if k > 1:
            w = node.emit(graph.GatherOp, [w, node.constant(np.arange(k - 1, -1, -1, dtype=np.int64), "reverse")], axis=axis)
    return w


def transposed_pads(node: Node, spatial, kernel, strides, dilations, extra) -> list[int]:
    """ConvTranspose's [begin..., end...] pads, from `pads`, `auto_pad` or
    `output_shape` (as onnx's reference: the output is written from the top left, so
    an `output_shape` sets the end pads; SAME_* split the total like convolutions)."""
    natural = [s * (n - 1) + e + (k - 1) * d + 1 for n, k, s, d, e in zip(spatial, kernel, strides, dilations, extra)]
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise node.error(f"unsupported auto_pad '{auto_pad}'")
    output_shape = node.attr("output_shape", None)
    if output_shape is not None:
        output_shape = [int(v) for v in output_shape][-len(spatial):]
    if node.attr("pads", None) is not None:
        pads = [int(v) for v in node.attr("pads")]
        if len(pads) != 2 * len(spatial):
            raise node.error(f"pads needs {2 * len(spatial)} values, got {len(pads)}")
        begin = pads[: len(spatial)]
        end = pads[len(spatial) :] if output_shape is None else [n - b - o for n, b, o in zip(natural, begin, output_shape)]
        return begin + end
    if auto_pad.startswith("SAME"):
        out = output_shape or [n * s for n, s in zip(spatial, strides)]
        total = [n - o for n, o in zip(natural, out)]
        small = [t // 2 for t in total]
        large = [t - t // 2 for t in total]
        return small + large if auto_pad == "SAME_UPPER" else large + small
    if output_shape is not None:
        return [0] * len(spatial) + [n - o for n, o in zip(natural, output_shape)]
    return [0] * 2 * len(spatial)


@converter("ConvTranspose")
def convert_conv_transpose(node: Node):
    """ConvTranspose in 1-D, 2-D and 3-D: see `transposed_convolution`."""
    xs, ws = node.shape(0), node.shape(1)
    if len(xs) not in (3, 4, 5) or len(ws) != len(xs):
        raise node.error(f"only 1-D, 2-D and 3-D transposed convolutions are supported, got input shape {xs}")
    rank = len(xs) - 2
    kernel = [int(k) for k in node.attr("kernel_shape", ws[2:])]
    if kernel != list(ws[2:]):
        raise node.error(f"kernel_shape {kernel} does not match the weight's {list(ws[2:])}")
    strides = [int(v) for v in node.attr("strides", [1] * rank)]
    dilations = [int(v) for v in node.attr("dilations", [1] * rank)]
    extra = [int(v) for v in node.attr("output_padding", [0] * rank)]
    group = int(node.attr("group", 1))
    pads = transposed_pads(node, xs[2:], kernel, strides, dilations, extra)
    weight = node.const(1, "weight") if node.is_const(1) else node.input(1)
    bias = node.input(2) if node.has_input(2) else None
    geometry = Transposed(kernel, strides, dilations, pads, extra)
    return [transposed_convolution(node, node.input(0), weight, bias, group, geometry)]


@dataclass(frozen=True)
class Transposed:
    """The window of a transposed convolution: `pads` [begin..., end...] crop the
    full output, `extra` (output_padding) adds to its end."""

    kernel: list[int]
    strides: list[int]
    dilations: list[int]
    pads: list[int]
    extra: list[int]


def transposed_convolution(
    node: Node, x: SSAValue, weight: np.ndarray | SSAValue, bias: SSAValue | None, group: int, geometry: Transposed
) -> SSAValue:
    """A convolution of the input with zeros inserted between its elements (stride
    - 1 per gap: a gather and a 0/1 mask per axis), padded by dilation * (k - 1)
    less the pads (cropped where that is negative), by the flipped weight with in
    and out channels swapped. 1-D ones ([N, C, L]) as 2-D over a height of 1."""
    kernel, strides, dilations = geometry.kernel, geometry.strides, geometry.dilations
    pads, extra = geometry.pads, geometry.extra
    xs = graph.shape_of(x.type)
    ws = weight.shape if isinstance(weight, np.ndarray) else graph.shape_of(weight.type)
    rank = len(xs) - 2
    if any(e < 0 or e >= max(s, d) for e, s, d in zip(extra, strides, dilations)):
        raise node.error(f"output_padding {extra} must be below the stride or dilation")
    c_in = ws[0]
    if c_in != xs[1] or c_in % group:
        raise node.error(f"weight {tuple(ws)} does not fit input {xs} with group {group}")
    one_d = rank == 1
    if one_d:
        xs = (xs[0], xs[1], 1, xs[2])
        kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
        pads, extra = lift_pads(pads), [0, *extra]
        weight = weight[:, :, None, :] if isinstance(weight, np.ndarray) else lift_1d(node, weight)
        x = lift_1d(node, x)
        rank = 2
    w = flipped_transposed_weight(node, weight, group, kernel)
    for axis, s in enumerate(strides, start=2):
        if s == 1:
            continue
        n = (xs[axis] - 1) * s + 1
        shape = [1] * (rank + 2)
        shape[axis] = n
        index = node.constant(np.arange(n, dtype=np.int64) // s, "upsample_index")
        mask = node.constant((np.arange(n) % s == 0).astype(np.float32).reshape(shape), "upsample_mask")
        x = node.emit(graph.MulOp, [node.emit(graph.GatherOp, [x, index], axis=axis), mask])
    begin = [d * (k - 1) - p for d, k, p in zip(dilations, kernel, pads[:rank])]
    end = [d * (k - 1) - p + e for d, k, p, e in zip(dilations, kernel, pads[rank:], extra)]
    conv_pads = begin + end
    if any(p < 0 for p in conv_pads):
        shape = graph.shape_of(x.type)
        starts = [max(0, -p) for p in begin]
        ends = [shape[2 + i] - max(0, -p) for i, p in enumerate(end)]
        x = node.emit(graph.SliceOp, [x], starts=starts, ends=ends, axes=list(range(2, 2 + rank)))
        conv_pads = [max(0, p) for p in conv_pads]
    attributes = nondefault(pads=(conv_pads, [0] * 2 * rank), dilations=(dilations, [1] * rank))
    if group != 1:
        attributes["groups"] = group
    y = node.emit(graph.Conv2dOp, [x, w] + ([bias] if bias is not None else []), **attributes)
    return node.emit(graph.SqueezeOp, [y], axes=[2]) if one_d else y


def dense(node: Node, x: SSAValue, weight_nk: np.ndarray, hint: str, bias: np.ndarray | None = None) -> SSAValue:
    inputs = [x, node.constant(np.ascontiguousarray(weight_nk), hint)]
    if bias is not None:
        inputs.append(node.constant(bias, node.proto.input[2]))
    return node.emit(graph.DenseOp, inputs)


@converter("Gemm")
def convert_gemm(node: Node):
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    trans_a, trans_b = int(node.attr("transA", 0)), int(node.attr("transB", 0))
    a = node.input(0)
    if trans_a:
        a = node.emit(graph.TransposeOp, [a], perm=[1, 0])
    c = node.optional_const(2, "C") if node.is_const(2) else None
    if node.is_const(1):
        b = node.const(1, "B")
        w = b if trans_b else b.T
        if alpha != 1.0:
            w = (w * np.float32(alpha)).astype(b.dtype)
        n = w.shape[0]
        bias = None
        # C folds into dense's bias when it is one value per output column.
        if c is not None and c.size in (1, n) and (c.ndim <= 1 or c.shape[-1] == c.size):
            bias = np.broadcast_to((c * np.float32(beta)).astype(np.float32).reshape(-1), (n,)).copy()
        hint = node.proto.input[1] + ("" if trans_b else ".T") + ("" if alpha == 1.0 else ".scaled")
        y = dense(node, a, w, hint, bias)
        if bias is not None or not node.has_input(2):
            return [y]
    else:
        b = node.input(1)
        if not trans_b:
            b = node.emit(graph.TransposeOp, [b], perm=[1, 0])
        y = node.emit(graph.DenseOp, [a, b])
        if alpha != 1.0:
            y = node.emit(graph.MulOp, [y, node.scalar(alpha, y)])
        if not node.has_input(2):
            return [y]
    if c is not None:
        cv = node.constant((c * np.float32(beta)).astype(c.dtype), node.proto.input[2])
    else:
        cv = node.input(2)
        if beta != 1.0:
            cv = node.emit(graph.MulOp, [cv, node.scalar(beta, cv)])
    return [node.emit(graph.AddOp, [y, cv])]


@converter("MatMul")
def convert_matmul(node: Node):
    b_shape = node.shape(1)
    if node.is_const(1) and len(b_shape) == 2 and not node.is_const(0) and node.element_type(0) != f16:
        b = node.const(1, "B")
        return [dense(node, node.input(0), b.T, node.proto.input[1] + ".T")]
    a, b = node.input(0), node.input(1)
    half = node.element_type(0) == f16
    if half:
        # float16 products are summed in float32 and rounded once, as numpy and
        # onnxruntime do; a float16 running sum loses a unit in the last place.
        a, b = node.emit(graph.CastOp, [a], to=f32), node.emit(graph.CastOp, [b], to=f32)
    y = matmul(node, a, b)
    return [node.emit(graph.CastOp, [y], to=f16) if half else y]


def matmul(node: Node, a: SSAValue, b: SSAValue) -> SSAValue:
    """a @ b with numpy's rules for 1-D operands: promoted to a matrix, the axis
    dropped after."""
    rank_a, rank_b = len(graph.shape_of(a.type)), len(graph.shape_of(b.type))
    if rank_a == 1:
        a = node.emit(graph.UnsqueezeOp, [a], axes=[0])
    if rank_b == 1:
        b = node.emit(graph.UnsqueezeOp, [b], axes=[1])
    y = node.emit(graph.MatmulOp, [a, b])
    drop = ([-2] if rank_a == 1 else []) + ([-1] if rank_b == 1 else [])
    if drop:
        rank = len(graph.shape_of(y.type))
        y = node.emit(graph.SqueezeOp, [y], axes=sorted(d % rank for d in drop))
    return y


def pool_attributes(node: Node, count_include_pad: bool, storage_order_read: bool = False) -> tuple[SSAValue, dict]:
    """The input (a 1-D one lifted to 2-D: see `lift_1d`) and graph pooling
    attributes; `storage_order` (which orders MaxPool's Indices) must be 0 unless
    the caller read it."""
    xs = node.shape(0)
    if len(xs) not in (3, 4, 5):
        raise node.error(f"only 1-D, 2-D and 3-D pooling is supported, got input shape {xs}")
    rank = len(xs) - 2
    kernel = [int(k) for k in node.attr("kernel_shape")]
    if len(kernel) != rank:
        raise node.error(f"kernel_shape {kernel} does not have one value per spatial axis of {xs}")
    strides = [int(s) for s in node.attr("strides", [1] * rank)]
    dilations = [int(d) for d in node.attr("dilations", [1] * rank)]
    if len(strides) != rank or len(dilations) != rank:
        raise node.error(f"strides {strides} and dilations {dilations} need {rank} values")
    if not storage_order_read and int(node.attr("storage_order", 0)) != 0:
        raise node.error("unsupported storage_order 1")
    pads = window_pads(node, xs[2:], kernel, strides, dilations)
    x = node.input(0)
    if rank == 1:
        x, kernel, strides, pads = lift_1d(node, x), [1, *kernel], [1, *strides], lift_pads(pads)
        dilations = [1, *dilations]
    rank = len(kernel)
    attributes = {
        "kernel": kernel,
        **nondefault(strides=(strides, [1] * rank), pads=(pads, [0] * 2 * rank), dilations=(dilations, [1] * rank)),
    }
    if int(node.attr("ceil_mode", 0)):
        attributes["ceil_mode"] = True
    if count_include_pad and int(node.attr("count_include_pad", 0)):
        attributes["count_include_pad"] = True
    return x, attributes


def pool(node: Node, cls: type[graph.GraphOp], count_include_pad: bool) -> SSAValue:
    x, attributes = pool_attributes(node, count_include_pad)
    y = node.emit(cls, [x], **attributes)
    return node.emit(graph.SqueezeOp, [y], axes=[2]) if len(node.shape(0)) == 3 else y


@converter("MaxPool")
def convert_max_pool(node: Node):
    """graph.max_pool2d; the Indices output is graph.max_pool_indices (of the same
    window, with `storage_order`)."""
    if not (len(node.proto.output) > 1 and node.proto.output[1]):
        return [pool(node, graph.MaxPool2dOp, False)]
    storage_order = int(node.attr("storage_order", 0))
    x, attributes = pool_attributes(node, False, storage_order_read=True)
    y = node.emit(graph.MaxPool2dOp, [x], **attributes)
    indices = node.emit(graph.MaxPoolIndicesOp, [x], **attributes, storage_order=storage_order or None)
    if len(node.shape(0)) == 3:
        y, indices = (node.emit(graph.SqueezeOp, [v], axes=[2]) for v in (y, indices))
    return [y, indices]


@converter("AveragePool")
def convert_avg_pool(node: Node):
    return [pool(node, graph.AvgPool2dOp, True)]


@converter("LpPool")
def convert_lp_pool(node: Node):
    """(sum over the window of |x|^p)^(1/p): an average pool of |x|^p counting the
    (zero) padding, times the window size. No ceil_mode (the divisor of windows that
    leave the padded input would no longer be the window size)."""
    if int(node.attr("ceil_mode", 0)):
        raise node.error("unsupported ceil_mode 1")
    p = float(node.attr("p", 2))
    x = node.input(0)
    if node.element_type(0) != f32:
        raise node.error(f"input of element type {node.element_type(0)} is not supported (float32)")
    magnitude = node.emit(graph.AbsOp, [x])
    powered = node.emit(graph.MulOp, [x, x]) if p == 2 else node.emit(graph.PowOp, [magnitude, node.scalar(p, x)])
    lifted, attributes = pool_attributes(node, False)
    if lifted is not x:  # 1-D: pool the lifted |x|^p instead
        powered = lift_1d(node, powered)
    attributes["count_include_pad"] = True
    window = int(np.prod(attributes["kernel"]))
    total = node.emit(graph.MulOp, [node.emit(graph.AvgPool2dOp, [powered], **attributes), node.scalar(float(window), x)])
    y = node.emit(graph.SqrtOp, [total]) if p == 2 else node.emit(graph.PowOp, [total, node.scalar(1.0 / p, x)])
    return [node.emit(graph.SqueezeOp, [y], axes=[2]) if len(node.shape(0)) == 3 else y]


@converter("GlobalAveragePool", "GlobalMaxPool")
def convert_global_pool(node: Node):
    rank = len(node.shape(0))
    if rank < 3:
        raise node.error("global pooling needs spatial axes")
    if node.op_type == "GlobalAveragePool" and rank == 4:
        return [node.emit(graph.GlobalAvgPool2dOp, [node.input(0)])]
    cls = graph.ReduceMeanOp if node.op_type == "GlobalAveragePool" else graph.ReduceMaxOp
    return [node.emit(cls, [node.input(0)], axes=list(range(2, rank)), keepdims=True)]


@converter("Softmax")
def convert_softmax(node: Node):
    axis = int(node.attr("axis", -1))
    x = node.input(0)
    if node.element_type(0) == f16:
        # float16 as numpy computes it: each step rounded to float16, the sum of the
        # exponentials taken in float32 (a float16 running sum drifts by units)
        axes = [axis]
        e = node.emit(graph.ExpOp, [node.emit(graph.SubOp, [x, node.emit(graph.ReduceMaxOp, [x], axes=axes)])])
        total = node.emit(graph.ReduceSumOp, [node.emit(graph.CastOp, [e], to=f32)], axes=axes)
        return [node.emit(graph.DivOp, [e, node.emit(graph.CastOp, [total], to=f16)])]
    return [node.emit(graph.SoftmaxOp, [x], axis=axis)]


def normalization_params(node: Node, normalized: tuple[int, ...], which: tuple[tuple[int, str], ...]) -> list[SSAValue]:
    """The scale/bias inputs of a normalization over the trailing `normalized` shape;
    constants of a smaller rank are broadcast to it here."""
    params = []
    for i, what in which:
        if not node.has_input(i):
            continue
        if node.shape(i) != normalized:
            if not node.is_const(i):
                raise node.error(f"{what} of shape {node.shape(i)} must have the normalized shape {normalized}")
            value = np.broadcast_to(node.const(i, what), normalized).copy()
            params.append(node.constant(value, node.proto.input[i]))
        else:
            params.append(node.input(i))
    return params


def stash_type(node: Node) -> None:
    """The precision of the statistics: float32 (1) is what tilecraft computes in."""
    stash = int(node.attr("stash_type", 1))
    if stash != 1:
        raise node.error(f"unsupported stash_type {stash} (statistics are computed in float32)")


@converter("LayerNormalization")
def convert_layer_norm(node: Node):
    """graph.layer_norm; the optional Mean and InvStdDev outputs (shape x.shape[:axis]
    + [1...]) as reductions: mean, mean of the squared deviation, 1 / sqrt(var + eps)."""
    stash_type(node)
    xs = node.shape(0)
    axis = int(node.attr("axis", -1)) % len(xs)
    epsilon = float(node.attr("epsilon", 1e-5))
    normalized = xs[axis:]
    x = node.input(0)
    if any(isinstance(n, SymExpr) for n in normalized):
        # Rows of a size known only when it runs: the scale and bias broadcast when
        # it runs, by a multiply and an add after the normalization.
        y = node.emit(graph.LayerNormOp, [x], axis=axis, epsilon=epsilon)
        if node.has_input(1):
            y = node.emit(graph.MulOp, [y, node.input(1)])
        if node.has_input(2):
            y = node.emit(graph.AddOp, [y, node.input(2)])
    else:
        params = normalization_params(node, normalized, ((1, "scale"), (2, "bias")))
        if len(params) == 1 and node.has_input(2):  # bias without scale cannot happen in ONNX
            raise node.error("bias without scale")
        y = node.emit(graph.LayerNormOp, [x, *params], axis=axis, epsilon=epsilon)
    if len(node.proto.output) == 1 or not any(node.proto.output[1:]):
        return [y]
    axes = list(range(axis, len(xs)))
    mean = node.emit(graph.ReduceMeanOp, [x], axes=axes, keepdims=True)
    centered = node.emit(graph.SubOp, [x, mean])
    variance = node.emit(graph.ReduceMeanOp, [node.emit(graph.MulOp, [centered, centered])], axes=axes, keepdims=True)
    std = node.emit(graph.SqrtOp, [node.emit(graph.AddOp, [variance, node.scalar(epsilon, x)])])
    return [y, mean, node.emit(graph.DivOp, [node.scalar(1.0, std), std])]


@converter("RMSNormalization")
def convert_rms_norm(node: Node):
    """x / sqrt(mean(x^2 over the axes from `axis`) + epsilon) * scale."""
    stash_type(node)
    xs = node.shape(0)
    if node.element_type(0) != f32:
        raise node.error(f"input of element type {node.element_type(0)} is not supported (float32)")
    axis = node.axis_attr(len(xs))
    epsilon = float(node.attr("epsilon", 1e-5))
    x = node.input(0)
    square_mean = node.emit(graph.ReduceMeanOp, [node.emit(graph.MulOp, [x, x])], axes=list(range(axis, len(xs))), keepdims=True)
    rms = node.emit(graph.SqrtOp, [node.emit(graph.AddOp, [square_mean, node.scalar(epsilon, x)])])
    y = node.emit(graph.MulOp, [x, node.emit(graph.DivOp, [node.scalar(1.0, rms), rms])])
    return [node.emit(graph.MulOp, [y, node.input(1)])]


def normalize_groups(node: Node, x: SSAValue, axes: list[int], epsilon: float) -> SSAValue:
    """(x - mean) / sqrt(var + epsilon) over `axes`, as reductions and elementwise ops."""
    mean = node.emit(graph.ReduceMeanOp, [x], axes=axes, keepdims=True)
    centered = node.emit(graph.SubOp, [x, mean])
    variance = node.emit(graph.ReduceMeanOp, [node.emit(graph.MulOp, [centered, centered])], axes=axes, keepdims=True)
    std = node.emit(graph.SqrtOp, [node.emit(graph.AddOp, [variance, node.scalar(epsilon, x)])])
    return node.emit(graph.DivOp, [centered, std])


def per_channel(node: Node, i: int, what: str, shape: list[int]) -> SSAValue:
    """Input `i` (one value per channel) reshaped to `shape` [C, 1, ...], which
    broadcasts over [N, C, spatial...]."""
    if node.shape(i) != (shape[0],):
        raise node.error(f"{what} of shape {node.shape(i)} must have one value per channel ({shape[0]})")
    if node.is_const(i):
        return node.constant(node.const(i, what).reshape(shape), node.proto.input[i])
    return node.emit(graph.ReshapeOp, [node.input(i)], shape=shape)


@converter("InstanceNormalization")
def convert_instance_norm(node: Node):
    """Per sample and channel over the spatial axes: (x - mean) / sqrt(var + eps)
    * scale[c] + bias[c], as reductions and elementwise ops (which fuse)."""
    xs = node.shape(0)
    if len(xs) < 3:
        raise node.error(f"input of shape {xs} has no spatial axes")
    epsilon = float(node.attr("epsilon", 1e-5))
    normalized = normalize_groups(node, node.input(0), list(range(2, len(xs))), epsilon)
    shape = [xs[1]] + [1] * (len(xs) - 2)
    scale, bias = per_channel(node, 1, "scale", shape), per_channel(node, 2, "bias", shape)
    return [node.emit(graph.AddOp, [node.emit(graph.MulOp, [normalized, scale]), bias])]


@converter("GroupNormalization")
def convert_group_norm(node: Node):
    """x [N, C, ...] viewed as [N, G, C/G * spatial], normalized over the last axis,
    then scale[c] and bias[c] (opset 21: one value per channel)."""
    stash_type(node)
    xs = node.shape(0)
    if len(xs) < 3:
        raise node.error(f"input of shape {xs} has no spatial axes")
    groups = int(node.attr("num_groups"))
    if groups <= 0 or xs[1] % groups:
        raise node.error(f"{xs[1]} channels do not split into num_groups {groups}")
    epsilon = float(node.attr("epsilon", 1e-5))
    grouped = node.emit(graph.ReshapeOp, [node.input(0)], shape=[xs[0], groups, int(np.prod(xs[1:])) // groups])
    normalized = node.emit(graph.ReshapeOp, [normalize_groups(node, grouped, [2], epsilon)], shape=list(xs))
    shape = [xs[1]] + [1] * (len(xs) - 2)
    scale, bias = per_channel(node, 1, "scale", shape), per_channel(node, 2, "bias", shape)
    return [node.emit(graph.AddOp, [node.emit(graph.MulOp, [normalized, scale]), bias])]


@converter("BatchNormalization")
def convert_batch_norm(node: Node):
    node.ignore("momentum")  # only updates running statistics in training
    if int(node.attr("training_mode", 0)):
        raise node.error("training_mode=1 is not supported (inference only)")
    if len(node.proto.output) > 1 and any(node.proto.output[1:]):
        raise node.error("the running mean/variance outputs are not supported (inference only)")
    epsilon = float(node.attr("epsilon", 1e-5))
    return [node.emit(graph.BatchNormOp, [node.input(i) for i in range(5)], epsilon=epsilon)]


@converter("ArgMax", "ArgMin")
def convert_arg_reduce(node: Node):
    """The index of the first (or, select_last_index, last) extreme along `axis`, as
    int64: the extreme, where x equals it, then the best index among those, a max
    over the (negated, for the first) indices."""
    xs = node.shape(0)
    axis = int(node.attr("axis", 0)) % len(xs)
    keepdims = bool(node.attr("keepdims", 1))
    last = int(node.attr("select_last_index", 0))
    x = node.input(0)
    if node.op_type == "ArgMin":  # the minimum of x is the maximum of -x
        x = node.emit(graph.NegOp, [x])
    best = node.emit(graph.ReduceMaxOp, [x], axes=[axis], keepdims=True)
    hit = node.emit(graph.EqualOp, [x, best])
    shape = [1] * len(xs)
    shape[axis] = xs[axis]
    index = np.arange(xs[axis], dtype=np.int64).reshape(shape)
    # max(i) finds the last hit, max(-i) the first; a miss scores below every hit.
    scored = index if last else -index
    miss = np.array(-xs[axis], np.int64)
    picked = node.emit(graph.WhereOp, [hit, node.constant(scored, "index"), node.constant(miss, "miss")])
    result = node.emit(graph.ReduceMaxOp, [picked], axes=[axis], keepdims=keepdims)
    return [result if last else node.emit(graph.NegOp, [result])]
