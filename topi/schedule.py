"""Default CPU schedules for fused groups that have no complex anchor.

- **injective** (`schedule_injective`): the trailing axes are fused until they
  span at least a vector, split by the vector width and vectorized; the leading
  axes are fused into one parallel loop (when the tensor is big enough that
  threads pay for themselves). Fusing stops before an axis that would make the
  fused extent more than a vector and not a multiple of one (14 x 14, 7 x 7): the
  last axis is vectorized alone instead, since a fused index pays a div/mod per
  lane and its tail a guard, and the reads become gathers (ShuffleNet-v2's channel
  shuffle of 232 channels at 14 x 14: 35 -> 7 us, of 464 at 7 x 7: 27 -> 10 us).
  A last axis that one vector holds whole but whose lanes would gather
  (`lanes_gather`: probed at a few points, following the inlined producers, the
  lanes read other tensors or branches, or elements that are neither one for all
  lanes nor consecutive) is unrolled instead, inside a serial loop over the axis
  before it: each lane's index arithmetic folds to constants, and LLVM vectorizes
  the unrolled lanes along that loop. Such are the channel shuffles and NCHW ->
  NCHW16c transforms of a padded blocked layout, whose lanes read channels
  (ShuffleNet-v2's shuffle of 116 channels into 8 blocks at 28 x 28: 295 -> 29 us,
  of 232 into 15 at 14 x 14: 141 -> 14 us; the pad and transform of 58 channels
  at 28 x 28: 32 -> 21 us; NCHW16c -> NCHW at 7 x 7: 17 -> 10 us). A longer
  such axis (a multiple of the vector) is cut in tiles of one vector, unrolled the
  same way inside the loop over the axis before: BERT's key transpose (128 x 768
  to 12 x 64 x 128) 110 -> 49 us. (Gathers are slow on this host: microcode
  that mitigates Gather Data Sampling serializes them.)
- **rows** (`schedule_rows`): for a group whose reductions run over the trailing
  axes (softmax, layer_norm, mean over the last axis, global pooling): the output's
  leading axes are fused into one parallel loop over rows, every reduction and
  kept stage is computed at that loop (bound inference gives it one row), and the
  row is vectorized.
- **reductions left at the root** (`schedule_reduce`): when a reduction is not over
  trailing axes, its reduce axes go outside the innermost spatial axis, which is
  vectorized; the leading spatial axes run in parallel.

`inline_injective` computes every injective intermediate inline unless it is
tagged `keep` or inlining would copy a large expression many times.

Pooling and reductions are tunable (tuning templates "pool2d" and "reduce",
autotune/topi_templates.py): their topi computes tag the reduction stages with
their workload (`workload` tag, topi/pool.py, topi/reduce.py), and the group's
schedule asks the tuning context for a config of it (`config_for`). The knobs
(`reduction_space`, topi/reduce.py) are the decisions the strategies above make:
`parallel` (the outer loop parallel or not), `vector` (the vector width of the
innermost output axis, or of the row), `unroll` (unroll the innermost reduce
axis), `order` (reduce axes outside the whole innermost axis, or inside each
vector of it: the accumulators then stay in a register across the window). A
knob a strategy does not use keeps its default; no config means the defaults,
which are the heuristics' decisions above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tilecraft.frontends import te
from tilecraft.topi.common import tags_of
from tilecraft.topi.tuning import check_config, config_for, workload_key

# Below this much work (output elements, times the reduce extent for reductions) a
# parallel loop costs more than it saves: a memory-bound copy of 100K floats takes
# ~20 us on one core, a parallel launch and barrier several us on an idle machine
# and far more on a loaded one, where a waiting thread may lose its core.
PARALLEL_MIN_ELEMENTS = 1 << 17
# An expression larger than this (in nodes, counting inlined copies) is not inlined.
INLINE_MAX_NODES = 600


def parallel_pays(t: te.Tensor) -> bool:
    """Whether computing `t` is work enough for a parallel loop: its output elements
    times its reduce extent (the multiply-adds of a conv or dense) reach
    PARALLEL_MIN_ELEMENTS. The conv2d and dense schedules ask this before they
    parallelize, so the small kernels of a small model run on the calling thread.
    With a size known only when it runs: yes (its launch caps its threads then,
    from the extent it gets: `tc.iteration_cost`)."""
    extents = [*t.shape, *(r.extent for r in t.op.reduce_axis)]
    if not all(isinstance(n, int) for n in extents):
        return True
    return math.prod(extents) >= PARALLEL_MIN_ELEMENTS


def vector_lanes(dtype: str) -> int:
    """SIMD lanes worth of `dtype` in a 512-bit register."""
    bits = {"float64": 64, "int64": 64, "int8": 8, "bool": 8}.get(dtype, 32)
    return 512 // bits


def stages(outputs: Sequence[te.Tensor]) -> list[te.Tensor]:
    """Every computed tensor the outputs need, producers first."""
    order: list[te.Tensor] = []
    seen: set[int] = set()

    def visit(t: te.Tensor):
        if id(t) in seen:
            return
        seen.add(id(t))
        for u in t.op.input_tensors:
            visit(u)
        if isinstance(t.op, te.ComputeOp):
            order.append(t)

    for t in outputs:
        visit(t)
    return order


def is_reduce(t: te.Tensor) -> bool:
    return bool(t.op.reduce_axis)


def inline_injective(
    s: te.Schedule, tensors: Sequence[te.Tensor], outputs: Sequence[te.Tensor]
) -> list[te.Tensor]:
    """compute_inline the injective intermediates; returns the stages left standing."""
    out_ids = {id(t) for t in outputs}
    cost: dict[int, int] = {}
    inlined: set[int] = set()
    kept = []
    for t in tensors:  # producers first, so readers see their inputs' costs
        nodes = 0
        for e in _nodes(t.op.body):
            nodes += 1
            if isinstance(e, te.Read) and id(e.tensor) in inlined:
                nodes += cost[id(e.tensor)]
        cost[id(t)] = nodes
        if (
            id(t) in out_ids
            or is_reduce(t)
            or tags_of(t).get("keep")
            or nodes > INLINE_MAX_NODES
        ):
            kept.append(t)
            continue
        s[t].compute_inline()
        inlined.add(id(t))
    return kept


def _nodes(expr: te.Expr):
    from tilecraft.frontends.te import _walk

    return _walk(expr)


def _vectorize_tail(s: te.Schedule, t: te.Tensor, axis, extent: int, width: int | None = None):
    """Split `axis` by the vector width (`width`, else a register's lanes) and
    vectorize the inner part; returns the outer part (or None when the axis is no
    longer than a vector and is vectorized whole). Width 1 leaves the axis scalar."""
    lanes = width or vector_lanes(t.dtype)
    if lanes <= 1:
        return axis
    if isinstance(extent, int) and extent <= lanes:
        s[t].vectorize(axis)
        return None
    outer, inner = s[t].split(axis, factor=lanes)
    s[t].vectorize(inner)
    return outer


class _Opaque(Exception):
    """An index or condition the lane probe cannot evaluate (it reads memory)."""


_INT_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "floormod": lambda a, b: a % b,
    "truncdiv": lambda a, b: int(a / b), "truncmod": lambda a, b: a - int(a / b) * b,
    "max": max, "min": min, "and": lambda a, b: a and b, "or": lambda a, b: a or b,
}  # fmt: skip
_COMPARE = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
}  # fmt: skip


def _index_value(e: te.Expr, env: dict[int, int]) -> int:
    """The value of an integer (or boolean) index expression at one point."""
    if isinstance(e, te.IterVar):
        return env[id(e)]
    if isinstance(e, te.Const) and not isinstance(e.value, float):
        return int(e.value)
    if isinstance(e, te.Cast):
        return _index_value(e.operand, env)
    if isinstance(e, te.Compare):
        return _COMPARE[e.op](_index_value(e.lhs, env), _index_value(e.rhs, env))
    if isinstance(e, te.Binary) and e.op in _INT_BINARY:
        return int(_INT_BINARY[e.op](_index_value(e.lhs, env), _index_value(e.rhs, env)))
    raise _Opaque


def _leaf_reads(s: te.Schedule, e: te.Expr, env: dict[int, int], out: list) -> None:
    """Append (tensor, index) for every element of a stored tensor (an input or a
    stage not inlined) that computing `e` at the point `env` reads, following
    inlined stages into their bodies and if-then-else into the branch taken."""
    if isinstance(e, te.IfThenElse):
        try:
            taken = e.then if _index_value(e.cond, env) else e.orelse
        except _Opaque:
            for child in e.children():
                _leaf_reads(s, child, env, out)
            return
        _leaf_reads(s, taken, env, out)
        return
    if isinstance(e, te.Read):
        index = tuple(_index_value(i, env) for i in e.indices)
        op = e.tensor.op
        if isinstance(op, te.ComputeOp) and s[e.tensor].attach == "inline" and not op.reduce_axis:
            inner = {id(a): v for a, v in zip(op.axis, index)}
            _leaf_reads(s, op.body, inner, out)
        else:
            out.append((id(e.tensor), index))
        return
    for child in e.children():
        _leaf_reads(s, child, env, out)


def lanes_gather(s: te.Schedule, t: te.Tensor) -> bool:
    """Whether vectorizing the last axis of `t` (its inlined producers followed)
    reads some input with a gather: at a few points of the other axes, the lanes
    read different tensors or branches, or an element that is neither the same
    for every lane nor lane-consecutive along its tensor's last axis (a channel
    shuffle or an NCHW -> NCHW16c transform, whose lanes read channels)."""
    op = t.op
    *head, last = op.axis
    if not all(isinstance(a.extent, int) for a in op.axis):
        return False  # symbolic sizes: nothing to probe
    points = [[0] * len(head), [a.extent - 1 for a in head], [a.extent // 2 for a in head]]
    try:
        for point in points:
            env = {id(a): v for a, v in zip(head, point)}
            lanes = []
            for lane in range(last.extent):
                env[id(last)] = lane
                reads: list = []
                _leaf_reads(s, op.body, env, reads)
                lanes.append(reads)
            first = lanes[0]
            for lane, reads in enumerate(lanes):
                if [r[0] for r in reads] != [r[0] for r in first]:
                    return True
                for (_, index), (_, base) in zip(reads, first):
                    if index[:-1] != base[:-1] or index[-1] not in (base[-1], base[-1] + lane):
                        return True
    except (_Opaque, KeyError, ZeroDivisionError):
        return False  # an index the probe cannot evaluate: assume no gather
    return False


def schedule_injective(s: te.Schedule, t: te.Tensor) -> None:
    """Fuse, vectorize the tail, parallelize the head (see the module docstring)."""
    axes = list(s[t].op.axis)
    shape = t.shape
    if not all(isinstance(n, int) for n in shape):
        _schedule_injective_symbolic(s, t)
        return
    lanes = vector_lanes(t.dtype)
    k = len(axes) - 1
    inner_ext = shape[k]
    while inner_ext < lanes and k > 0:
        fused = inner_ext * shape[k - 1]
        if inner_ext > 1 and fused > lanes and fused % lanes:
            break  # (see the module docstring)
        k -= 1
        inner_ext = fused
    head, tail = axes[:k], axes[k:]
    parallel = math.prod(shape) >= PARALLEL_MIN_ELEMENTS
    if len(tail) == 1 and 1 < inner_ext <= lanes and len(head) >= 2 and lanes_gather(s, t):
        # Lanes that would gather: unrolled, so each reads its element with constant
        # index arithmetic, inside a loop over the axis before (the scalar loads and
        # stores of the unrolled lanes then vectorize along it: see the docstring).
        outer = s[t].fuse(*head[:-1]) if len(head) > 2 else head[0]
        s[t].unroll(tail[0])
        if parallel and math.prod(shape[: k - 1]) > 1:
            s[t].parallel(outer)
        return
    if (len(tail) == 1 and inner_ext > lanes and inner_ext % lanes == 0 and head
            and shape[k - 1] > 1 and lanes_gather(s, t)):  # fmt: skip
        # A long last axis whose lanes would gather (a transpose of the last two
        # axes): tiles of one vector, each unrolled inside the loop over the axis
        # before, along which the reads are consecutive (see the docstring).
        tiles, lane = s[t].split(tail[0], factor=lanes)
        s[t].reorder(*head[:-1], tiles, head[-1], lane)
        s[t].unroll(lane)
        outer = s[t].fuse(*head[:-1], tiles) if len(head) > 1 else tiles
        if parallel:
            s[t].parallel(outer)
        return
    outer = s[t].fuse(*head) if len(head) > 1 else (head[0] if head else None)
    inner = s[t].fuse(*tail) if len(tail) > 1 else tail[0]
    inner_outer = _vectorize_tail(s, t, inner, inner_ext)
    if not parallel:
        return
    if outer is not None and math.prod(shape[:k]) > 1:
        s[t].parallel(outer)
    elif inner_outer is not None:
        s[t].parallel(inner_outer)


def _schedule_injective_symbolic(s: te.Schedule, t: te.Tensor) -> None:
    """`schedule_injective` where some sizes are known only when it runs: the
    static trailing axes fused and vectorized (or, when the last axis is
    symbolic, it in vector tiles, the last one guarded), the first axis parallel
    (a launch that caps its threads from the extent it gets). Symbolic axes are
    never fused but as the outermost, which recovering the others needs."""
    axes = list(s[t].op.axis)
    shape = t.shape
    k = len(axes)
    while k > 0 and isinstance(shape[k - 1], int):
        k -= 1
    head, tail = axes[:k], axes[k:]
    if tail:
        inner = s[t].fuse(*tail) if len(tail) > 1 else tail[0]
        _vectorize_tail(s, t, inner, math.prod(shape[k:]))
        if head:
            s[t].parallel(head[0])
        return
    tiles, lane = s[t].split(axes[-1], factor=vector_lanes(t.dtype))
    s[t].vectorize(lane)
    s[t].parallel(axes[0] if len(axes) > 1 else tiles)


def _knobs(t: te.Tensor, config: dict | None, parallel: bool) -> dict:
    """Every knob of a reduction's schedule: `config`'s where it sets one, else the
    heuristics' (`parallel` is theirs for this strategy)."""
    knobs = {"order": 0, "vector": vector_lanes(t.dtype), "parallel": int(parallel), "unroll": 0}
    knobs.update(config or {})
    return knobs


