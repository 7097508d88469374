"""Converters of data-movement ONNX operators and of constants.

Operands that say *how* data moves (Reshape's shape, Slice's starts/ends, axes of
Squeeze/Unsqueeze, Pad's pads, Split's sizes, Expand's shape) are inputs in opset
13+, but tilecraft compiles static shapes, so they must be known at import time
(`node.const`): an initializer, a Constant, or something `fold.py` computed from
shapes. The graph ops get them as attributes, fully resolved (no 0 or -1 left in a
reshape's shape). `Shape` and `Size` of a tensor are known for the same reason, and
produce arrays rather than IR.

Expand is `graph.broadcast_to` (an explicit broadcast op rather than `add` with
zeros, so a pass or the evaluator sees the intent and no zeros tensor is stored).
Pad in reflect, edge or wrap mode is a gather of constant indices along each padded
axis. Resize (nearest, linear, cubic; antialias; every coordinate transformation,
tf_crop_and_resize's extrapolation) is a weighted sum of such gathers per resized
axis, the indices and weights computed here by ONNX's coordinate rules.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import numpy_helper

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.fold import axes_of
from tilecraft.frontends.onnx.importer import Node, converter
from tilecraft.utils.dtypes import numpy_dtype
from tilecraft.utils.symbolic import SymExpr


def ints(array: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(array).reshape(-1)]


@converter("Reshape")
def convert_reshape(node: Node):
    xs = node.shape(0)
    value = node.const(1, "shape")
    if value.dtype == object:  # (a shape computed from sizes known only when it runs)
        return [node.emit(graph.ReshapeOp, [node.input(0)], shape=_symbolic_target(node, xs, value))]
    shape = ints(value)
    if int(node.attr("allowzero", 0)) and 0 in shape:
        # a 0 is a 0 extent, not a copy of the input's: an empty result, whose one
        # value is known (fold-empty-tensors folds the empty input's producers)
        if -1 in shape or math.prod(xs) != 0:
            raise node.error(f"cannot reshape {xs} to {shape} (allowzero=1: 0 is a 0 extent)")
        return [node.constant(np.zeros(shape, numpy_dtype(node.element_type(0))), "empty")]
    if any(isinstance(d, SymExpr) for d in xs):
        # graph.reshape resolves 0 and -1 against the symbolic sizes (`batch * seq * 64 / 64`)
        return [node.emit(graph.ReshapeOp, [node.input(0)], shape=shape)]
    shape = [xs[d] if s == 0 else s for d, s in enumerate(shape)]
    if -1 in shape and shape.count(-1) == 1:
        known = math.prod(s for s in shape if s != -1)
        if known and math.prod(xs) % known == 0:
            shape[shape.index(-1)] = math.prod(xs) // known
    if tuple(shape) == xs:
        return [node.input(0)]
    return [node.emit(graph.ReshapeOp, [node.input(0)], shape=shape)]


def _symbolic_target(node: Node, xs, value: np.ndarray) -> list[int]:
    """A Reshape's target computed from symbolic sizes, as graph.reshape's ints: a
    size equal to the input's at the same position copies it (0), one other
    symbolic size is what the rest leaves (-1)."""
    if int(node.attr("allowzero", 0)):
        raise node.error("allowzero=1 with a shape computed from sizes known only when it runs")
    target: list[int] = []
    for d, v in enumerate(value.reshape(-1).tolist()):
        if not isinstance(v, SymExpr):
            target.append(int(v))
        elif d < len(xs) and xs[d] == v:
            target.append(0)
        elif -1 not in target:
            target.append(-1)
        else:
            raise node.error(f"cannot reshape {tuple(xs)} to {tuple(value.tolist())}: two sizes to infer")
    return target


@converter("Flatten")
def convert_flatten(node: Node):
    rank = len(node.shape(0))
    axis = int(node.attr("axis", 1))
    if not -rank <= axis <= rank:
        raise node.error(f"attribute 'axis' = {axis} is out of range for rank {rank}")
    return [node.emit(graph.FlattenOp, [node.input(0)], axis=axis + rank if axis < 0 else axis)]


@converter("Squeeze")
def convert_squeeze(node: Node):
    xs = node.shape(0)
    axes = axes_of(node, [None, node.optional_const(1, "axes")], 1)
    if axes is None:
        axes = [d for d, n in enumerate(xs) if n == 1]
    return [node.emit(graph.SqueezeOp, [node.input(0)], axes=sorted(a % len(xs) for a in axes))]


@converter("Unsqueeze")
def convert_unsqueeze(node: Node):
    axes = axes_of(node, [None, node.optional_const(1, "axes")], 1)
    if not axes:
        raise node.error("Unsqueeze needs axes")
    rank = len(node.shape(0)) + len(axes)
    return [node.emit(graph.UnsqueezeOp, [node.input(0)], axes=sorted(a % rank for a in axes))]


@converter("Transpose")
def convert_transpose(node: Node):
    rank = len(node.shape(0))
    perm = [int(p) for p in node.attr("perm", list(reversed(range(rank))))]
    if perm == list(range(rank)):
        return [node.input(0)]
    return [node.emit(graph.TransposeOp, [node.input(0)], perm=perm)]


@converter("Concat")
def convert_concat(node: Node):
    rank = len(node.shape(0))
    axis = int(node.attr("axis")) % rank
    return [node.emit(graph.ConcatOp, node.inputs(), axis=axis)]


@converter("Split")
def convert_split(node: Node):
    xs = node.shape(0)
    axis = int(node.attr("axis", 0)) % len(xs)
    n = len(node.proto.output)
    if node.has_input(1):
        sizes = ints(node.const(1, "split"))
    elif "split" in node.attrs:  # opset < 13 spelled it as an attribute
        sizes = [int(s) for s in node.attr("split")]
    else:
        n = int(node.attr("num_outputs", n))
        # ONNX: equal parts of ceil(extent / n), the last one smaller if need be.
        part = -(-xs[axis] // n)
        sizes = [min(part, xs[axis] - part * i) for i in range(n)]
    if len(sizes) != len(node.proto.output) or sum(sizes) != xs[axis] or min(sizes) < 0:
        raise node.error(f"cannot split extent {xs[axis]} into {sizes} for {len(node.proto.output)} outputs")
    op = node.emit_op(graph.SplitOp, [node.input(0)], axis=axis, sizes=sizes)
    return list(op.results)


@converter("Slice")
def convert_slice(node: Node):
    xs = node.shape(0)
    starts, ends = ints(node.const(1, "starts")), ints(node.const(2, "ends"))
    axes = node.optional_const(3, "axes")
    axes = [a % len(xs) for a in ints(axes)] if axes is not None else list(range(len(starts)))
    steps = node.optional_const(4, "steps")
    steps = ints(steps) if steps is not None else [1] * len(starts)
    # Resolve to in-range values like Python's slice (ONNX clamps the same way), so
    # the IR does not carry INT64_MAX sentinels; a negative step keeps -1 as "before 0".
    resolved = []
    for a, s, e, st in zip(axes, starts, ends, steps):
        if st == 0:
            raise node.error("slice step cannot be 0")
        s, e, st = slice(s, e, st).indices(xs[a])
        if e < 0:  # "before index 0" for a negative step; -1 would mean the last element
            e = -xs[a] - 1
        resolved.append((a, s, e, st))
    if all((s, e, st) == (0, xs[a], 1) for a, s, e, st in resolved):
        return [node.input(0)]
    attributes = {"starts": [r[1] for r in resolved], "ends": [r[2] for r in resolved], "axes": [r[0] for r in resolved]}
    if any(r[3] != 1 for r in resolved):
        attributes["steps"] = [r[3] for r in resolved]
    return [node.emit(graph.SliceOp, [node.input(0)], **attributes)]


@converter("Gather")
def convert_gather(node: Node):
    xs = node.shape(0)
    axis = int(node.attr("axis", 0)) % len(xs)
    if node.is_const(1):
        # Known indices may be negative in ONNX; the graph op takes them in range.
        idx = node.const(1, "indices").astype(np.int64)
        idx = np.where(idx < 0, idx + xs[axis], idx)
        indices = node.constant(idx, node.proto.input[1])
    else:
        indices = node.input(1)
    return [node.emit(graph.GatherOp, [node.input(0), indices], axis=axis)]


@converter("Resize")
def convert_resize(node: Node):
    """Resizing, one axis at a time, as a weighted sum of gathers at constant indices:
    each output position reads a few input positions ("taps": 1 for nearest, 2 for
    linear, 4 for cubic, more when antialiasing stretches the kernel) with constant
    weights, all computed here by ONNX's coordinate rules (`resize_taps`)."""
    mode = node.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        raise node.error(f"unsupported mode '{mode}' (nearest, linear or cubic)")
    antialias = bool(int(node.attr("antialias", 0)))
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise node.error(f"unsupported keep_aspect_ratio_policy '{policy}'")
    transform = node.attr("coordinate_transformation_mode", "half_pixel")
    if transform not in _COORDINATES:
        raise node.error(f"unsupported coordinate_transformation_mode '{transform}'")
    rounding = node.attr("nearest_mode", "round_prefer_floor")
    if rounding not in _ROUNDING:
        raise node.error(f"unsupported nearest_mode '{rounding}'")
    cubic_a = float(node.attr("cubic_coeff_a", -0.75))
    exclude_outside = bool(int(node.attr("exclude_outside", 0)))
    extrapolation = float(node.attr("extrapolation_value", 0.0))
    xs = node.shape(0)
    rank = len(xs)
    roi = node.optional_const(1, "roi")
    scales = node.optional_const(2, "scales")
    sizes = node.optional_const(3, "sizes")
    axes = axes_of_resize(node, rank)
    from_sizes = sizes is not None and sizes.size > 0
    if from_sizes:
        out = [int(v) for v in sizes.reshape(-1)]
        if len(out) != len(axes):
            raise node.error(f"{len(out)} sizes for {len(axes)} axes")
        scale = [o / xs[a] for o, a in zip(out, axes)]
        if policy != "stretch":
            kept = min(scale) if policy == "not_larger" else max(scale)
            scale = [kept] * len(axes)
            out = [int(kept * xs[a] + 0.5) for a in axes]  # round half up
    elif scales is not None and scales.size:
        scale = [float(v) for v in scales.reshape(-1)]
        if len(scale) != len(axes):
            raise node.error(f"{len(scale)} scales for {len(axes)} axes")
        out = [int(np.floor(xs[a] * sc)) for a, sc in zip(axes, scale)]
    else:
        raise node.error("needs scales or sizes")
    if roi is not None and roi.size:
        roi = [float(v) for v in roi.reshape(-1)]
        if len(roi) not in (2 * len(axes), 2 * rank):
            raise node.error(f"roi has {len(roi)} values for {len(axes)} axes")
        if len(roi) == 2 * rank and len(axes) != rank:
            roi = [roi[a] for a in axes] + [roi[rank + a] for a in axes]
    else:
        roi = [0.0] * len(axes) + [1.0] * len(axes)
    x = node.input(0)
    for i, (a, n_out, sc) in enumerate(zip(axes, out, scale)):
        n_in = xs[a]
        region = (roi[i], roi[len(axes) + i])
        if n_out == n_in and sc == 1.0 and (transform != "tf_crop_and_resize" or region == (0.0, 1.0)):
            continue
        if n_out <= 0:
            raise node.error(f"axis {a} of extent {n_in} resizes to {n_out} elements")
        # Given scales, in float32 as onnxruntime computes them (1.5 / 0.6 rounds to a
        # tie there); given sizes, exactly (in float64, with the scale out / in).
        y = np.arange(n_out, dtype=np.float64 if from_sizes else np.float32)
        coordinate = _COORDINATES[transform](y, y.dtype.type(sc), n_in, n_out, region)
        index, weight = resize_taps(mode, coordinate, n_in, sc, rounding, cubic_a, exclude_outside, antialias)
        outside = (coordinate < 0) | (coordinate > n_in - 1) if transform == "tf_crop_and_resize" else None
        if outside is not None and outside.any():
            weight[outside] = 0.0
        shape = [1] * rank
        shape[a] = n_out
        used = [t for t in range(index.shape[1]) if weight[:, t].any()]
        gathered = [
            node.emit(graph.GatherOp, [x, node.constant(index[:, t].copy(), "resize_index")], axis=a) for t in used
        ]
        terms = [
            g if np.all(weight[:, t] == 1.0) else
            node.emit(graph.MulOp, [g, node.constant(weight[:, t].astype(np.float32).reshape(shape), "resize_weight")])
            for t, g in zip(used, gathered)
        ]  # fmt: skip
        if outside is not None and outside.any() and extrapolation != 0.0:
            fill = np.where(outside, np.float32(extrapolation), np.float32(0)).reshape(shape)
            terms.append(node.constant(fill.astype(np.float32), "resize_extrapolation"))
        if not terms:  # every position outside the region, extrapolated with 0
            terms.append(node.emit(graph.MulOp, [x if n_out == n_in else
                                                 node.emit(graph.GatherOp, [x, node.constant(np.zeros(n_out, np.int64), "resize_index")], axis=a),
                                                 node.scalar(0.0, x)]))  # fmt: skip
        x = terms[0]
        for term in terms[1:]:
            x = node.emit(graph.AddOp, [x, term])
    return [x]


