"""Converters of the convolution-like ONNX operators that are built from the
convolutions and pooling of nn.py and gathers/scatters:

- Col2Im: a transposed convolution of the columns with a one-hot weight;
- DeformConv: bilinear samples of the offset window taps (gathers), then a grouped
  1x1 convolution of them;
- CausalConvWithState: the past state (or zeros) before the input, a depthwise
  convolution, an optional SiLU, and the last k - 1 positions as the new state;
- MaxUnpool: MaxPool's values scattered into zeros at its Indices.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f16, f32, i32, i64
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import Node, converter
from tilecraft.frontends.onnx.nn import Transposed, lift_1d, transposed_convolution
from tilecraft.utils.dtypes import numpy_dtype


@converter("Col2Im")
def convert_col2im(node: Node):
    """The columns [N, C * prod(block), L] summed back into an image [N, C,
    image...]: a transposed convolution of the columns viewed as [N, C * prod(block),
    blocks...], C groups of one output channel each, whose weight is one-hot (column
    j of a block goes to window position j). The output padding makes up the
    image's part that no block reaches (its extent less the blocks' span)."""
    xs = node.shape(0)
    image = [int(v) for v in node.const(1, "image_shape")]
    block = [int(v) for v in node.const(2, "block_shape")]
    rank = len(image)
    if len(block) != rank or not 1 <= rank <= 3 or len(xs) != 3:
        raise node.error(f"image_shape {image} and block_shape {block} do not fit input {xs}")
    strides = [int(v) for v in node.attr("strides", [1] * rank)]
    dilations = [int(v) for v in node.attr("dilations", [1] * rank)]
    pads = [int(v) for v in node.attr("pads", [0] * 2 * rank)]
    size = int(np.prod(block))
    if xs[1] % size:
        raise node.error(f"input channels {xs[1]} are not a multiple of the block size {size}")
    channels = xs[1] // size
    blocks = [
        graph.pool_out(n, k, s, lo, hi, d)
        for n, k, s, lo, hi, d in zip(image, block, strides, pads[:rank], pads[rank:], dilations)
    ]
    if int(np.prod(blocks)) != xs[2]:
        raise node.error(f"{xs[2]} columns are not the {blocks} blocks of image {image}")
    reach = [(n - 1) * s + (k - 1) * d + 1 for n, k, s, d in zip(blocks, block, strides, dilations)]
    extra = [n + lo + hi - r for n, lo, hi, r in zip(image, pads[:rank], pads[rank:], reach)]
    columns = node.emit(graph.ReshapeOp, [node.input(0)], shape=[xs[0], xs[1], *blocks])
    one_hot = np.eye(size, dtype=numpy_dtype(node.element_type(0))).reshape(size, 1, *block)
    weight = np.tile(one_hot, (channels, 1, *[1] * rank))
    geometry = Transposed(block, strides, dilations, pads, extra)
    return [transposed_convolution(node, columns, weight, None, channels, geometry)]


@converter("DeformConv")
def convert_deform_conv(node: Node):
    """A 2-D convolution whose window positions move by the learned `offset`
    (fractional: sampled bilinearly, zero outside the input) and are weighted by
    `mask`: the sampled window of every output position as columns [N, C * KH * KW,
    OH, OW] (four gathers of the flattened input, one per neighbour), then a grouped
    1x1 convolution of them by the weight [O, C/g * KH * KW, 1, 1]."""
    xs, ws = node.shape(0), node.shape(1)
    if len(xs) != 4 or len(ws) != 4:
        raise node.error(f"only 2-D deformable convolutions are supported, got input shape {xs}")
    if node.element_type(0) != f32:
        raise node.error(f"input of element type {node.element_type(0)} is not supported (float32)")
    n, c, height, width = xs
    o, _, kh, kw = ws
    kernel = [int(k) for k in node.attr("kernel_shape", [kh, kw])]
    if kernel != [kh, kw]:
        raise node.error(f"kernel_shape {kernel} does not match the weight's {[kh, kw]}")
    strides = [int(v) for v in node.attr("strides", [1, 1])]
    dilations = [int(v) for v in node.attr("dilations", [1, 1])]
    pads = [int(v) for v in node.attr("pads", [0, 0, 0, 0])]
    group = int(node.attr("group", 1))
    offset_groups = int(node.attr("offset_group", 1))
    if offset_groups < 1 or c % offset_groups:
        raise node.error(f"{c} input channels do not split into offset_group {offset_groups}")
    out = [graph.pool_out(size, k, s, lo, hi, d) for size, k, s, lo, hi, d in zip((height, width), kernel, strides, pads[:2], pads[2:], dilations)]
    taps = kh * kw
    positions = [n, offset_groups, taps, out[0] * out[1]]
    if node.shape(2) != (n, offset_groups * taps * 2, *out):
        raise node.error(f"offset of shape {node.shape(2)} does not fit {offset_groups} offset groups of a {kh}x{kw} window over {out}")
    # [N, OG, taps, 2, OH * OW]: the (h, w) offset of every window position
    offset = node.emit(graph.ReshapeOp, [node.input(2)], shape=[n, offset_groups, taps, 2, out[0] * out[1]])

    def offset_along(t: int) -> SSAValue:
        picked = node.emit(graph.SliceOp, [offset], starts=[t], ends=[t + 1], axes=[3])
        return node.emit(graph.ReshapeOp, [picked], shape=positions)

    # where each tap of each output position would read without offsets
    tap_h, tap_w = np.meshgrid(np.arange(kh) * dilations[0], np.arange(kw) * dilations[1], indexing="ij")
    out_h, out_w = np.meshgrid(np.arange(out[0]) * strides[0] - pads[0], np.arange(out[1]) * strides[1] - pads[1], indexing="ij")
    base_h = (tap_h.reshape(-1, 1) + out_h.reshape(1, -1)).astype(np.float32)
    base_w = (tap_w.reshape(-1, 1) + out_w.reshape(1, -1)).astype(np.float32)
    h = node.emit(graph.AddOp, [offset_along(0), node.constant(base_h, "tap_h")])
    w = node.emit(graph.AddOp, [offset_along(1), node.constant(base_w, "tap_w")])

    def floor(v: SSAValue) -> SSAValue:  # truncation, one lower below zero
        t = node.emit(graph.CastOp, [node.emit(graph.CastOp, [v], to=i32)], to=f32)
        return node.emit(graph.SubOp, [t, node.emit(graph.CastOp, [node.emit(graph.GreaterOp, [t, v])], to=f32)])

    h0, w0 = floor(h), floor(w)
    frac_h, frac_w = node.emit(graph.SubOp, [h, h0]), node.emit(graph.SubOp, [w, w0])
    one = node.scalar(1.0, h)
    weights_h = [node.emit(graph.SubOp, [one, frac_h]), frac_h]
    weights_w = [node.emit(graph.SubOp, [one, frac_w]), frac_w]
    mask = None
    if node.has_input(4):
        if node.shape(4) != (n, offset_groups * taps, *out):
            raise node.error(f"mask of shape {node.shape(4)} does not fit the offsets")
        mask = node.emit(graph.ReshapeOp, [node.input(4)], shape=positions)
    per_group = c // offset_groups
    planes = node.emit(graph.ReshapeOp, [node.input(0)], shape=[n, offset_groups, per_group, height * width])
    gathered = [n, offset_groups, per_group, taps * out[0] * out[1]]
    columns = None
    for dy, weight_h in enumerate(weights_h):
        for dx, weight_w in enumerate(weights_w):
            y = node.emit(graph.AddOp, [h0, node.scalar(float(dy), h)])
            x = node.emit(graph.AddOp, [w0, node.scalar(float(dx), w)])
            inside = one
            for v, size in ((y, height), (x, width)):
                for test in (node.emit(graph.GreaterEqualOp, [v, node.scalar(0.0, v)]), node.emit(graph.LessEqualOp, [v, node.scalar(float(size - 1), v)])):
                    inside = node.emit(graph.MulOp, [inside, node.emit(graph.CastOp, [test], to=f32)])
            y = node.emit(graph.ClipOp, [y], min=0.0, max=float(height - 1))
            x = node.emit(graph.ClipOp, [x], min=0.0, max=float(width - 1))
            flat = node.emit(graph.AddOp, [node.emit(graph.MulOp, [y, node.scalar(float(width), y)]), x])
            index = node.emit(graph.ReshapeOp, [node.emit(graph.CastOp, [flat], to=i64)], shape=[n, offset_groups, 1, gathered[3]])
            index = node.emit(graph.BroadcastToOp, [index], shape=gathered)
            coefficient = node.emit(graph.MulOp, [node.emit(graph.MulOp, [weight_h, weight_w]), inside])
            if mask is not None:
                coefficient = node.emit(graph.MulOp, [coefficient, mask])
            coefficient = node.emit(graph.ReshapeOp, [coefficient], shape=[n, offset_groups, 1, gathered[3]])
            sampled = node.emit(graph.MulOp, [node.emit(graph.GatherElementsOp, [planes, index], axis=3), coefficient])
            columns = sampled if columns is None else node.emit(graph.AddOp, [columns, sampled])
    columns = node.emit(graph.ReshapeOp, [columns], shape=[n, c * taps, *out])
    weight = node.emit(graph.ReshapeOp, [node.input(1)], shape=[o, (c // group) * taps, 1, 1])
    inputs = [columns, weight] + ([node.input(3)] if node.has_input(3) else [])
    return [node.emit(graph.Conv2dOp, inputs, **({"groups": group} if group != 1 else {}))]


@converter("CausalConvWithState")
def convert_causal_conv_with_state(node: Node):
    """A depthwise 1-D convolution that sees only the current and past positions:
    the input after the past state (zeros when absent) along the length, convolved
    by the (C, 1, k) weight with no padding, then SiLU if asked; the present state
    is the last k - 1 positions of that sequence. float16 is convolved in float32
    and rounded once (as Conv)."""
    xs, ws = node.shape(0), node.shape(1)
    if len(xs) != 3 or len(ws) != 3 or ws[0] != xs[1] or ws[1] != 1:
        raise node.error(f"weight {ws} is not (channels, 1, k) for input {xs}")
    activation = node.attr("activation", "none")
    if activation not in ("none", "silu", "swish"):
        raise node.error(f"unsupported activation '{activation}'")
    k = ws[2]
    x = node.input(0)
    if node.has_input(3):
        sequence = node.emit(graph.ConcatOp, [node.input(3), x], axis=2)
    elif k > 1:
        sequence = node.emit(graph.PadOp, [x], pads=[0, 0, k - 1, 0, 0, 0])
    else:
        sequence = x
    inputs = [sequence, node.input(1)] + ([node.input(2)] if node.has_input(2) else [])
    half = node.element_type(0) == f16
    if half:
        inputs = [node.emit(graph.CastOp, [v], to=f32) for v in inputs]
    inputs[:2] = [lift_1d(node, v) for v in inputs[:2]]
    y = node.emit(graph.SqueezeOp, [node.emit(graph.Conv2dOp, inputs, groups=xs[1])], axes=[2])
    if half:
        y = node.emit(graph.CastOp, [y], to=f16)
    if activation != "none":  # x * sigmoid(x), in float32 for float16
        wide = node.emit(graph.CastOp, [y], to=f32) if half else y
        y = node.emit(graph.MulOp, [wide, node.emit(graph.SigmoidOp, [wide])])
        y = node.emit(graph.CastOp, [y], to=f16) if half else y
    wants_state = len(node.proto.output) > 1 and node.proto.output[1]
    if not wants_state:
        return [y]
    if k == 1:
        raise node.error("present_state of a kernel of size 1 is empty (tilecraft does not compile empty tensors)")
    length = graph.shape_of(sequence.type)[2]
    state = node.emit(graph.SliceOp, [sequence], starts=[length - (k - 1)], ends=[length], axes=[2])
    return [y, state]


@converter("MaxUnpool")
def convert_max_unpool(node: Node):
    """Zeros of the unpooled shape, what the window gives back ((in - 1) * stride +
    kernel - pads), with X's values written at the flat indices I (MaxPool's
    Indices): a scatter into the flattened zeros, reshaped; a larger `output_shape`
    pads that at the end of each axis with zeros (as onnx's reference)."""
    xs = node.shape(0)
    rank = len(xs) - 2
    if rank < 1 or node.shape(1) != xs:
        raise node.error(f"indices {node.shape(1)} must have the input's shape {xs} (N, C and spatial axes)")
    kernel = [int(k) for k in node.attr("kernel_shape")]
    strides = [int(v) for v in node.attr("strides", [1] * rank)]
    pads = [int(v) for v in node.attr("pads", [0] * 2 * rank)]
    if len(kernel) != rank or len(strides) != rank or len(pads) != 2 * rank:
        raise node.error(f"kernel_shape {kernel}, strides {strides} and pads {pads} do not fit input {xs}")
    spatial = [(n - 1) * s + k - lo - hi for n, s, k, lo, hi in zip(xs[2:], strides, kernel, pads[:rank], pads[rank:])]
    shape = [*xs[:2], *spatial]
    wanted = shape
    if node.has_input(2):
        wanted = [int(v) for v in node.const(2, "output_shape")]
        if len(wanted) != len(xs) or wanted[:2] != shape[:2] or any(w < n for w, n in zip(wanted, shape)):
            raise node.error(f"output_shape {wanted} is smaller than the unpooled shape {shape}")
    total = int(np.prod(shape))
    zeros = node.emit(graph.BroadcastToOp, [node.scalar(0.0, node.input(0))], shape=[total])
    values = node.emit(graph.ReshapeOp, [node.input(0)], shape=[-1])
    indices = node.emit(graph.ReshapeOp, [node.input(1)], shape=[-1])
    flat = node.emit(graph.ScatterElementsOp, [zeros, indices, values], axis=0)
    y = node.emit(graph.ReshapeOp, [flat], shape=shape)
    if wanted != shape:
        y = node.emit(graph.PadOp, [y], pads=[0] * len(shape) + [w - n for w, n in zip(wanted, shape)])
    return [y]