def schedule_reduce(s: te.Schedule, t: te.Tensor, config: dict | None = None) -> dict:
    """A reduction computed at the root: spatial head in parallel; the reduce axes
    outside the innermost spatial axis, which is vectorized, unless the reduction
    runs over trailing axes (then the reduce loop stays innermost, reading memory
    contiguously, and LLVM vectorizes it with reassociation). `config` overrides
    the knobs (module docstring); returns the knobs in effect."""
    axes = list(s[t].op.axis)
    red = list(s[t].op.reduce_axis)
    shape = t.shape
    work = math.prod(shape) * math.prod(r.extent for r in red)
    pays = _may_exceed(work, PARALLEL_MIN_ELEMENTS - 1)
    if tags_of(t).get("row") or _is_one(shape[-1]):
        knobs = _knobs(t, config, pays)
        fused, _ = fuse_outer(s, t, axes)
        if knobs["unroll"]:
            s[t].unroll(red[-1])
        if knobs["parallel"] and _may_exceed(math.prod(shape), 1):
            s[t].parallel(fused)
        return knobs
    knobs = _knobs(t, config, pays)
    head, last = axes[:-1], axes[-1]
    s[t].reorder(*head, *red, last)
    width = knobs["vector"]
    if width <= 1:  # scalar: the reduce axes innermost with `order`
        if knobs["order"]:
            s[t].reorder(*head, last, *red)
    elif isinstance(shape[-1], int) and shape[-1] <= width:
        s[t].vectorize(last)
    else:
        outer, inner = s[t].split(last, factor=width)
        if knobs["order"]:  # the window inside each vector of outputs
            s[t].reorder(*head, outer, *red, inner)
        s[t].vectorize(inner)
    if knobs["unroll"]:
        s[t].unroll(red[-1])
    if knobs["parallel"] and len(axes) > 1 and _may_exceed(math.prod(shape[:-1]), 1):
        s[t].parallel(fuse_outer(s, t, head)[0])
    return knobs


