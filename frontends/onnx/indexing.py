"""Converters of ONNX operators that rearrange or select elements by position:
Trilu, Tile, DepthToSpace/SpaceToDepth, CenterCropPad, OneHot, TopK, EyeLike,
GatherElements, GatherND, ScatterElements (and the older Scatter), ScatterND.

GatherElements, GatherND and the scatters are graph ops of their own (te kernels in
topi/scatter.py); ScatterND's indices and updates are flattened to one leading axis
here. The others are composed from graph ops, exactly:
- Trilu keeps x where a constant triangular mask holds (`graph.where`, 0 elsewhere);
- Tile gathers each repeated axis at constant indices (0..n-1 repeated);
- DepthToSpace/SpaceToDepth are reshape -> transpose -> reshape (DCR or CRD order);
- CenterCropPad is a slice (crop) and a constant pad per axis, centred as ONNX says
  (the odd element goes to the end);
- OneHot compares the (wrapped) indices with 0..depth-1 and selects on/off values;
- TopK with a known k ranks every element along the axis by counting the elements
  that beat it (greater, or equal and earlier: ONNX's tie rule, the lower index
  first), then picks, for each j < k, the element of rank j and its index: a
  comparison of all pairs, n^2 per row, fine for the short rows TopK sees in
  classifiers and detectors, and it needs no sort kernel.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerType, i1, i32, i64

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import ONNX_TYPES, Node, converter, onnx_type_name


def _ints(array: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(array).reshape(-1)]


def _zero_like(node: Node, x) -> object:
    return node.scalar(0, x)


@converter("Trilu")
def convert_trilu(node: Node):
    xs = node.shape(0)
    if len(xs) < 2:
        raise node.error(f"input must have rank 2 or more, got shape {xs}")
    k = int(node.const(1, "k").reshape(-1)[0]) if node.has_input(1) else 0
    upper = int(node.attr("upper", 1))
    n, m = xs[-2], xs[-1]
    offset = np.arange(m)[None, :] - np.arange(n)[:, None]  # j - i
    mask = offset >= k if upper else offset <= k
    if mask.all():
        return [node.input(0)]
    x = node.input(0)
    return [node.emit(graph.WhereOp, [node.constant(mask, "trilu_mask"), x, _zero_like(node, x)])]


@converter("Tile")
def convert_tile(node: Node):
    xs = node.shape(0)
    repeats = _ints(node.const(1, "repeats"))
    if len(repeats) != len(xs) or min(repeats, default=1) < 1:
        raise node.error(f"repeats {repeats} must be one positive count per axis of {xs}")
    x = node.input(0)
    for a, r in enumerate(repeats):
        if r > 1:
            index = np.tile(np.arange(xs[a], dtype=np.int64), r)
            x = node.emit(graph.GatherOp, [x, node.constant(index, "tile_index")], axis=a)
    return [x]


@converter("DepthToSpace", "SpaceToDepth")
def convert_depth_space(node: Node):
    xs = node.shape(0)
    if len(xs) != 4:
        raise node.error(f"input must be NCHW (rank 4), got shape {xs}")
    b = int(node.attr("blocksize"))
    mode = node.attr("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise node.error(f"unsupported mode '{mode}' (DCR or CRD)")
    n, c, h, w = xs
    x = node.input(0)
    if node.op_type == "DepthToSpace":
        if c % (b * b):
            raise node.error(f"channels {c} are not a multiple of blocksize^2 = {b * b}")
        if mode == "DCR":
            split, perm = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2]
        else:
            split, perm = [n, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3]
        out = [n, c // (b * b), h * b, w * b]
    else:
        if h % b or w % b:
            raise node.error(f"height {h} and width {w} must be multiples of blocksize {b}")
        split = [n, c, h // b, b, w // b, b]
        perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
        out = [n, c * b * b, h // b, w // b]
    x = node.emit(graph.ReshapeOp, [x], shape=split)
    x = node.emit(graph.TransposeOp, [x], perm=perm)
    return [node.emit(graph.ReshapeOp, [x], shape=out)]


@converter("CenterCropPad")
def convert_center_crop_pad(node: Node):
    xs = node.shape(0)
    rank = len(xs)
    shape = _ints(node.const(1, "shape"))
    axes = node.attr("axes", None)
    axes = list(range(rank)) if axes is None else [int(a) % rank for a in axes]
    if len(shape) != len(axes):
        raise node.error(f"shape {shape} needs one extent per axis {axes}")
    x = node.input(0)
    starts, ends, cut = [], [], []
    pads = [0] * (2 * rank)
    for a, target in zip(axes, shape):
        if target < xs[a]:
            start = (xs[a] - target) // 2
            starts.append(start)
            ends.append(start + target)
            cut.append(a)
        elif target > xs[a]:
            pads[a] = (target - xs[a]) // 2
            pads[a + rank] = target - xs[a] - pads[a]
    if cut:
        x = node.emit(graph.SliceOp, [x], starts=starts, ends=ends, axes=cut)
    if any(pads):
        x = node.emit(graph.PadOp, [x], pads=pads)
    return [x]


@converter("OneHot")
def convert_one_hot(node: Node):
    xs = node.shape(0)
    depth = node.const(1, "depth").reshape(-1)[0]
    depth = int(depth)
    rank = len(xs) + 1
    axis = node.axis_attr(rank)
    indices = node.input(0)
    if not isinstance(node.element_type(0), IntegerType) or node.element_type(0) == i1:
        indices = node.emit(graph.CastOp, [indices], to=i64)  # ONNX: float indices truncate
    elif node.element_type(0) != i64:
        indices = node.emit(graph.CastOp, [indices], to=i64)
    # Negative indices count from the end; anything still out of range matches nothing.
    negative = node.emit(graph.LessOp, [indices, node.constant(np.array(0, np.int64), "zero")])
    shifted = node.emit(graph.AddOp, [indices, node.constant(np.array(depth, np.int64), "depth")])
    indices = node.emit(graph.WhereOp, [negative, shifted, indices])
    indices = node.emit(graph.UnsqueezeOp, [indices], axes=[axis])
    positions = np.arange(depth, dtype=np.int64).reshape([depth] + [1] * (rank - 1 - axis))
    hit = node.emit(graph.EqualOp, [indices, node.constant(positions, "onehot_positions")])
    # off and on as one-element tensors (they broadcast like scalars)
    if node.is_const(2):
        off, on = (node.constant(np.asarray(v), "onehot_value") for v in node.const(2, "values").reshape(-1)[:2])
    else:
        values = node.input(2)
        off = node.emit(graph.SliceOp, [values], starts=[0], ends=[1])
        on = node.emit(graph.SliceOp, [values], starts=[1], ends=[2])
    return [node.emit(graph.WhereOp, [hit, on, off])]


@converter("TopK")
def convert_top_k(node: Node):
    xs = node.shape(0)
    rank = len(xs)
    axis = node.axis_attr(rank)
    n = xs[axis]
    k = int(node.const(1, "k").reshape(-1)[0])
    if not 0 < k <= n:
        raise node.error(f"k = {k} must be in 1..{n} (the extent of axis {axis})")
    largest = int(node.attr("largest", 1))
    node.ignore("sorted")  # the result is always sorted, which sorted=0 allows too
    x = node.input(0)
    trailing = [1] * (rank - 1 - axis)
    # Pairs: axis `axis` indexes the rival i', axis `axis + 1` the element i.
    rival = node.emit(graph.UnsqueezeOp, [x], axes=[axis + 1])
    element = node.emit(graph.UnsqueezeOp, [x], axes=[axis])
    better = node.emit(graph.GreaterOp if largest else graph.LessOp, [rival, element])
    tie = node.emit(graph.EqualOp, [rival, element])
    earlier = (np.arange(n)[:, None] < np.arange(n)[None, :]).astype(np.int32).reshape([n, n] + trailing)
    beats = node.emit(graph.AddOp, [
        node.emit(graph.CastOp, [better], to=i32),
        node.emit(graph.MulOp, [node.emit(graph.CastOp, [tie], to=i32), node.constant(earlier, "topk_earlier")]),
    ])  # fmt: skip
    ranks = node.emit(graph.ReduceSumOp, [beats], axes=[axis], keepdims=False)  # the rank of each element
    # Pick: axis `axis` indexes the output position j < k, axis `axis + 1` the element i.
    ranks = node.emit(graph.UnsqueezeOp, [ranks], axes=[axis])
    wanted = np.arange(k, dtype=np.int32).reshape([k, 1] + trailing)
    hit = node.emit(graph.EqualOp, [ranks, node.constant(wanted, "topk_rank")])
    values = node.emit(graph.WhereOp, [hit, element, _zero_like(node, x)])
    values = node.emit(graph.ReduceSumOp, [values], axes=[axis + 1], keepdims=False)
    index = np.arange(n, dtype=np.int64).reshape([n] + trailing)
    zero = node.constant(np.array(0, np.int64), "zero")
    indices = node.emit(graph.WhereOp, [hit, node.constant(index, "topk_index"), zero])
    indices = node.emit(graph.ReduceSumOp, [indices], axes=[axis + 1], keepdims=False)
    return [values, indices]


@converter("EyeLike")
def convert_eye_like(node: Node):
    """A constant: only the shape of the input matters."""
    xs = node.shape(0)
    if len(xs) != 2:
        raise node.error(f"input must be 2-D, got shape {xs}")
    dtype = node.attr("dtype", None)
    if dtype is None:
        numpy_type = node.raw(0).dtype if isinstance(node.raw(0), np.ndarray) else next(
            n for t, n in ONNX_TYPES.values() if t == node.element_type(0))  # fmt: skip
    elif dtype in ONNX_TYPES:
        numpy_type = ONNX_TYPES[dtype][1]
    else:
        raise node.error(f"unsupported dtype {onnx_type_name(dtype)}")
    return [np.eye(xs[0], xs[1], k=int(node.attr("k", 0)), dtype=numpy_type)]


@converter("GatherElements")
def convert_gather_elements(node: Node):
    axis = int(node.attr("axis", 0)) % len(node.shape(0))
    return [node.emit(graph.GatherElementsOp, [node.input(0), node.input(1)], axis=axis)]


@converter("GatherND")
def convert_gather_nd(node: Node):
    batch_dims = int(node.attr("batch_dims", 0))
    return [node.emit(graph.GatherNDOp, [node.input(0), node.input(1)], batch_dims=batch_dims)]


@converter("ScatterElements", "Scatter")
def convert_scatter_elements(node: Node):
    axis = int(node.attr("axis", 0)) % len(node.shape(0))
    reduction = node.attr("reduction", "none")
    return [node.emit(graph.ScatterElementsOp, [node.input(i) for i in range(3)], axis=axis, reduction=reduction)]


@converter("ScatterND")
def convert_scatter_nd(node: Node):
    xs, ids = node.shape(0), node.shape(1)
    k = ids[-1]
    m = int(np.prod(ids[:-1]))
    indices, updates = node.input(1), node.input(2)
    if len(ids) != 2:
        indices = node.emit(graph.ReshapeOp, [indices], shape=[m, k])
    if tuple(node.shape(2)) != (m, *xs[k:]):
        updates = node.emit(graph.ReshapeOp, [updates], shape=[m, *xs[k:]])
    reduction = node.attr("reduction", "none")
    return [node.emit(graph.ScatterNDOp, [node.input(0), indices, updates], reduction=reduction)]
