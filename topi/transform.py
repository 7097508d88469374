"""Data-movement computes: pad, reshape family, transpose, concat, split, slice,
gather, layout_transform.

All are injective: each output element reads one input element at an index the
output index determines, written as index arithmetic (a row-major flat index for
reshapes, offsets for slices, a nested `if_then_else` for concat and padding).
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecraft.frontends import te
from tilecraft.frontends.te.expr import checked
from tilecraft.topi.common import is_float, reshape_read


def pad(x: te.Tensor, pads: Sequence[int], value: float = 0.0, name: str = "pad") -> te.Tensor:
    """Constant padding; `pads` is ONNX's [begin_0, ..., end_0, ...]."""
    rank = len(x.shape)
    begin, end = list(pads[:rank]), list(pads[rank:])
    if any(p < 0 for p in pads):
        raise ValueError("negative pads (cropping) are not supported; use slice")
    shape = tuple(n + b + e for n, b, e in zip(x.shape, begin, end))
    fill = float(value) if is_float(x.dtype) else int(value)

    def f(*i):
        conds = []
        src = []
        for d in range(rank):
            if begin[d] == 0 and end[d] == 0:
                src.append(i[d])
                continue
            j = i[d] - begin[d] if begin[d] else i[d]
            if begin[d]:
                conds.append(i[d] >= begin[d])
            if end[d]:
                conds.append(i[d] < begin[d] + x.shape[d])
            src.append(j)
        if not conds:
            return x[tuple(src)]
        return te.if_then_else(te.all(*conds), x[tuple(src)], te.const(fill, x.dtype))

    return te.compute(shape, f, name=name)


def reshape(x: te.Tensor, shape: Sequence, name: str = "reshape") -> te.Tensor:
    """Row-major reshape (also flatten, squeeze, unsqueeze): `shape` is static but
    for sizes known when it runs that it keeps from `x` (a leading `batch`)."""
    shape = tuple(n if isinstance(n, te.Expr) else int(n) for n in shape)
    return te.compute(shape, lambda *i: reshape_read(x, i, shape), name=name)


def transpose(x: te.Tensor, perm: Sequence[int]) -> te.Tensor:
    shape = tuple(x.shape[p] for p in perm)
    inverse = [perm.index(d) for d in range(len(perm))]
    return te.compute(shape, lambda *i: x[tuple(i[inverse[d]] for d in range(len(perm)))], name="transpose")


def concat(xs: Sequence[te.Tensor], axis: int) -> te.Tensor:
    """Along `axis`: a chain of selects on the axis index, the last input as the else."""
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    starts = []
    offset = 0
    for x in xs:
        starts.append(offset)
        offset += x.shape[axis]

    def f(*i):
        def read(k):
            idx = list(i)
            if starts[k]:
                idx[axis] = i[axis] - starts[k]
            return xs[k][tuple(idx)]

        value = read(len(xs) - 1)
        for k in range(len(xs) - 2, -1, -1):
            value = te.if_then_else(i[axis] < starts[k + 1], read(k), value)
        return value

    return te.compute(tuple(shape), f, name="concat")


def strided_slice(x: te.Tensor, ranges: Sequence[tuple[int, int, int]], name: str = "slice") -> te.Tensor:
    """`ranges` holds a normalized (start, stop, step) per axis (as graph.slice gives)."""
    shape = tuple(len(range(s, e, st)) for s, e, st in ranges)

    def f(*i):
        idx = []
        for d, (s, _, st) in enumerate(ranges):
            j = i[d] if st == 1 else i[d] * st
            idx.append(j + s if s else j)
        return x[tuple(idx)]

    return te.compute(shape, f, name=name)


def split(x: te.Tensor, axis: int, sizes: Sequence[int]) -> list[te.Tensor]:
    outs, start = [], 0
    for n in sizes:
        ranges = [(0, m, 1) for m in x.shape]
        ranges[axis] = (start, start + n, 1)
        outs.append(strided_slice(x, ranges, name="split"))
        start += n
    return outs


def gather(
    data: te.Tensor,
    ids: te.Tensor,
    axis: int = 0,
    names: tuple[str, str, str] | None = None,
    scalar_ids: bool = False,
) -> te.Tensor:
    """take(data, ids, axis): ids may be negative (counted from the end, as ONNX).
    An id outside [-n, n) is a run-time error (as onnxruntime raises one) naming
    the result, the ids and the data (`names`, the graph's; else the te tensors');
    the read itself uses the id clamped, so it stays in bounds. `scalar_ids`: the
    ids are a scalar (rank 0, a one-element te tensor), which drops the axis."""
    n = data.shape[axis]
    shape = (*data.shape[:axis], *(() if scalar_ids else ids.shape), *data.shape[axis + 1 :])
    k = 0 if scalar_ids else len(ids.shape)
    result_name, data_name, ids_name = names or ("gather", data.name, ids.name)
    message = (
        f"gather '{result_name}': an index in '{ids_name}' is out of range; indices "
        f"into axis {axis} of '{data_name}' (size {n}) must be within [{-n}, {n - 1}]"
    )

    def f(*i):
        i = i if shape else ()  # a scalar result: its one-element stand-in's index
        raw = ids[(0,)] if scalar_ids else ids[tuple(i[axis : axis + k])]
        wrapped = te.if_then_else(raw < 0, raw + n, raw)
        clamped = te.minimum(te.maximum(wrapped, 0), n - 1)
        idx = (*i[:axis], clamped.astype("index"), *i[axis + k :])
        return checked(data[idx], (raw >= -n) & (raw < n), message)

    return te.compute(shape or (1,), f, name="gather")


def _block(layout: str) -> int:
    if layout == "NCHW":
        return 0
    return int(layout[4:-1])


def layout_transform(x: te.Tensor, src: str, dst: str) -> te.Tensor:
    """Between NCHW and blocked NCHW<b>c (channel c lives at [c // b, ..., c % b])."""
    bs, bd = _block(src), _block(dst)
    n, h, w = x.shape[0], x.shape[2], x.shape[3]
    c = x.shape[1] * bs if bs else x.shape[1]

    def read(nn, cc, hh, ww):
        if bs:
            return x[nn, cc // bs, hh, ww, cc % bs]
        return x[nn, cc, hh, ww]

    if bd and bs and bs % bd == 0:
        # Into a smaller block (NCHW16c -> NCHW4c): each destination block is one
        # piece of a source block, so the lanes read consecutive elements with no
        # div/mod on the lane (45 -> 13 us at 272 channels, 14 x 14).
        per = bs // bd
        return te.compute(
            (n, c // bd, h, w, bd),
            lambda nn, co, hh, ww, ci: x[nn, co // per, hh, ww, co % per * bd + ci],
            name="layout_transform",
        )
    if bd:
        return te.compute(
            (n, c // bd, h, w, bd),
            lambda nn, co, hh, ww, ci: read(nn, co * bd + ci, hh, ww),
            name="layout_transform",
        )
    return te.compute((n, c, h, w), read, name="layout_transform")