def row_rank(kept: Sequence[te.Tensor], out: te.Tensor) -> int | None:
    """How many trailing axes of `out` form a row that every kept reduction reduces
    over (their `row` tags agree), or None when the rows strategy does not apply."""
    rows = {tags_of(t).get("row", 0) for t in kept if is_reduce(t)}
    if len(rows) != 1:
        return None
    (row,) = rows
    if not row or row > len(out.shape):
        return None
    return row


def schedule_rows(
    s: te.Schedule, out: te.Tensor, row: int, attached: Sequence[te.Tensor], config: dict | None = None,
    tuned: Sequence[te.Tensor] = (),
) -> dict:
    """One parallel iteration per row of `out`; `attached` computed inside it.
    `config` sets the knobs (module docstring) of the row and of the `tuned`
    reductions; returns the knobs in effect."""
    tuned_ids = {id(t) for t in tuned}
    axes = list(s[out].op.axis)
    head, tail = axes[: len(axes) - row], axes[len(axes) - row :]
    row_ext = math.prod(out.shape[len(axes) - row :])
    n_rows = math.prod(out.shape[: len(axes) - row])
    if not head:  # a single row: nothing to attach to
        used = []
        for t in attached:
            if not is_reduce(t):
                schedule_injective(s, t)
            elif id(t) in tuned_ids:
                used.append(schedule_reduce(s, t, config))
            else:
                schedule_reduce(s, t)
        schedule_injective(s, out)
        return used[0] if used else _knobs(out, config, False)
    knobs = _knobs(out, config, _may_exceed(n_rows, 1) and _may_exceed(math.prod(out.shape) * 2, PARALLEL_MIN_ELEMENTS - 1))
    rows, row_loop = fuse_outer(s, out, head)
    inner = s[out].fuse(*tail) if len(tail) > 1 else tail[0]
    if _may_exceed(row_ext, 1):
        _vectorize_tail(s, out, inner, row_ext, knobs["vector"])
    for t in attached:
        s[t].compute_at(s[out], row_loop)
        # (a stage of lower rank is per row, e.g. layer_norm's [batch, seq] means:
        # one element at the row loop, which a split would widen to a vector of rows)
        if not is_reduce(t) and len(t.shape) == len(out.shape) and _may_exceed(t.shape[-1], 1):
            _vectorize_tail(s, t, s[t].op.axis[-1], t.shape[-1], knobs["vector"])
        elif is_reduce(t) and id(t) in tuned_ids and knobs["unroll"]:
            s[t].unroll(s[t].op.reduce_axis[-1])
    if _may_exceed(n_rows, 1) and knobs["parallel"]:
        s[out].parallel(rows)
    return knobs


