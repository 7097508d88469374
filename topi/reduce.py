"""Reductions and normalizations: sum/mean/max, global average pooling, softmax,
layer_norm, batch_norm.

Each is a few stages (TVM's recipes): a `te.sum`/`te.max` stage, then an
elementwise stage that uses it. A reduction over the *trailing* axes of its input
is tagged `row=<number of axes>`, which lets the default schedule compute it once
per row, inside the parallel loop over rows of the output (topi/schedule.py).

The reductions are tunable: each reduction stage is tagged with its workload,
("reduce", [kind, input shape, axes, keepdims, dtype]) with kind sum, mean, max,
min, prod, softmax or layer_norm (global average pooling is a mean over H and
W), which the tuning template "reduce" (autotune/topi_templates.py) rebuilds.
`reduction_space` gives the knobs of a tagged stage (topi/schedule.py applies
them); pooling's stages (topi/pool.py) share it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tilecraft.frontends import te
from tilecraft.frontends.te.expr import Reduce
from tilecraft.topi.common import is_float, tag, tags_of
from tilecraft.topi.schedule import vector_lanes

# Row reductions whose op has an elementwise stage over the whole row (softmax's
# exp and output, layer_norm's output): the row's vector width is a knob.
_ROW_STAGES = ("softmax", "layer_norm")
UNROLL_MAX = 16  # the longest innermost reduce axis the `unroll` knob may unroll


def _product(expr: te.Expr, axis) -> te.Expr:
    """The product over reduce axes (te's `prod` reducer; the TVM API spells it with
    `te.comm_reducer`)."""
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return Reduce("prod", expr, axes, expr.dtype)


def _row_tag(rank: int, axes: Sequence[int]) -> int:
    """How many trailing axes `axes` are, if they are exactly the trailing ones."""
    return len(axes) if sorted(axes) == list(range(rank - len(axes), rank)) else 0


def reduce_workload(kind: str, x: te.Tensor, axes: Sequence[int], keepdims: bool) -> tuple[str, list]:
    """The tuning workload of a reduction op: template "reduce" and its params."""
    rank = len(x.shape)
    axes = sorted({a % rank for a in axes})
    shape = [n if isinstance(n, int) else str(n) for n in x.shape]  # (a symbolic size by name)
    return "reduce", [kind, shape, axes, int(bool(keepdims)), str(x.dtype)]


def _widths(extent: int, lanes: int) -> tuple[int, ...]:
    """Vector widths of an axis: scalar, a register's lanes (the default; the
    whole axis when it is shorter), and the powers of two shorter than the axis."""
    if extent <= 1:
        return (lanes,)
    return tuple(sorted({1, lanes, *(w for w in (4, 8, 16, 32, 64) if w < extent)}))


def reduction_space(t: te.Tensor) -> dict[str, tuple]:
    """The knobs of a tagged reduction stage `t` (pooling or reduction) and their
    values (topi/schedule.py applies them): `order` 1 puts the reduce axes inside
    each vector of the innermost output axis (0: outside the whole axis); `vector`
    the width of that axis, or of the row of a softmax/layer_norm; `parallel`;
    `unroll` the innermost reduce axis. A knob without a choice for this stage has
    one value, its default."""
    red = t.op.reduce_axis
    lanes = vector_lanes(t.dtype)
    window = red[-1].extent if red else 1
    unroll = (0, 1) if 1 < window <= UNROLL_MAX else (0,)
    kind = tags_of(t).get("workload", ("", [""]))[1][0]
    if tags_of(t).get("row") or t.shape[-1] == 1:  # the reduce loop innermost
        row = math.prod(r.extent for r in red)
        return {
            "order": (0,),
            "vector": _widths(row, lanes) if kind in _ROW_STAGES else (lanes,),
            "parallel": (0, 1) if math.prod(t.shape) > 1 else (0,),
            "unroll": unroll,
        }
    return {
        "order": (0, 1),
        "vector": _widths(t.shape[-1], lanes),
        "parallel": (0, 1) if len(t.shape) > 1 and math.prod(t.shape[:-1]) > 1 else (0,),
        "unroll": unroll,
    }


def _reduce(
    x: te.Tensor, axes: Sequence[int], keepdims: bool, kind: str, name: str, workload: tuple | None = None
) -> te.Tensor:
    """A reduction stage; `workload` tags it as tunable (the op's workload)."""
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

    out = tag(te.compute(shape, f, name=name), row=_row_tag(rank, axes))
    return tag(out, workload=workload) if workload is not None else out


def _plain(kind: str):
    def reduce(x: te.Tensor, axes: Sequence[int], keepdims: bool = True) -> te.Tensor:
        return _reduce(x, axes, keepdims, kind, kind, reduce_workload(kind, x, axes, keepdims))

    reduce.__name__ = f"reduce_{kind}"
    reduce.__doc__ = f"The {kind} over `axes` (kept as extents of 1 with `keepdims`)."
    return reduce


reduce_sum = _plain("sum")
reduce_max = _plain("max")
reduce_min = _plain("min")
reduce_prod = _plain("prod")


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
    total = _reduce(x, axes, keepdims, "sum", "sum", reduce_workload("mean", x, axes, keepdims))
    count = math.prod(x.shape[a % len(x.shape)] for a in set(a % len(x.shape) for a in axes))
    if not is_float(x.dtype):
        return te.compute(total.shape, lambda *i: total[i] // count, name="mean")
    return te.compute(total.shape, lambda *i: total[i] * _reciprocal(count, x.dtype), name="mean")


def _reciprocal(n, dtype: str):
    """1 / n for a count of elements: a constant, or for a count known only when it
    runs one division (the te expression cast to `dtype`)."""
    return 1.0 / n if isinstance(n, int) else 1.0 / n.astype(dtype)


def global_avg_pool(x: te.Tensor) -> te.Tensor:
    """NCHW -> NC11."""
    return reduce_mean(x, [2, 3], keepdims=True)


def softmax(x: te.Tensor, axis: int = -1) -> te.Tensor:
    """exp(x - max) / sum(exp(x - max)) along `axis`: max, exp, sum and divide stages.
    The exp stage is kept (not inlined) so each exp is computed once."""
    rank = len(x.shape)
    axis %= rank
    workload = reduce_workload("softmax", x, [axis], True)
    mx = _reduce(x, [axis], True, "max", "softmax_max", workload)

    def at_row(t, i):  # `t` (extent 1 on `axis`) at the row of index `i`
        return t[tuple(0 if d == axis else i[d] for d in range(rank))]

    e = tag(te.compute(x.shape, lambda *i: te.exp(x[i] - at_row(mx, i)), name="softmax_exp"), keep=True)
    total = _reduce(e, [axis], True, "sum", "softmax_sum", workload)
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
    workload = reduce_workload("layer_norm", x, norm, True)
    tag(s1, row=len(norm), workload=workload)
    mean = te.compute(outer, lambda *o: s1[o] * _reciprocal(n, x.dtype), name="ln_mean")
    ks2 = [te.reduce_axis((0, x.shape[d]), name=f"k{d}") for d in norm]

    def sq(*o):
        d = x[tuple(o[:axis]) + tuple(ks2)] - mean[o]
        return te.sum(d * d, axis=ks2)

    s2 = tag(te.compute(outer, sq, name="ln_var"), row=len(norm), workload=workload)
    rstd = te.compute(outer, lambda *o: 1.0 / te.sqrt(s2[o] * _reciprocal(n, x.dtype) + epsilon), name="ln_rstd")
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
