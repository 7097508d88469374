"""Element-wise gathers and scatters with data-dependent positions (ONNX
GatherElements, GatherND, ScatterElements, ScatterND).

Gathers read `data` at positions read from `indices`: negative ids count from the
end; an id outside [-n, n) is a run-time error naming the op's result, indices and
data (as `graph.gather`'s and as onnxruntime raises one), and the read itself uses
the id clamped, so it stays inside `data`. Scatters check their ids the same way in
a stage of their own before the scatter reads them.

A scatter is written as a pure function of its output position p, so it stays a
te.compute: p is "hit" by update j when j's id (wrapped) names p. Without a
reduction the last update that hits p wins: one stage finds the greatest such j
(a max reduction over j, -1 when none does), the next reads that update or keeps
`data[p]`. With a reduction (add, mul, max, min) one stage combines the hitting
updates (the others masked to the reduction's identity) and the next combines
that with `data[p]`. Quadratic (outputs x updates), which is what scatters of
a few rows into a cache or a mask cost on a CPU without atomics.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecraft.frontends import te
from tilecraft.frontends.te.expr import checked
from tilecraft.topi.reduce import _product


def _wrapped(raw: te.Expr, n: int) -> te.Expr:
    """An id in [-n, n) as an index in [0, n); other ids stay out of range."""
    return te.if_then_else(raw < 0, raw + n, raw)


def _clamped(raw: te.Expr, n: int) -> te.Expr:
    return te.minimum(te.maximum(_wrapped(raw, n), 0), n - 1).astype("index")


def _in_range(raw: te.Expr, n: int) -> te.Expr:
    return (raw >= -n) & (raw < n)


def _message(kind: str, names: Sequence[str] | None, data: te.Tensor, ids: te.Tensor, axes: Sequence[int]) -> str:
    """The run-time error of an id out of range, in the graph's names (`names`:
    result, data, indices) or else the te tensors'."""
    result, data_name, ids_name = (names or (kind, data.name, ids.name))[:3]
    ranges = ", ".join(f"[{-data.shape[a]}, {data.shape[a] - 1}] on axis {a}" for a in axes)
    return (
        f"{kind} '{result}': an index in '{ids_name}' is out of range; indices into "
        f"'{data_name}' (shape {tuple(data.shape)}) must be within {ranges}"
    )


def _checked_ids(ids: te.Tensor, bound, message: str) -> te.Tensor:
    """`ids` itself, each checked to lie in [-n, n) with `n = bound(position)`."""
    return te.compute(
        ids.shape, lambda *p: checked(ids[p], _in_range(ids[p], bound(p)), message), name=f"{ids.name}_checked"
    )


def gather_elements(data: te.Tensor, ids: te.Tensor, axis: int, names: Sequence[str] | None = None) -> te.Tensor:
    n = data.shape[axis]
    message = _message("gather_elements", names, data, ids, [axis])

    def f(*i):
        raw = ids[i]
        value = data[tuple(_clamped(raw, n) if d == axis else i[d] for d in range(len(i)))]
        return checked(value, _in_range(raw, n), message)

    return te.compute(ids.shape, f, name="gather_elements")


def gather_nd(data: te.Tensor, ids: te.Tensor, batch_dims: int = 0, names: Sequence[str] | None = None) -> te.Tensor:
    k = ids.shape[-1]
    lead = len(ids.shape) - 1
    shape = (*ids.shape[:-1], *data.shape[batch_dims + k :])
    message = _message("gather_nd", names, data, ids, range(batch_dims, batch_dims + k))

    def f(*o):
        q = o[:lead]
        raws = [(ids[(*q, t)], data.shape[batch_dims + t]) for t in range(k)]
        value = data[(*o[:batch_dims], *[_clamped(raw, n) for raw, n in raws], *o[lead:])]
        return checked(value, te.all(*[_in_range(raw, n) for raw, n in raws]), message)

    return te.compute(shape, f, name="gather_nd")


def _combine(reduction: str, data: te.Tensor, hits, read, extent: int, name: str) -> te.Tensor:
    """The scatter's output given `hits(p, j)` (does update j land on p) and
    `read(p, j)` (update j's value for p), j over [0, extent)."""
    shape = data.shape
    if reduction == "none":

        def last(*p):
            j = te.reduce_axis((0, extent), name="j")
            return te.max(te.if_then_else(hits(p, j), j.astype("int64"), te.const(-1, "int64")), axis=j)

        winner = te.compute(shape, last, name=f"{name}_last")

        def pick(*p):
            j = te.maximum(winner[p], te.const(0, "int64")).astype("index")
            return te.if_then_else(winner[p] >= 0, read(p, j), data[p])

        return te.compute(shape, pick, name=name)
    identity = {"add": 0, "mul": 1}.get(reduction)

    def gathered(*p):
        j = te.reduce_axis((0, extent), name="j")
        if reduction in ("max", "min"):
            return (te.max if reduction == "max" else te.min)(read(p, j), axis=j, where=hits(p, j))
        value = te.if_then_else(hits(p, j), read(p, j), te.const(identity, data.dtype))
        return te.sum(value, axis=j) if reduction == "add" else _product(value, j)

    acc = te.compute(shape, gathered, name=f"{name}_{reduction}")
    combine = {
        "add": lambda a, b: a + b,
        "mul": lambda a, b: a * b,
        "max": te.maximum,
        "min": te.minimum,
    }[reduction]
    return te.compute(shape, lambda *p: combine(data[p], acc[p]), name=name)


def scatter_elements(data: te.Tensor, ids: te.Tensor, updates: te.Tensor, axis: int,
                     reduction: str = "none", names: Sequence[str] | None = None) -> te.Tensor:  # fmt: skip
    rank = len(data.shape)
    n = data.shape[axis]
    extent = ids.shape[axis]
    ids = _checked_ids(ids, lambda p: n, _message("scatter_elements", names, data, ids, [axis]))

    def at(p, j) -> tuple:
        # Positions of `ids`/`updates` may be fewer than data's on the other axes:
        # clamp the read there and let `inside` rule those positions out.
        return tuple(j if d == axis else te.minimum(p[d], ids.shape[d] - 1) if ids.shape[d] < data.shape[d] else p[d]
                     for d in range(rank))  # fmt: skip

    def hits(p, j):
        conds = [p[d] < ids.shape[d] for d in range(rank) if d != axis and ids.shape[d] < data.shape[d]]
        conds.append(_wrapped(ids[at(p, j)], n).astype("index") == p[axis])
        return te.all(*conds)

    return _combine(reduction, data, hits, lambda p, j: updates[at(p, j)], extent, "scatter_elements")


def scatter_nd(data: te.Tensor, ids: te.Tensor, updates: te.Tensor, reduction: str = "none",
               names: Sequence[str] | None = None) -> te.Tensor:  # fmt: skip
    """`ids` is [updates, k] and `updates` [updates, *data.shape[k:]] (the converter
    flattens the leading axes of both)."""
    k = ids.shape[1]
    message = _message("scatter_nd", names, data, ids, range(k))

    def bound(p):  # data's size on the axis that column p[1] of `ids` indexes
        n = te.const(data.shape[k - 1], ids.dtype)
        for t in reversed(range(k - 1)):
            n = te.if_then_else(p[1] == t, te.const(data.shape[t], ids.dtype), n)
        return n

    ids = _checked_ids(ids, bound, message)

    def hits(p, j):
        return te.all(*[_wrapped(ids[j, t], data.shape[t]).astype("index") == p[t] for t in range(k)])

    return _combine(reduction, data, hits, lambda p, j: updates[(j, *p[k:])], ids.shape[0], "scatter_nd")