def fuse_outer(s: te.Schedule, t: te.Tensor, axes: Sequence) -> tuple:
    """Fuse the outer `axes` of `t` into one loop to run in parallel: all of them,
    or, with sizes known only when it runs, up to the next symbolic one (only the
    outermost axis of a fuse may be symbolic: recovering the others divides by
    their extents). Returns the fused loop and the innermost of `axes` (the fused
    loop itself when it took them all)."""
    n = 1
    while n < len(axes) and isinstance(axes[n].extent, int):
        n += 1
    fused = s[t].fuse(*axes[:n]) if n > 1 else axes[0]
    return fused, (fused if n == len(axes) else axes[-1])


def _is_one(n) -> bool:
    return isinstance(n, int) and n == 1


def _may_exceed(n, bound: int) -> bool:
    """n > bound, or a size known only when it runs (which may be)."""
    return not isinstance(n, int) or n > bound


def tunable_stages(kept: Sequence[te.Tensor]) -> tuple[tuple | None, list[te.Tensor]]:
    """The group's tunable workload (that of its first reduction a pooling or
    reduction compute tagged) and the stages it tags."""
    workload = next((tags_of(t)["workload"] for t in kept if is_reduce(t) and "workload" in tags_of(t)), None)
    if workload is None:
        return None, []
    return workload, [t for t in kept if is_reduce(t) and tags_of(t).get("workload") == workload]


