"""Import-time evaluation of nodes whose inputs are all known arrays.

Exported models compute shapes at run time: `Shape -> Gather -> Unsqueeze -> Concat
-> Reshape`, masks from `ConstantOfShape`, `Range` position ids. With static shapes
all of that is known while importing, so it is evaluated here with numpy and never
becomes IR; the converters then see the shape as a constant input. Only cheap,
shape-like operators are folded: arithmetic on weights (a MatMul of two
initializers) is left to the graph, where fold-constants can decide.

Each folder takes the node (for attributes and errors) and its input arrays (None
for an omitted optional input) and returns the output arrays, with ONNX semantics.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from tilecraft.frontends.onnx.importer import NARROW, ONNX_TYPES, SATURATING, TP, Node
from tilecraft.utils.symbolic import SymExpr, size

Folder = Callable[[Node, Sequence[np.ndarray | None]], list[np.ndarray]]
FOLDERS: dict[str, Folder] = {}


def folder(*op_types: str) -> Callable[[Folder], Folder]:
    def register(fn: Folder) -> Folder:
        for t in op_types:
            FOLDERS[t] = fn
        return fn

    return register


def axes_of(node: Node, arrays: Sequence[np.ndarray | None], index: int) -> list[int] | None:
    """Axes given as an attribute (older opsets) or as input `index` (newer)."""
    if "axes" in node.attrs:
        return [int(a) for a in node.attr("axes")]
    if index < len(arrays) and arrays[index] is not None:
        return [int(a) for a in np.asarray(arrays[index]).reshape(-1)]
    return None


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == object or b.dtype == object:  # sizes (non-negative): truncation is floor division
        return np.vectorize(_floordiv, otypes=[object])(a, b)
    if np.issubdtype(a.dtype, np.integer):  # ONNX integer division truncates
        return np.trunc(np.true_divide(a, b)).astype(a.dtype)
    return np.divide(a, b).astype(a.dtype)


def _floordiv(a, b):
    if isinstance(b, SymExpr):
        quotient = SymExpr.lift(a).exact_quotient(b)
        if quotient is None:
            raise ValueError(f"{a} / {b} is not a whole size for every value of the sizes")
        return size(quotient)
    return a // int(b)


_ELEMENTWISE: dict[str, Callable[..., np.ndarray]] = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Div": _div,
    "Pow": lambda a, b: np.power(a, b).astype(a.dtype),
    "Neg": np.negative,
    "Sqrt": np.sqrt,
    "Equal": np.equal,
    "Less": np.less,
    "Greater": np.greater,
    "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal,
    "Not": np.logical_not,
    "And": np.logical_and,
    "Or": np.logical_or,
    "Xor": np.logical_xor,
    "Where": np.where,
    # shape arithmetic of exported functions (CenterCropPad's, Resize's...)
    "Max": lambda *xs: functools.reduce(np.maximum, xs),
    "Min": lambda *xs: functools.reduce(np.minimum, xs),
    "Abs": np.abs,
}


_BOOLEAN_RESULT = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor"}


@folder(*_ELEMENTWISE)
def fold_elementwise(node, arrays):
    out = np.asarray(_ELEMENTWISE[node.op_type](*arrays))
    if node.op_type not in _BOOLEAN_RESULT and node.op_type != "Where":
        out = out.astype(arrays[0].dtype)  # numpy promotes int64 op int64 scalars fine, but not float32 * 2.0
    return [out]


@folder("Mod")
def fold_mod(node, arrays):
    a, b = arrays
    fmod = int(node.attr("fmod", 0))
    if not fmod and not np.issubdtype(a.dtype, np.integer):
        raise node.error(f"Mod of {a.dtype} elements needs fmod=1")
    with np.errstate(divide="ignore", invalid="ignore"):
        # fmod=0: the divisor's sign (numpy's mod); fmod=1: the dividend's (C's fmod)
        return [(np.fmod(a, b) if fmod else np.mod(a, b)).astype(a.dtype)]


@folder("Identity")
def fold_identity(node, arrays):
    return [arrays[0]]


@folder("Cast")
def fold_cast(node, arrays):
    """As ONNX's reference: float8 targets saturate unless `saturate` is 0."""
    to = node.attr("to")
    saturate = bool(node.attr("saturate", 1))
    if to not in ONNX_TYPES:
        raise node.error(f"cast to unsupported element type {to}")
    if to == TP.FLOAT8E8M0:
        raise node.error("cast to float8e8m0 is not supported (only from it)")
    x = arrays[0]
    if x.dtype == object and np.issubdtype(ONNX_TYPES[to][1], np.integer):
        return [x]  # (sizes known only when it runs stay sizes)
    if to in NARROW:
        if to in SATURATING and saturate:
            x = np.clip(x, -SATURATING[to], SATURATING[to])
        return [x.astype(NARROW[to][2])]
    return [x.astype(ONNX_TYPES[to][1])]


@folder("Gather")
def fold_gather(node, arrays):
    data, idx = arrays
    axis = int(node.attr("axis", 0))
    return [np.asarray(np.take(data, idx.astype(np.int64), axis=axis), dtype=data.dtype)]  # (a 0-d object take is no array)


@folder("Unsqueeze")
def fold_unsqueeze(node, arrays):
    axes = axes_of(node, arrays, 1)
    if axes is None:
        raise node.error("Unsqueeze needs axes")
    rank = arrays[0].ndim + len(axes)
    return [np.expand_dims(arrays[0], tuple(sorted(a % rank for a in axes)))]


@folder("Squeeze")
def fold_squeeze(node, arrays):
    axes = axes_of(node, arrays, 1)
    x = arrays[0]
    return [np.squeeze(x, tuple(a % x.ndim for a in axes)) if axes is not None else np.squeeze(x)]


@folder("Concat")
def fold_concat(node, arrays):
    return [np.concatenate([a for a in arrays if a is not None], axis=int(node.attr("axis")))]


@folder("Slice")
def fold_slice(node, arrays):
    x, starts, ends = arrays[0], arrays[1], arrays[2]
    axes = arrays[3] if len(arrays) > 3 and arrays[3] is not None else range(len(starts))
    steps = arrays[4] if len(arrays) > 4 and arrays[4] is not None else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for a, s, e, st in zip(axes, starts, ends, steps):
        index[int(a)] = slice(int(s), int(e), int(st))
    return [x[tuple(index)]]


@folder("Reshape")
def fold_reshape(node, arrays):
    x, shape = arrays
    if node.attr("allowzero", 0):
        return [x.reshape(shape)]
    shape = [x.shape[d] if s == 0 else int(s) for d, s in enumerate(shape)]
    return [x.reshape(shape)]


@folder("Transpose")
def fold_transpose(node, arrays):
    perm = node.attr("perm")
    return [np.transpose(arrays[0], perm)]


@folder("Flatten")
def fold_flatten(node, arrays):
    x = arrays[0]
    axis = int(node.attr("axis", 1))
    axis = axis + x.ndim if axis < 0 else axis
    return [x.reshape(int(np.prod(x.shape[:axis])), -1)]


@folder("Expand")
def fold_expand(node, arrays):
    x, shape = arrays
    return [x * np.ones([int(s) for s in shape], dtype=x.dtype)]


@folder("Shape")
def fold_shape(node, arrays):
    shape = np.array(arrays[0].shape, dtype=np.int64)
    return [shape[node.attr("start", 0) : node.attr("end", None)]]


@folder("Size")
def fold_size(node, arrays):
    return [np.array(arrays[0].size, dtype=np.int64)]
