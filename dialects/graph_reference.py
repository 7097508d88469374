"""The meaning of the graph ops in numpy: the op folders (`graph_folders.py`) and
the canonicalization patterns compute with it, and as an evaluator of whole graph
functions it is the oracle graph passes and compiled models are checked against.
It lives with the dialect because the folders are part of the dialect, as in MLIR.

It must be obviously right, so each op is a direct numpy formula of its ONNX
meaning (NCHW; pads [begin..., end...]); the few that are not one line say how:

- conv2d builds the im2col matrix from a strided window view of the padded input
  (strides and dilations are slices of that view) and multiplies it per group;
  blocked layouts (NCHW<b>c data, OIHW<i>i<o>o kernels) are converted to NCHW/OIHW
  around that, exactly as `graph.layout_transform` does;
- pooling (and global average pooling) in a blocked `layout` converts to NCHW,
  pools, and converts back; a dense with `weight_layout = #graph<weight_layout KN>` computes x @ w;
- pooling pads explicitly (-inf for max, 0 for avg) plus, for `ceil_mode`, an
  extra margin on the high side that no window counts; the average divides by the
  window's count of input elements, or of input and explicit padding when
  `count_include_pad` (onnxruntime's divisor);
- float ops compute in the input's dtype (float32 stays float32), and every result
  is cast to the op's result element type.

`evaluate(func_op, store, inputs)` runs a function: weights come from `store`,
inputs by position or by argument name (`tc.name`). `evaluate_op(op, arrays)`
evaluates one op on given operand arrays (fold-constants uses it); a `graph.fused`
evaluates its region. An op it does not know raises `EvaluationError` at the op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, StringAttr, TensorType, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tilecraft.utils.diagnostics import EvaluationError
from tilecraft.utils.dtypes import numpy_dtype
from tilecraft.dialects import graph
from tilecraft.utils.weights import WeightStore

def _erf(x: np.ndarray) -> np.ndarray:
    # scipy's erf is vectorized; math.erf per element is the exact fallback.
    # Imported here: scipy.special takes 0.3 s, which every pass that folds
    # constants would otherwise pay at start-up.
    try:
        from scipy.special import erf as erf_vec
    except ImportError:  # pragma: no cover
        return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)
    return erf_vec(x).astype(x.dtype)


# -- layouts ---------------------------------------------------------------------


def to_layout(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Move an activation between NCHW and NCHW<b>c."""
    bs, bd = graph.layout_block(src), graph.layout_block(dst)
    if bs:  # [N, C/b, H, W, b] -> [N, C, H, W]
        n, co, h, w, b = x.shape
        x = x.transpose(0, 1, 4, 2, 3).reshape(n, co * b, h, w)
    if bd:  # [N, C, H, W] -> [N, C/b, H, W, b]
        n, c, h, w = x.shape
        x = x.reshape(n, c // bd, bd, h, w).transpose(0, 1, 3, 4, 2)
    return np.ascontiguousarray(x)


def kernel_to_oihw(w: np.ndarray) -> np.ndarray:
    """[O/o, I/i, KH, KW, i, o] -> [O, I, KH, KW]."""
    oo, io, kh, kw, ib, ob = w.shape
    return np.ascontiguousarray(w.transpose(0, 5, 1, 4, 2, 3).reshape(oo * ob, io * ib, kh, kw))


def kernel_from_oihw(w: np.ndarray, ib: int, ob: int) -> np.ndarray:
    """[O, I, KH, KW] -> [O/o, I/i, KH, KW, i, o] (what alter-layout stores)."""
    o, i, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(o // ob, ob, i // ib, ib, kh, kw).transpose(0, 2, 4, 5, 3, 1))


# -- anchors ------------------------------------------------------------------------


def conv_nchw(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int = 1,
) -> np.ndarray:
    """Convolution of x [N, C, spatial...] by w [O, C/groups, kernel...] (any number
    of spatial axes); `pads` are [begin..., end...]."""
    rank = x.ndim - 2
    n = x.shape[0]
    o, cg, *kernel = w.shape
    spatial_axes = tuple(range(2, 2 + rank))
    xp = np.pad(x, ((0, 0), (0, 0), *zip(pads[:rank], pads[rank:])))
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilations))
    view = sliding_window_view(xp, spans, axis=spatial_axes)
    view = view[(slice(None), slice(None), *(slice(None, None, s) for s in strides), *(slice(None, None, d) for d in dilations))]
    out = view.shape[2 : 2 + rank]  # view: [N, C, out..., kernel...]
    size, window = math.prod(out), math.prod(kernel)
    og = o // groups
    cols = view.reshape(n, groups, cg, size, window).transpose(0, 1, 3, 2, 4).reshape(n, groups, size, cg * window)
    wm = w.reshape(groups, og, cg * window).transpose(0, 2, 1)
    y = np.matmul(cols, wm[None])  # [N, G, size, Og]
    return np.ascontiguousarray(y.transpose(0, 1, 3, 2).reshape(n, o, *out))