def default_schedule(outputs: Sequence[te.Tensor], config: dict | None = None) -> te.Schedule:
    """The schedule of a group without a complex anchor (module docstring); the
    knobs of its tunable reduction from `config`, else the tuning context, else
    the heuristics."""
    return _schedule(outputs, config)[0]


def default_knobs(outputs: Sequence[te.Tensor]) -> dict | None:
    """The knobs the untuned schedule of a group uses for its tunable reduction
    (None: the group has none): the default config of the tuning templates."""
    return _schedule(outputs, None, ask=False)[1]


def _schedule(outputs: Sequence[te.Tensor], config: dict | None, ask: bool = True):
    from tilecraft.topi.reduce import reduction_space

    s = te.create_schedule(list(outputs))
    tensors = stages(outputs)
    kept = inline_injective(s, tensors, outputs)
    workload, tuned = tunable_stages(kept)
    if workload is not None:
        where = tuned[0].name
        if config is None and ask:
            config = config_for(*workload)
            where = f"{tuned[0].name} (the tuning log's config of {workload_key(*workload)})"
        if config is not None:
            check_config(config, reduction_space(tuned[0]), where)
    tuned_ids = {id(t) for t in tuned}
    used = None

    def reduce_at_root(t: te.Tensor) -> None:
        nonlocal used
        knobs = schedule_reduce(s, t, config if id(t) in tuned_ids else None)
        if id(t) in tuned_ids and used is None:
            used = knobs

    out_ids = {id(t) for t in outputs}
    inner = [t for t in kept if id(t) not in out_ids]
    main = outputs[0]
    row = None
    if len(outputs) == 1 and inner and not is_reduce(main):
        row = row_rank(inner, main)
    if row is not None:
        knobs = schedule_rows(s, main, row, inner, config, tuned)
        return s, (knobs if tuned else None)
    for t in [*inner, *outputs]:
        if is_reduce(t):
            reduce_at_root(t)
        else:
            schedule_injective(s, t)
    return s, used