def resize_taps(mode: str, coordinate: np.ndarray, n_in: int, scale: float, rounding: str, cubic_a: float,
                exclude_outside: bool, antialias: bool) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """For each output position (its input `coordinate`), the input indices it reads
    and their weights, both [n_out, taps]. Linear and cubic are interpolation kernels
    centred on the coordinate; antialiasing a downscale stretches the kernel by
    1 / scale (more taps, weights renormalized); taps past the ends read the edge
    element, or (exclude_outside) get weight 0 and the others are renormalized."""
    if mode == "nearest":
        index = np.clip(_ROUNDING[rounding](coordinate), 0, n_in - 1).astype(np.int64)
        return index[:, None], np.ones((len(index), 1))
    coordinate = np.asarray(coordinate, np.float64)
    radius = 1.0 if mode == "linear" else 2.0  # the kernel is 0 at and beyond this distance
    stretch = scale if antialias and scale < 1 else 1.0
    taps = 2 * int(np.ceil(radius / stretch))
    base = np.floor(coordinate).astype(np.int64)
    position = base[:, None] + np.arange(1 - taps // 2, 1 + taps // 2)[None, :]
    distance = np.abs(position - coordinate[:, None]) * stretch
    if mode == "linear":
        weight = np.clip(1 - distance, 0, 1)
    else:
        a = cubic_a
        near = ((a + 2) * distance - (a + 3)) * distance * distance + 1
        far = ((a * distance - 5 * a) * distance + 8 * a) * distance - 4 * a
        weight = np.where(distance <= 1, near, np.where(distance < 2, far, 0.0))
    if exclude_outside:
        weight = np.where((position < 0) | (position >= n_in), 0.0, weight)
    if stretch != 1.0 or exclude_outside:
        total = weight.sum(axis=1, keepdims=True)
        weight = weight / np.where(total == 0, 1.0, total)
    return np.clip(position, 0, n_in - 1), weight


def axes_of_resize(node: Node, rank: int) -> list[int]:
    axes = node.attr("axes", None)
    return list(range(rank)) if axes is None else [int(a) % rank for a in axes]


def _tf_crop_and_resize(x, s, n_in, n_out, region):
    lo, hi = (x.dtype.type(v) for v in region)
    span = x.dtype.type(n_in - 1)
    length = x.dtype.type(n_in) * s
    if length == 1:
        return 0 * x + (hi - lo) * span / 2 + lo * span
    return x * (hi - lo) * span / (length - 1) + lo * span


def _half_pixel_symmetric(x, s, n_in, n_out, region):
    adjustment = x.dtype.type(n_out) / (x.dtype.type(n_in) * s)
    offset = x.dtype.type(n_in) / 2 * (1 - adjustment)
    return offset + (x + x.dtype.type(0.5)) / s - x.dtype.type(0.5)


_COORDINATES = {
    # x: output coordinates (float32 or float64 array), s: the scale in x's precision,
    # region: the (start, end) of tf_crop_and_resize's roi on this axis
    "half_pixel": lambda x, s, n_in, n_out, region: (x + x.dtype.type(0.5)) / s - x.dtype.type(0.5),
    "half_pixel_symmetric": _half_pixel_symmetric,
    "pytorch_half_pixel": lambda x, s, n_in, n_out, region: (
        (x + x.dtype.type(0.5)) / s - x.dtype.type(0.5) if n_out > 1 else 0 * x - x.dtype.type(0.5)
    ),
    # The resized length is n_in * s, unrounded, as ONNX's reference has it.
    "align_corners": lambda x, s, n_in, n_out, region: (
        x * x.dtype.type(n_in - 1) / (x.dtype.type(n_in) * s - 1) if n_in * s != 1 else 0 * x
    ),
    "asymmetric": lambda x, s, n_in, n_out, region: x / s,
    "tf_half_pixel_for_nearest": lambda x, s, n_in, n_out, region: (x + x.dtype.type(0.5)) / s,
    "tf_crop_and_resize": _tf_crop_and_resize,
}
_ROUNDING = {
    "round_prefer_floor": lambda c: np.where(c - np.floor(c) == 0.5, np.floor(c), np.round(c)),
    "round_prefer_ceil": lambda c: np.where(c - np.floor(c) == 0.5, np.ceil(c), np.round(c)),
    "floor": np.floor,
    "ceil": np.ceil,
}


@converter("Expand")
def convert_expand(node: Node):
    shape = ints(node.const(1, "shape"))
    try:
        out = graph.broadcast_shapes(node.shape(0), shape)
    except graph.ShapeError as e:
        raise node.error(str(e)) from None
    if tuple(out) == node.shape(0):
        return [node.input(0)]
    return [node.emit(graph.BroadcastToOp, [node.input(0)], shape=list(out))]


@converter("Pad")
def convert_pad(node: Node):
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise node.error(f"unsupported mode '{mode}' (constant, reflect, edge or wrap)")
    rank = len(node.shape(0))
    pads = ints(node.const(1, "pads"))
    value = node.optional_const(2, "constant_value")
    axes = node.optional_const(3, "axes")
    if axes is not None:  # opset 18: pads only for these axes
        axes = [a % rank for a in ints(axes)]
        full = [0] * (2 * rank)
        for i, a in enumerate(axes):
            full[a], full[a + rank] = pads[i], pads[i + len(axes)]
        pads = full
    if len(pads) != 2 * rank:
        raise node.error(f"pads needs {2 * rank} values for rank {rank}, got {len(pads)}")
    if not any(pads):
        return [node.input(0)]
    if mode != "constant":
        # Each padded axis is a gather of the source indices numpy's pad gives.
        if any(p < 0 for p in pads):
            raise node.error(f"negative pads (cropping) are only supported in constant mode, got {pads}")
        x, xs = node.input(0), node.shape(0)
        for a in range(rank):
            if pads[a] or pads[a + rank]:
                if mode == "reflect" and max(pads[a], pads[a + rank]) >= xs[a]:
                    raise node.error(f"reflect pads {pads} reach past axis {a} of extent {xs[a]}")
                index = np.pad(np.arange(xs[a], dtype=np.int64), (pads[a], pads[a + rank]), mode=mode)
                x = node.emit(graph.GatherOp, [x, node.constant(index, f"{mode}_pad_index")], axis=a)
        return [x]
    fill = float(np.asarray(value).reshape(-1)[0]) if value is not None and value.size else None
    return [node.emit(graph.PadOp, [node.input(0)], pads=pads, value=fill or None)]


@converter("Shape")
def convert_shape(node: Node):
    start, end = node.attr("start", 0), node.attr("end", None)
    return [shape_value(node.shape(0))[start:end]]


@converter("Size")
def convert_size(node: Node):
    return [shape_value([math.prod(node.shape(0))]).reshape(())]


def shape_value(dims) -> np.ndarray:
    """A shape as an import-time value: int64, or where a size is known only when the
    model runs an object array of ints and SymExprs, which the shape folders
    (Gather, Concat, Unsqueeze, Slice, arithmetic) carry through to a Reshape."""
    if any(isinstance(d, SymExpr) for d in dims):
        return np.array(list(dims), dtype=object)
    return np.array(dims, dtype=np.int64)


@converter("Constant")
def convert_constant(node: Node):
    (key,) = node.attrs  # ONNX allows exactly one
    value = node.attr(key)
    if key == "value":
        return [numpy_helper.to_array(value)]
    if key == "value_float":
        return [np.array(value, dtype=np.float32)]
    if key == "value_floats":
        return [np.array(value, dtype=np.float32)]
    if key in ("value_int", "value_ints"):
        return [np.array(value, dtype=np.int64)]
    raise node.error(f"unsupported attribute '{key}'")


@converter("ConstantOfShape")
def convert_constant_of_shape(node: Node):
    shape = ints(node.const(0, "shape"))
    value = node.attr("value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    return [np.full(shape, fill[0], dtype=fill.dtype)]


@converter("Range")
def convert_range(node: Node):
    start, limit, delta = (node.const(i, what).reshape(()) for i, what in enumerate(("start", "limit", "delta")))
    return [np.arange(start, limit, delta, dtype=start.dtype)]