# Winograd F(2x2, 3x3) (Lavin and Gray, 2016): a 4x4 input tile d and a 3x3 kernel
# g give the 2x2 outputs Y = A^T [(G g G^T) * (B^T d B)] A.
WINOGRAD_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
WINOGRAD_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], dtype=np.float64)
WINOGRAD_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], dtype=np.float64)


def winograd_weight(w: np.ndarray) -> np.ndarray:
    """G g G^T of a blocked 3x3 weight [O/o, I/i, 3, 3, i, o] -> [4, 4, O/o, I/i, i, o]."""
    u = np.einsum("ar,bs,kcrsio->abkcio", WINOGRAD_G, WINOGRAD_G, w.astype(np.float64))
    return np.ascontiguousarray(u.astype(w.dtype))


def winograd_conv_nchw(x: np.ndarray, u: np.ndarray, pads: Sequence[int]) -> np.ndarray:
    """The Winograd F(2x2, 3x3) conv of x [N, C, H, W] by a transformed weight u
    [4, 4, O/o, C/i, i, o] (stride 1, dilation 1), `pads` [top, left, bottom, right]:
    the output's 2x2 tiles, the last ones cropped where OH or OW is odd."""
    n, c, h, w = x.shape
    oh, ow = h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2
    th, tw = -(-oh // 2), -(-ow // 2)
    xp = np.zeros((n, c, 2 * th + 2, 2 * tw + 2), np.float64)
    rows, cols = min(h, 2 * th + 2 - pads[0]), min(w, 2 * tw + 2 - pads[1])
    xp[:, :, pads[0] : pads[0] + rows, pads[1] : pads[1] + cols] = x[:, :, :rows, :cols]
    tiles = sliding_window_view(xp, (4, 4), axis=(2, 3))[:, :, ::2, ::2]  # [N, C, TH, TW, 4, 4]
    v = np.einsum("ar,nctwrs,bs->nctwab", WINOGRAD_BT, tiles, WINOGRAD_BT)
    k = u.shape[2] * u.shape[5]
    um = u.astype(np.float64).transpose(0, 1, 2, 5, 3, 4).reshape(4, 4, k, c)
    m = np.einsum("nctwab,abkc->nktwab", v, um)
    y = np.einsum("ia,nktwab,jb->nktiwj", WINOGRAD_AT, m, WINOGRAD_AT).reshape(n, k, 2 * th, 2 * tw)
    return np.ascontiguousarray(y[:, :, :oh, :ow].astype(x.dtype))


def straddle_to_oihw(w: np.ndarray, layout: tuple[int, int, int, int], groups: int) -> np.ndarray:
    """A weight in kernel layout straddle<C>c<O>o<i>i<o>o -> [O, C/groups, KH, KW]."""
    c, o, ib, ob = layout
    rows = graph.straddle_rows(c, o, groups, ib, ob)
    cg, og = c // groups, o // groups
    out = np.zeros((o, cg, *w.shape[2:4]), w.dtype)
    for r, (g, block) in enumerate(zip(rows.group, rows.block)):
        for oc in range(ob):
            och = block * ob + oc
            if g * og <= och < min((g + 1) * og, o):  # the row's lanes
                out[och] = w[r, :, :, :, :, oc].transpose(0, 3, 1, 2).reshape(cg, *w.shape[2:4])
    return out


def _conv2d(op: graph.Conv2dOp, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None):
    straddle = graph.straddle_layout(op.kernel_layout)
    if straddle is not None:  # channels padded up to whole blocks: zeros there
        c, o, _, ob = straddle
        x = to_layout(x, op.data_layout, "NCHW")[:, :c]
        y = conv_nchw(x, straddle_to_oihw(w, straddle, op.groups), op.strides, op.pads, op.dilations, op.groups)
        y = np.pad(y, [(0, 0), (0, -(-o // ob) * ob - o), (0, 0), (0, 0)])
        return to_layout(y, "NCHW", op.out_layout)
    x = to_layout(x, op.data_layout, "NCHW")
    if op.algorithm == "winograd":
        return to_layout(winograd_conv_nchw(x, w, op.pads), "NCHW", op.out_layout)
    if op.kernel_layout != "OIHW":
        w = kernel_to_oihw(w)
    y = conv_nchw(x, w, op.strides, op.pads, op.dilations, op.groups)
    if b is not None:
        y = y + b.reshape(1, -1, *[1] * (y.ndim - 2))
    return to_layout(y, "NCHW", op.out_layout)


def _pool(op: graph.MaxPool2dOp | graph.AvgPool2dOp, x: np.ndarray, kind: str) -> np.ndarray:
    layout = op.layout
    return to_layout(_pool_nchw(op, to_layout(x, layout, "NCHW"), kind), "NCHW", layout)


def _global_avg_pool(op: graph.GlobalAvgPool2dOp, x: np.ndarray) -> np.ndarray:
    layout = op.layout
    mean = to_layout(x, layout, "NCHW").mean(axis=(2, 3), keepdims=True)
    return to_layout(mean, "NCHW", layout)


def _dense(op: graph.DenseOp, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    if op.weight_layout == graph.WeightLayout.NK64n:  # panels back to [K, N]
        w = w.transpose(1, 0, 2).reshape(w.shape[1], -1)
    y = x @ (w.T if op.weight_layout == graph.WeightLayout.NK else w)
    return y if b is None else y + b


def _pool_nchw(op: graph.MaxPool2dOp | graph.AvgPool2dOp, x: np.ndarray, kind: str) -> np.ndarray:
    """Pooling of x [N, C, spatial...] over `len(op.kernel)` spatial axes."""
    kernel, strides, pads, dilations = op.kernel, op.strides, op.pads, op.dilations
    rank = len(kernel)
    spatial = x.shape[2:]
    out = [
        graph.pool_out(size, k, s, lo, hi, d, op.ceil_mode)
        for size, k, s, lo, hi, d in zip(spatial, kernel, strides, pads[:rank], pads[rank:], dilations)
    ]
    # ceil_mode's last windows may run past the explicit padding: an extra margin.
    extra = [
        max(0, (o - 1) * s + d * (k - 1) + 1 - (size + lo + hi))
        for o, s, d, k, size, lo, hi in zip(out, strides, dilations, kernel, spatial, pads[:rank], pads[rank:])
    ]
    margins = [(lo, hi + e) for lo, hi, e in zip(pads[:rank], pads[rank:], extra)]
    if kind == "avg":
        fill = 0
    elif np.issubdtype(x.dtype, np.floating):
        fill = -np.inf
    else:
        fill = np.iinfo(x.dtype).min
    xp = np.pad(x, ((0, 0), (0, 0), *margins), constant_values=fill)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilations))
    window_axes = tuple(range(2 + rank, 2 + 2 * rank))

    def windows(a: np.ndarray, first: int) -> np.ndarray:  # [..., out..., kernel...]
        view = sliding_window_view(a, spans, axis=tuple(range(first, first + rank)))
        lead = (slice(None),) * first
        view = view[(*lead, *(slice(None, None, s) for s in strides), *(slice(None, None, d) for d in dilations))]
        return view[(*lead, *(slice(0, o) for o in out))]

    if kind == "max":
        return windows(xp, 2).max(axis=window_axes)
    if kind == "argmax":  # the flat index of each window's first maximum
        flat = np.arange(x.size, dtype=np.int64).reshape(x.shape)
        if op.storage_order:  # spatial axes column-major
            spatial_size = math.prod(spatial)
            order = np.arange(spatial_size, dtype=np.int64).reshape(spatial[::-1]).transpose()
            flat = (np.arange(x.shape[0] * x.shape[1], dtype=np.int64) * spatial_size).reshape(x.shape[:2] + (1,) * rank) + order
        at = windows(np.pad(flat, ((0, 0), (0, 0), *margins), constant_values=-1), 2)
        values = windows(xp, 2)
        lead = values.shape[: 2 + rank]
        first = values.reshape(*lead, -1).argmax(axis=-1)[..., None]
        return np.take_along_axis(at.reshape(*lead, -1), first, axis=-1)[..., 0]
    if isinstance(op, graph.AvgPool2dOp) and op.count_include_pad:
        inner = [size + lo + hi for size, lo, hi in zip(spatial, pads[:rank], pads[rank:])]
        mask = np.pad(np.ones(inner, x.dtype), [(0, e) for e in extra])
    else:
        mask = np.pad(np.ones(spatial, x.dtype), margins)
    counts = windows(mask, 0).sum(axis=tuple(range(rank, 2 * rank)))
    return windows(xp, 2).sum(axis=window_axes) / counts


# -- normalizations -------------------------------------------------------------------


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(op: graph.LayerNormOp, x: np.ndarray, *params: np.ndarray) -> np.ndarray:
    axis = graph.normalize_axis(op.axis, x.ndim)
    axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + x.dtype.type(op.epsilon))
    if len(params) > 0:
        y = y * params[0]
    if len(params) > 1:
        y = y + params[1]
    return y


def _batch_norm(op: graph.BatchNormOp, x, scale, bias, mean, var) -> np.ndarray:
    shape = (1, -1) + (1,) * (x.ndim - 2)
    eps = x.dtype.type(op.epsilon)
    inv = scale / np.sqrt(var + eps)
    return (x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape)


def _gelu(op: graph.GeluOp, x: np.ndarray) -> np.ndarray:
    if op.approximate == graph.Approximate.TANH:
        k = x.dtype.type(math.sqrt(2 / math.pi))
        return 0.5 * x * (1 + np.tanh(k * (x + x.dtype.type(0.044715) * x**3)))
    return 0.5 * x * (1 + _erf(x / x.dtype.type(math.sqrt(2))))


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):  # ONNX integer Div truncates toward zero
        return np.trunc(np.true_divide(a, b)).astype(a.dtype)
    return a / b


# -- data movement ---------------------------------------------------------------------


def _inferred_shape(op: graph.GraphOp, arrays: Sequence[np.ndarray], n: int = 0) -> tuple[int, ...]:
    """Result `n`'s shape as the op's own shape inference gives it for these operands."""
    types = [TensorType(_element_type(op, a), list(a.shape)) for a in arrays]
    return graph.shape_of(op.infer(types)[n])


def _element_type(op: Operation, a: np.ndarray) -> Attribute:
    # Only the shape matters to `infer` here, except for gather's integer indices.
    return i64 if np.issubdtype(a.dtype, np.integer) else Float32Type()


def _pad(op: graph.PadOp, x: np.ndarray) -> np.ndarray:
    pads = op.pads
    r = x.ndim
    # Negative pads crop (ONNX allows them).
    x = x[tuple(slice(max(0, -pads[d]), x.shape[d] - max(0, -pads[d + r])) for d in range(r))]
    widths = [(max(0, pads[d]), max(0, pads[d + r])) for d in range(r)]
    return np.pad(x, widths, constant_values=op.value)


def _slice(op: graph.SliceOp, x: np.ndarray) -> np.ndarray:
    return x[tuple(slice(s, e if e >= 0 else None, st) for s, e, st in op.ranges(x.shape))]


def _split(op: graph.SplitOp, x: np.ndarray) -> list[np.ndarray]:
    axis = graph.normalize_axis(op.axis, x.ndim)
    return np.split(x, np.cumsum(op.sizes)[:-1], axis=axis)


def _reduce(op: graph.GraphOp, x: np.ndarray, fn: Callable) -> np.ndarray:
    axes = tuple(op.reduce_axes(x.ndim))
    if x.size == 0:  # every result element reduces no elements (or there is none)
        value = empty_set_value(op, x.dtype)
        if value is None:
            raise EvaluationError(op, f"{op.name} of no elements of {x.dtype} is undefined")
        return np.full(np.sum(x, axis=axes, keepdims=op.keepdims).shape, value, x.dtype)
    return fn(x, axis=axes, keepdims=op.keepdims)


def empty_set_value(op: graph.GraphOp, dtype: np.dtype) -> float | None:
    """What reduction `op` gives over no elements, as ONNX and numpy's `initial`
    define it: sum 0, prod 1, max -inf (an integer type's lowest value, false),
    min +inf (the highest, true), mean NaN (0 / 0); None for the mean of integers."""
    lowest, highest = (-np.inf, np.inf) if dtype.kind == "f" else (False, True) if dtype.kind == "b" else (
        np.iinfo(dtype).min, np.iinfo(dtype).max)  # fmt: skip
    values = {graph.ReduceSumOp: 0, graph.ReduceProdOp: 1, graph.ReduceMaxOp: lowest,
              graph.ReduceMinOp: highest, graph.ReduceMeanOp: np.nan if dtype.kind == "f" else None}  # fmt: skip
    return values.get(type(op))


def _cumulative(op: graph.CumulativeOp, x: np.ndarray) -> np.ndarray:
    axis = graph.normalize_axis(op.axis, x.ndim)
    if op.reverse:
        x = np.flip(x, axis)
    y = (np.cumsum if op.kind == "sum" else np.cumprod)(x, axis=axis, dtype=x.dtype)
    if op.exclusive:
        first = np.full_like(np.take(y, [0], axis=axis), 0 if op.kind == "sum" else 1)
        y = np.concatenate([first, np.take(y, range(x.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(y, axis) if op.reverse else y


def _wrap_ids(op: Operation, ids: np.ndarray, n) -> np.ndarray:
    """Ids in [-n, n) as indices in [0, n); any other id is an error at the op (as
    the compiled code reports it at run time: topi/scatter.py)."""
    ids = ids.astype(np.int64)
    n = np.asarray(n)
    bad = (ids < -n) | (ids >= n)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise EvaluationError(op, f"{op.name}: index {int(ids[where])} at {where} of its indices is out of range")
    return np.where(ids < 0, ids + n, ids)


def _gather_elements(op: graph.GatherElementsOp, x: np.ndarray, ids: np.ndarray) -> np.ndarray:
    axis = graph.normalize_axis(op.axis, x.ndim)
    # `indices` may be shorter than data on the other axes: those positions only.
    x = x[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(ids.shape))]
    return np.take_along_axis(x, _wrap_ids(op, ids, x.shape[axis]), axis=axis)


def _gather_nd(op: graph.GatherNDOp, x: np.ndarray, ids: np.ndarray) -> np.ndarray:
    b, k = op.batch_dims, ids.shape[-1]
    ids = _wrap_ids(op, ids, np.array(x.shape[b : b + k]))
    out = np.empty((*ids.shape[:-1], *x.shape[b + k :]), x.dtype)
    for q in np.ndindex(*ids.shape[:-1]):
        out[q] = x[(*q[:b], *ids[q])]
    return out


_SCATTER_REDUCTIONS: dict[str, Callable] = {
    "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
}  # fmt: skip


def _scatter(reduction: str, out: np.ndarray, position: tuple, value) -> None:
    out[position] = value if reduction == "none" else _SCATTER_REDUCTIONS[reduction](out[position], value)


def _scatter_elements(op: graph.ScatterElementsOp, x: np.ndarray, ids: np.ndarray, upd: np.ndarray) -> np.ndarray:
    axis = graph.normalize_axis(op.axis, x.ndim)
    out = x.copy()
    ids = _wrap_ids(op, ids, x.shape[axis])
    for j in np.ndindex(*ids.shape):
        _scatter(op.reduction, out, (*j[:axis], int(ids[j]), *j[axis + 1 :]), upd[j])
    return out


def _scatter_nd(op: graph.ScatterNDOp, x: np.ndarray, ids: np.ndarray, upd: np.ndarray) -> np.ndarray:
    out = x.copy()
    ids = _wrap_ids(op, ids, np.array(x.shape[: ids.shape[-1]]))
    for j in range(ids.shape[0]):
        _scatter(op.reduction, out, tuple(int(i) for i in ids[j]), upd[j])
    return out


def _clip(op: graph.ClipOp, x: np.ndarray) -> np.ndarray:
    if op.min is not None:
        x = np.maximum(x, x.dtype.type(op.min))
    if op.max is not None:
        x = np.minimum(x, x.dtype.type(op.max))
    return x


def _requantize(op: graph.RequantizeOp, x: np.ndarray) -> np.ndarray:
    shift = op.shift
    if shift:
        x = x + x.dtype.type(1 << (shift - 1))  # wraps at x's width, as the integer add does
        x = np.right_shift(x, shift)  # arithmetic for signed x: floor(x / 2^shift)
    info = np.iinfo(numpy_dtype(op.to))
    return np.clip(x.astype(np.int64), info.min, info.max)


# -- dispatch ------------------------------------------------------------------------------

_UNARY: dict[type[Operation], Callable[[np.ndarray], np.ndarray]] = {
    graph.ReluOp: lambda x: np.maximum(x, x.dtype.type(0)),
    graph.SigmoidOp: lambda x: 1 / (1 + np.exp(-x)),
    graph.TanhOp: np.tanh,
    graph.ErfOp: _erf,
    graph.ExpOp: np.exp,
    graph.LogOp: np.log,
    graph.SqrtOp: np.sqrt,
    graph.NegOp: np.negative,
    graph.AbsOp: np.abs,
}

_BINARY: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    graph.AddOp: np.add,
    graph.SubOp: np.subtract,
    graph.MulOp: np.multiply,
    graph.DivOp: _div,
    graph.PowOp: lambda a, b: _integer_power(a, b) if a.dtype.kind == "i" else np.power(a, b),
    graph.MaximumOp: np.maximum,
    graph.MinimumOp: np.minimum,
}

# op(op, *operand arrays) -> one array or a list of arrays
_OPS: dict[type[Operation], Callable[..., np.ndarray | list[np.ndarray]]] = {
    graph.GeluOp: _gelu,
    graph.ClipOp: _clip,
    graph.RequantizeOp: _requantize,
    graph.CastOp: lambda op, x: x,  # the result cast below converts
    graph.BitcastOp: lambda op, x: np.ascontiguousarray(x).view(numpy_dtype(op.to)),
    graph.WhereOp: lambda op, c, a, b: np.where(c.astype(bool), a, b),
    graph.Conv2dOp: _conv2d,
    graph.WinogradWeightOp: lambda op, w: winograd_weight(w),
    graph.DenseOp: _dense,
    graph.MatmulOp: lambda op, a, b: np.matmul(a, b),
    graph.MaxPool2dOp: lambda op, x: _pool(op, x, "max"),
    graph.AvgPool2dOp: lambda op, x: _pool(op, x, "avg"),
    graph.MaxPoolIndicesOp: lambda op, x: _pool_nchw(op, x, "argmax"),
    graph.GlobalAvgPool2dOp: _global_avg_pool,
    graph.ReduceSumOp: lambda op, x: _reduce(op, x, np.sum),
    graph.ReduceMeanOp: lambda op, x: _reduce(op, x, np.mean),
    graph.ReduceMaxOp: lambda op, x: _reduce(op, x, np.max),
    graph.ReduceMinOp: lambda op, x: _reduce(op, x, np.min),
    graph.ReduceProdOp: lambda op, x: _reduce(op, x, np.prod),
    graph.CumulativeOp: _cumulative,
    graph.GatherElementsOp: _gather_elements,
    graph.GatherNDOp: _gather_nd,
    graph.ScatterElementsOp: _scatter_elements,
    graph.ScatterNDOp: _scatter_nd,
    graph.SoftmaxOp: lambda op, x: _softmax(x, op.axis),
    graph.LayerNormOp: _layer_norm,
    graph.BatchNormOp: _batch_norm,
    graph.PadOp: _pad,
    graph.ReshapeOp: lambda op, x: x.reshape(_inferred_shape(op, [x])),
    graph.FlattenOp: lambda op, x: x.reshape(_inferred_shape(op, [x])),
    graph.SqueezeOp: lambda op, x: x.reshape(_inferred_shape(op, [x])),
    graph.UnsqueezeOp: lambda op, x: x.reshape(_inferred_shape(op, [x])),
    graph.TransposeOp: lambda op, x: x.transpose(op.permutation(x.ndim)),
    graph.ConcatOp: lambda op, *xs: np.concatenate(xs, axis=op.axis),
    graph.SplitOp: _split,
    graph.SliceOp: _slice,
    graph.GatherOp: lambda op, x, i: np.take(x, _wrap_ids(op, i, x.shape[op.axis]), axis=op.axis),
    graph.LayoutTransformOp: lambda op, x: to_layout(x, op.src, op.dst),
}

def _integer_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(b == 0, 0, np.remainder(a, np.where(b == 0, 1, b))).astype(np.result_type(a, b))


# Comparisons and broadcast_to (ONNX Equal/Less/Greater/Expand).
for _name, _fn in {
    "EqualOp": lambda op, a, b: np.equal(a, b),
    "LessOp": lambda op, a, b: np.less(a, b),
    "GreaterOp": lambda op, a, b: np.greater(a, b),
    "BroadcastToOp": lambda op, x: np.broadcast_to(x, _inferred_shape(op, [x])).copy(),
    # bitwise logic (logical on bool) and integer mod, zero divisor -> 0 (numpy)
    "LessEqualOp": lambda op, a, b: np.less_equal(a, b),
    "GreaterEqualOp": lambda op, a, b: np.greater_equal(a, b),
    "NotEqualOp": lambda op, a, b: np.not_equal(a, b),
    "BitwiseAndOp": lambda op, a, b: np.bitwise_and(a, b),
    "BitwiseOrOp": lambda op, a, b: np.bitwise_or(a, b),
    "BitwiseXorOp": lambda op, a, b: np.bitwise_xor(a, b),
    "BitwiseNotOp": lambda op, x: np.invert(x),
    "ModOp": lambda op, a, b: np.mod(a, b) if a.dtype.kind == "f" else _integer_mod(a, b),
}.items():
    if hasattr(graph, _name):
        _OPS[getattr(graph, _name)] = _fn


def _integer_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's power (wrapping), and for a negative exponent the exact power
    truncated toward zero: 1 for 1, +-1 for -1, 0 otherwise (0 included)."""
    a, b = np.broadcast_arrays(a, b.astype(a.dtype))
    positive = np.power(a, np.maximum(b, 0))
    tiny = np.where(a == 1, 1, np.where(a == -1, 1 - 2 * (b % 2), 0)).astype(a.dtype)
    return np.where(b < 0, tiny, positive)


# Unary math (floats) and the truncated remainder (C's fmod; integer zero divisor -> 0).
def _fmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.fmod(a, b)
    return np.where(b == 0, 0, np.fmod(a, np.where(b == 0, 1, b))).astype(np.result_type(a, b))


_UNARY.update({
    graph.SinOp: np.sin, graph.CosOp: np.cos, graph.TanOp: np.tan,
    graph.AsinOp: np.arcsin, graph.AcosOp: np.arccos, graph.AtanOp: np.arctan,
    graph.SinhOp: np.sinh, graph.CoshOp: np.cosh,
    graph.AsinhOp: np.arcsinh, graph.AcoshOp: np.arccosh, graph.AtanhOp: np.arctanh,
    graph.FloorOp: np.floor, graph.CeilOp: np.ceil, graph.RoundOp: np.rint,
})  # fmt: skip
_BINARY[graph.FmodOp] = _fmod


def constant_value(op: graph.ConstantOp) -> np.ndarray:
    """The array a graph.constant holds."""
    t = op.value.get_type()
    assert isinstance(t, TensorType)
    values = op.value.get_values()
    return np.array(values, dtype=numpy_dtype(t)).reshape(tuple(t.get_shape()))


def evaluate_op(op: Operation, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The results of one graph op on these operand arrays (weights excluded: a
    graph.weight needs the store, see `evaluate`)."""
    if isinstance(op, graph.ConstantOp):
        return [constant_value(op)]
    if isinstance(op, graph.FusedOp):
        return _run_block(op.body.block, dict(zip(op.body.block.args, arrays)), None)
    with np.errstate(all="ignore"):  # IEEE inf/NaN are intended results
        try:
            if type(op) in _UNARY:
                results = [_UNARY[type(op)](arrays[0])]
            elif type(op) in _BINARY:
                results = [_BINARY[type(op)](arrays[0], arrays[1])]
            elif type(op) in _OPS:
                out = _OPS[type(op)](op, *arrays)
                results = list(out) if isinstance(out, list) else [out]
            else:
                raise EvaluationError(op, f"the graph evaluator cannot evaluate '{op.name}'")
        except graph.ShapeError as e:
            raise EvaluationError(op, f"{op.name}: {e}") from None
    return [_as_result(op, n, np.asarray(r)) for n, r in enumerate(results)]


def _as_result(op: Operation, n: int, r: np.ndarray) -> np.ndarray:
    t = op.results[n].type
    if isinstance(t, TensorType):
        return r.astype(numpy_dtype(t), copy=False)
    if isinstance(op, graph.CastOp):  # unranked result: the 'to' attribute says
        return r.astype(numpy_dtype(op.infer([TensorType(_element_type(op, r), list(r.shape))])[0]))
    return r


def _run_block(block: Block, env: dict[SSAValue, np.ndarray], store: WeightStore | None) -> list[np.ndarray]:
    for op in block.ops:
        if isinstance(op, (func.ReturnOp, graph.YieldOp)):
            return [env[v] for v in op.operands]
        if isinstance(op, graph.WeightOp):
            if store is None:
                raise EvaluationError(op, "graph.weight needs a weight store to evaluate")
            results = [np.asarray(store[op.weight_name.data])]
        else:
            results = evaluate_op(op, [env[v] for v in op.operands])
        env.update(zip(op.results, results))
    raise EvaluationError(block.parent_op(), "the block has no terminator")


def evaluate_values(
    func_op: func.FuncOp, store: WeightStore | None, arrays: Sequence[np.ndarray]
) -> dict[SSAValue, np.ndarray]:
    """Every value of a graph function (arguments bound to `arrays` as given), by SSA
    value: what calibration measures."""
    env: dict[SSAValue, np.ndarray] = dict(zip(func_op.body.block.args, arrays))
    _run_block(func_op.body.block, env, store)
    return env


def _arg_name(func_op: func.FuncOp, n: int) -> str | None:
    if func_op.arg_attrs is None:
        return None
    name = func_op.arg_attrs.data[n].data.get("tc.name")
    return name.data if isinstance(name, StringAttr) else None


def evaluate(
    func_op: func.FuncOp,
    store: WeightStore | None,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
) -> list[np.ndarray]:
    """The results of a graph function for these inputs, given by position or by
    argument name (`tc.name`, else `arg<n>`)."""
    args = func_op.body.block.args
    if isinstance(inputs, Mapping):
        names = [_arg_name(func_op, n) or f"arg{n}" for n in range(len(args))]
        missing = [name for name in names if name not in inputs]
        if missing:
            raise ValueError(f"@{func_op.sym_name.data}: missing input(s) {', '.join(missing)}")
        inputs = [inputs[name] for name in names]
    if len(inputs) != len(args):
        raise ValueError(f"@{func_op.sym_name.data} takes {len(args)} inputs, got {len(inputs)}")
    env: dict[SSAValue, np.ndarray] = {}
    for n, (arg, x) in enumerate(zip(args, inputs)):
        x = np.asarray(x)
        t = arg.type
        if isinstance(t, TensorType):
            shape, dtype = tuple(t.get_shape()), numpy_dtype(t)
            if x.shape != shape:
                raise ValueError(f"input {n} of @{func_op.sym_name.data} must have shape {shape}, not {x.shape}")
            x = x.astype(dtype, copy=False)
        env[arg] = x
    return [np.array(r, copy=True) for r in _run_block(func_op.body.block, env, store)]


__all__ = ["EvaluationError", "constant_value", "evaluate", "evaluate_op", "evaluate_values", "kernel_from_oihw", "kernel_to_oihw", "to_layout"]
