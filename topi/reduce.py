"""Reductions and normalizations: sum/mean/max, global average pooling, softmax,
layer_norm, batch_norm.

Each is a few stages (TVM's recipes): a `te.sum`/`te.max` stage, then an
elementwise stage that uses it. A reduction over the *trailing* axes of its input
is tagged `row=<number of axes>`, which lets the default schedule compute it once
per row, inside the parallel loop over rows of the output (topi/schedule.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tilecraft.frontends import te
from tilecraft.frontends.te.expr import Reduce
from tilecraft.topi.common import is_float, tag


def _product(expr: te.Expr, axis) -> te.Expr:
    """The product over reduce axes (te's `prod` reducer; the TVM API spells it with
    `te.comm_reducer`)."""
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return Reduce("prod", expr, axes, expr.dtype)


def _row_tag(rank: int, axes: Sequence[int]) -> int:
    """How many trailing axes `axes` are, if they are exactly the trailing ones."""
    return len(axes) if sorted(axes) == list(range(rank - len(axes), rank)) else 0


def _reduce(x: te.Tensor, axes: Sequence[int], keepdims: bool, kind: str, name: str) -> te.Tensor:
    rank = len(x.shape)
    axes = sorted({a % rank for a in axes})
    kept = [d for d in range(rank) if d not in axes]
    if keepdims:
        shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    else:
        shape = tuple(x.shape[d] for d in kept) or (1,)
    ks = [te.reduce_axis((0, x.shape[d]), name=f"k{d}") for d in axes]
    reducer = {"sum": te.sum, "max": te.max, "min": te.min, "prod": _product}[kind]

    def f(*i):
        idx = []
        ki = iter(ks)
        outer = iter(i if keepdims else i[: len(kept)])
        for d in range(rank):
            if d in axes:
                idx.append(next(ki))
                if keepdims:
                    next(outer)
            else:
                idx.append(next(outer))
        return reducer(x[tuple(idx)], axis=ks)

    return tag(te.compute(shape, f, name=name), row=_row_tag(rank, axes))


def reduce_sum(x: te.Tensor, axes: Sequence[int], keepdims: bool = True) -> te.Tensor:
    return _reduce(x, axes, keepdims, "sum", "sum")


def reduce_max(x: te.Tensor, axes: Sequence[int], keepdims: bool = True) -> te.Tensor:
    return _reduce(x, axes, keepdims, "max", "max")


def reduce_min(x: te.Tensor, axes: Sequence[int], keepdims: bool = True) -> te.Tensor:
    return _reduce(x, axes, keepdims, "min", "min")


def reduce_prod(x: te.Tensor, axes: Sequence[int], keepdims: bool = True) -> te.Tensor:
    return _reduce(x, axes, keepdims, "prod", "prod")


def cumulative(x: te.Tensor, axis: int, kind: str, exclusive: bool = False, reverse: bool = False) -> te.Tensor:
    """Running sum or product along `axis` (ONNX CumSum/CumProd): element j reduces the
    elements k <= j (exclusive: k < j; reverse: k >= j or k > j), the others masked
    to the identity. Quadratic in the axis extent, as a reduction per element."""
    rank = len(x.shape)
    axis %= rank
    identity = te.const(0 if kind == "sum" else 1, x.dtype)

    def f(*i):
        k = te.reduce_axis((0, x.shape[axis]), name="k")
        j = i[axis]
        if reverse:
            keep = k > j if exclusive else k >= j
        else:
            keep = k < j if exclusive else k <= j
        value = te.if_then_else(keep, x[tuple(k if d == axis else i[d] for d in range(rank))], identity)
        return te.sum(value, axis=k) if kind == "sum" else _product(value, k)

    return te.compute(x.shape, f, name=f"cum{kind}")


def reduce_mean(x: te.Tensor, axes: Sequence[int], keepdims: bool = True) -> te.Tensor:
    total = _reduce(x, axes, keepdims, "sum", "sum")
    count = math.prod(x.shape[a % len(x.shape)] for a in set(a % len(x.shape) for a in axes))
    if not is_float(x.dtype):
        return te.compute(total.shape, lambda *i: total[i] // count, name="mean")
    return te.compute(total.shape, lambda *i: total[i] * (1.0 / count), name="mean")


def global_avg_pool(x: te.Tensor) -> te.Tensor:
    """NCHW -> NC11."""
    return reduce_mean(x, [2, 3], keepdims=True)


def softmax(x: te.Tensor, axis: int = -1) -> te.Tensor:
    """exp(x - max) / sum(exp(x - max)) along `axis`: max, exp, sum and divide stages.
    The exp stage is kept (not inlined) so each exp is computed once."""
    rank = len(x.shape)
    axis %= rank
    mx = _reduce(x, [axis], True, "max", "softmax_max")

    def at_row(t, i):  # `t` (extent 1 on `axis`) at the row of index `i`
        return t[tuple(0 if d == axis else i[d] for d in range(rank))]

    e = tag(te.compute(x.shape, lambda *i: te.exp(x[i] - at_row(mx, i)), name="softmax_exp"), keep=True)
    total = _reduce(e, [axis], True, "sum", "softmax_sum")
    # One reciprocal per row, then a multiply per element (cheaper than dividing).
    inv = tag(te.compute(total.shape, lambda *i: 1.0 / total[i], name="softmax_inv"), keep=True)
    return te.compute(x.shape, lambda *i: e[i] * at_row(inv, i), name="softmax")


def layer_norm(
    x: te.Tensor,
    scale: te.Tensor | None,
    bias: te.Tensor | None,
    axis: int = -1,
    epsilon: float = 1e-5,
) -> te.Tensor:
    """(x - mean) / sqrt(var + epsilon) * scale + bias over the axes from `axis` on.
    Two passes over each row (mean, then the variance about it), which stays
    accurate where E[x^2] - E[x]^2 would cancel."""
    rank = len(x.shape)
    axis %= rank
    norm = list(range(axis, rank))
    n = math.prod(x.shape[axis:])
    outer = x.shape[:axis] or (1,)

    def row(i):  # the outer index of a full index
        return tuple(i[:axis]) if axis else (0,)

    ks = [te.reduce_axis((0, x.shape[d]), name=f"k{d}") for d in norm]
    s1 = te.compute(
        outer, lambda *o: te.sum(x[tuple(o[:axis]) + tuple(ks)], axis=ks), name="ln_sum"
    )
    tag(s1, row=len(norm))
    mean = te.compute(outer, lambda *o: s1[o] * (1.0 / n), name="ln_mean")
    ks2 = [te.reduce_axis((0, x.shape[d]), name=f"k{d}") for d in norm]

    def sq(*o):
        d = x[tuple(o[:axis]) + tuple(ks2)] - mean[o]
        return te.sum(d * d, axis=ks2)

    s2 = tag(te.compute(outer, sq, name="ln_var"), row=len(norm))
    rstd = te.compute(outer, lambda *o: 1.0 / te.sqrt(s2[o] * (1.0 / n) + epsilon), name="ln_rstd")
    tag(rstd, keep=True)

    def f(*i):
        v = (x[i] - mean[row(i)]) * rstd[row(i)]
        if scale is not None:
            v = v * scale[tuple(i[axis:])]
        if bias is not None:
            v = v + bias[tuple(i[axis:])]
        return v

    return te.compute(x.shape, f, name="layer_norm")


def batch_norm(
    x: te.Tensor,
    scale: te.Tensor,
    bias: te.Tensor,
    mean: te.Tensor,
    var: te.Tensor,
    epsilon: float = 1e-5,
) -> te.Tensor:
    """Inference batch norm over channel axis 1 (canonicalize usually folds it into its conv)."""

    def f(*i):
        c = i[1]
        return (x[i] - mean[c]) * (scale[c] / te.sqrt(var[c] + epsilon)) + bias[c]

    return te.compute(x.shape, f, name="batch_norm")
