"""Bound inference: which part of a producer a consumer's loop body reads.

A stage computed at loop `X` of a consumer (sched.compute_at) must produce,
on each iteration of `X`, every element that the consumer reads while the loops
inside `X` run. Index expressions of the consumer's reads are followed
symbolically (`analysis.expr`) from the te body through the schedule's relations
down to the consumer's loop variables; loops enclosing `X` are fixed, the others
range over their extents. The result per producer dimension is a box
`[min, min + extent)` with `min` an expression in the enclosing loop variables and
`extent` a constant — the producer's loop extents and buffer shape. A read this
analysis cannot follow (a data-dependent index) gives the whole dimension.

`infer_bounds` runs this over a whole replayed schedule (TVM's InferBound), consumers
first, and returns what lowering reads: every stage's region, the extent of every
axis, and every root axis as an expression in the stage's loop variables.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from tilecraft.analysis.expr import (
    Div,
    Expr,
    NonAffine,
    Range,
    bounds,
    exact_range,
    nonnegative,
    split_range,
)
from tilecraft.dialects.sched_replay import (
    Fuse,
    IterVar,
    ScheduleState,
    Split,
    Stage,
    leaf_extents,
)
from tilecraft.dialects import te
from tilecraft.dialects.graph.shapes import shape_of
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.symbolic import FloorDiv as SymFloorDiv
from tilecraft.utils.symbolic import SymExpr

Access = tuple[Expr | None, ...]
Extent = int | Expr  # an Expr: of `Size` atoms, known when the program runs

# A size known only when the program runs ranges over [1, UNBOUNDED] in the
# integer reasoning (simplify, bounds): a wider range than the real one, so what
# is proven stays true.
UNBOUNDED = 1 << 40


@dataclass(frozen=True)
class Size:
    """A size known when the program runs (a `?` of the tensor types, named), as
    an atom of index expressions: the extent of a loop over a symbolic axis."""

    name: str

    def __repr__(self) -> str:
        return self.name


def extent_of(d: int | SymExpr, where: Operation | None = None) -> Extent:
    """A tensor dimension as an extent: an int, or an affine Expr of Size atoms."""
    if isinstance(d, int):
        return d
    total = Expr(const=d.constant_term)
    for monomial, c in d.terms():
        if len(monomial) != 1:
            raise _symbolic_error(where, f"the size {d} is not affine in the sizes it names")
        atom = monomial[0]
        if isinstance(atom, str):
            total = total + Expr.var(Size(atom)) * c
        elif isinstance(atom, SymFloorDiv):
            total = total + Expr.lift(extent_of(atom.expr, where)).floordiv(atom.divisor) * c
        else:
            total = total + Expr.lift(extent_of(atom.expr, where)).mod(atom.divisor) * c
    return total.const if total.is_const else total


def atom_range(extents: dict[Hashable, Extent]) -> Callable[[Hashable], Range]:
    """The inclusive range of each atom of index expressions: a loop variable
    runs over [0, extent), a Size over [1, UNBOUNDED] (also a loop over one)."""

    def rng(a: Hashable) -> Range:
        if isinstance(a, Size):
            return (1, UNBOUNDED)
        e = extents[a]
        return (0, e - 1) if isinstance(e, int) else (0, UNBOUNDED)

    return rng


def provably_below(e: Expr, limit: Extent, extents: dict[Hashable, Extent]) -> bool:
    """Whether `e < limit` for every value of its atoms: with integer ranges
    against a static limit; against a symbolic one, in the form a loop over the
    whole axis gives (`v + rest` with `v` running to `limit` and `rest <= 0`)."""
    rng = atom_range(extents)
    if isinstance(limit, int):
        return bounds(e, rng)[1] < limit
    for a, c in e.terms.items():
        if c == 1 and _runs_to(a, limit, extents):
            rest_hi = bounds(e - Expr.var(a), rng)[1]
            return rest_hi <= 0
    return False


def _runs_to(a: Hashable, limit: Expr, extents: dict[Hashable, Extent]) -> bool:
    """Whether atom `a` takes values up to `limit - 1` at most: a loop to `limit`,
    or a fused loop to `limit * d` divided by `d` (the outer axis of a fuse)."""
    if extents.get(a) == limit:
        return True
    if isinstance(a, Div) and a.expr.const == 0 and len(a.expr.terms) == 1:
        [(v, c)] = a.expr.terms.items()
        return c == 1 and extents.get(v) == limit * a.divisor
    return False


def _symbolic_error(where: Operation | None, message: str) -> Exception:
    return OpError(where, message) if where is not None else NonAffine(message)


def index_expr(
    value: SSAValue, env: dict[SSAValue, Expr | None], lower: Callable[[Hashable], int | None] = lambda a: 0
) -> Expr | None:
    """`value` as an expression in the atoms `env` binds (memoized in `env`), or None.

    `%` and `//` of te (`te.floormod`, `arith.floordivsi`) are followed by a positive
    constant; the truncating `arith.remsi`/`arith.divsi` only where the dividend is
    never negative (`lower` bounds each atom from below: loop variables from 0)."""
    if value in env:
        return env[value]
    op = value.owner
    result: Expr | None = None
    try:
        match op:
            case arith.ConstantOp() if isinstance(op.value, IntegerAttr):
                result = Expr(const=op.value.value.data)
            case arith.AddiOp():
                a, b = index_expr(op.lhs, env, lower), index_expr(op.rhs, env, lower)
                result = None if a is None or b is None else a + b
            case arith.SubiOp():
                a, b = index_expr(op.lhs, env, lower), index_expr(op.rhs, env, lower)
                result = None if a is None or b is None else a - b
            case arith.MuliOp():
                a, b = index_expr(op.lhs, env, lower), index_expr(op.rhs, env, lower)
                result = None if a is None or b is None else a * b
            case arith.FloorDivSIOp() | te.FloorModOp() | arith.DivSIOp() | arith.RemSIOp():
                a, b = index_expr(op.lhs, env, lower), index_expr(op.rhs, env, lower)
                floor = isinstance(op, arith.FloorDivSIOp | te.FloorModOp) or (
                    a is not None and nonnegative(a, lower)
                )
                if floor and a is not None and b is not None and b.is_const and b.const > 0:
                    is_div = isinstance(op, arith.FloorDivSIOp | arith.DivSIOp)
                    result = a.floordiv(b.const) if is_div else a.mod(b.const)
            case _:
                result = None
    except NonAffine:
        result = None
    env[value] = result
    return result


def stage_accesses(consumer: Stage, producer: Stage) -> list[Access]:
    """The index tuples with which `consumer` reads `producer`, as expressions in
    the consumer's root axes (None where an index cannot be followed)."""
    if consumer.kind == "copy":
        if consumer.source is producer:
            return [tuple(Expr.var(v) for v in consumer.spatial_root)]
        return []
    compute = consumer.compute
    assert compute is not None
    env: dict[SSAValue, Expr | None] = {
        arg: Expr.var(v) for arg, v in zip(compute.body.block.args, consumer.spatial_root)
    }
    if compute.reduce is not None:
        for arg, v in zip(compute.reduce.body.block.args, consumer.reduce_root):
            env[arg] = Expr.var(v)
    lows = {v: lo for v, (lo, _) in zip(consumer.root, consumer.root_bounds())}
    accesses: list[Access] = []
    for op in compute.body.walk():
        if isinstance(op, te.ReadOp) and consumer.reads.get(op.tensor) is producer:
            accesses.append(tuple(index_expr(i, env, lows.get) for i in op.indices))
    return accesses


def check_reads_in_bounds(compute: te.ComputeOp, what: str) -> None:
    """Reject a te.read of `compute` whose index leaves its tensor for some value of
    the compute's axes (and reduce axes): an `OpError` at the read, `what` (the pass)
    first. Reads inside `scf.if` are not checked (that is how padding is written:
    the condition keeps them in bounds), nor indices computed from data."""
    ranges: dict[SSAValue, Range] = {}
    env: dict[SSAValue, Expr | None] = {}
    maxima: dict[SSAValue, Expr] = {}  # the largest value of each axis, symbolic or not
    for arg, n in zip(compute.body.block.args, compute.shape):
        extent = extent_of(n)
        ranges[arg], env[arg] = (0, extent - 1 if isinstance(extent, int) else UNBOUNDED), Expr.var(arg)
        maxima[arg] = Expr.lift(extent) - 1
    if compute.reduce is not None:
        for arg, (lo, hi) in zip(compute.reduce.body.block.args, compute.reduce.bounds):
            top = extent_of(hi)
            ranges[arg], env[arg] = (lo, top - 1 if isinstance(top, int) else UNBOUNDED), Expr.var(arg)
            maxima[arg] = Expr.lift(top) - 1
    for op in compute.body.walk():
        if not isinstance(op, te.ReadOp) or _inside_if(op, compute):
            continue
        dims = [extent_of(n) for n in shape_of(op.tensor.type)]
        for d, (index, n) in enumerate(zip(op.indices, dims)):
            e = index_expr(index, env, lambda a: ranges[a][0])
            if e is None:
                continue
            if not isinstance(n, int) or any(not isinstance(m, int) for m in _extents_of(e, maxima)):
                if not _symbolically_within(e, n, ranges, maxima):
                    raise OpError(
                        op,
                        f"{what}: te.read of '{tensor_name(op.tensor)}' may be out of bounds: "
                        f"index {d} ({_spelled(e)}) is not provably within dimension {d} (size {n}) "
                        "for every size",
                    )
                continue
            lo, hi = bounds(e, ranges.__getitem__)  # may be wider than the values
            if lo < 0 or hi >= n:
                lo, hi = exact_range(e, ranges.__getitem__)
            if lo < 0 or hi >= n:
                raise OpError(
                    op,
                    f"{what}: te.read of '{tensor_name(op.tensor)}' is out of bounds: index "
                    f"{d} takes values from {lo} to {hi}, but dimension {d} has size {n} "
                    f"(valid: 0 to {n - 1}); guard the read with te.if_then_else or "
                    "change the index (`%` and `//` round toward minus infinity).",
                )


def _spelled(e: Expr) -> str:
    """An index of a te body's axes as written (`i + 1`, `2*k`)."""
    parts = [f"{'' if c == 1 else f'{c}*'}{getattr(a, 'name_hint', None) or a}" for a, c in e.terms.items()]
    if e.const or not parts:
        parts.append(str(e.const))
    return " + ".join(parts)


def _extents_of(e: Expr, maxima: dict[SSAValue, Expr]) -> list[int | Expr]:
    """The largest values of the axes `e` reads (ints where static)."""
    out: list[int | Expr] = []
    for a in e.atoms():
        top = maxima.get(a)  # type: ignore[call-overload]
        if top is not None:
            out.append(top.const if top.is_const else top)
    return out


def _symbolically_within(e: Expr, n: Extent, ranges: dict, maxima: dict[SSAValue, Expr]) -> bool:
    """Whether `0 <= e < n` for every size: `e` affine in the axes (their
    smallest and largest values substituted by the signs of the coefficients),
    the differences judged with every size at least 1."""
    lo = hi = Expr(const=e.const)
    for a, c in e.terms.items():
        if a not in maxima:
            return False  # a div/mod of axes: not followed here
        low, top = Expr(const=ranges[a][0]), maxima[a]
        lo, hi = (lo + low * c, hi + top * c) if c >= 0 else (lo + top * c, hi + low * c)
    def sizes(atom):
        return 1 if isinstance(atom, Size) else None
    return nonnegative(lo, sizes) and nonnegative(Expr.lift(n) - 1 - hi, sizes)


def _inside_if(op: Operation, compute: te.ComputeOp) -> bool:
    parent = op.parent_op()
    while parent is not None and parent is not compute:
        if isinstance(parent, scf.IfOp):
            return True
        parent = parent.parent_op()
    return False


def tensor_name(value: SSAValue) -> str:
    """The name of a te tensor: its te.compute's, or the argument's `tc.name`."""
    if isinstance(value.owner, te.ComputeOp):
        return value.owner.tensor_name.data
    return value.name_hint or "?"


def infer_region(
    producer: Stage,
    requests: list[tuple[Stage, set[Hashable]]],
    root_values: dict[Stage, dict[IterVar, Expr]],
    extents: dict[Hashable, Extent],
) -> tuple[list[Expr], list[Extent]]:
    """The box of `producer` that its readers need while the loops in their `free`
    sets run (the loops inside the attach point).

    `requests` pairs each reader with its free loop variables; `root_values` gives
    every stage's root axes as expressions in loop variables; `extents` gives each
    loop variable's extent."""

    rng = atom_range(extents)
    boxes: list[list[tuple[Expr, int] | None]] = []
    for reader, free in requests:
        values = root_values[reader]
        for access in stage_accesses(reader, producer):
            box = []
            for e in access:
                if e is None:
                    box.append(None)
                    continue
                value = e.substitute(lambda a: values.get(a))
                box.append(split_range(value, lambda a: a in free, rng))
            boxes.append(box)
    mins: list[Expr] = []
    sizes: list[Extent] = []
    for d, n in enumerate(producer.shape):
        lo_hi = _union([b[d] for b in boxes])
        n = extent_of(n)
        # (a span that a loop to a run-time bound runs over: the whole dimension)
        if lo_hi is None or lo_hi[1] >= UNBOUNDED or isinstance(n, int) and lo_hi[1] >= n:
            mins.append(Expr())
            sizes.append(n)
        else:
            mins.append(lo_hi[0])
            sizes.append(lo_hi[1])
    return mins, sizes


def _union(ranges: list[tuple[Expr, int] | None]) -> tuple[Expr, int] | None:
    if not ranges or any(r is None for r in ranges):
        return None
    base = ranges[0][0]
    lo, hi = 0, 0
    for m, ext in ranges:
        diff = m - base
        if not diff.is_const:
            return None
        lo, hi = min(lo, diff.const), max(hi, diff.const + ext)
    return base + lo, hi - lo


@dataclass
class Bounds:
    """The result of bound inference over one schedule."""

    # Per stage: the box of the tensor it computes, as (mins, sizes): the whole
    # tensor at the root, the region its readers need when computed at a loop.
    regions: dict[Stage, tuple[list[Expr], list[Extent]]] = field(default_factory=dict)
    # Per stage: the extent of each of its axes (root, intermediate and leaf).
    leaf_extents: dict[Stage, dict[IterVar, Extent]] = field(default_factory=dict)
    # Every axis of every stage with its extent (loop variables range [0, extent)).
    extents: dict[Hashable, Extent] = field(default_factory=dict)
    # Per stage: each root axis as an expression in the stage's leaf axes and the
    # loop variables of the loops it is computed in.
    root_values: dict[Stage, dict[IterVar, Expr]] = field(default_factory=dict)


def infer_bounds(state: ScheduleState) -> Bounds:
    """Regions, axis extents and root index expressions of every stage of `state`,
    consumers first: a stage's region depends on the loops of its readers."""
    result = Bounds()
    for s in reversed(state.topological_order()):
        if s.kind == "input" or s.attach == "inline":
            continue
        where = s.attach_op or s.compute
        try:
            if s.attach == "at":
                requests = _requests(state, s)
                mins, sizes = infer_region(s, requests, result.root_values, result.extents)
            else:
                mins, sizes = [Expr()] * len(s.shape), [extent_of(d) for d in s.shape]
            result.regions[s] = (mins, sizes)
            reduce_bounds = s.root_bounds()[len(s.shape) :]
            root_mins = list(mins) + [Expr(const=lo) for lo, _ in reduce_bounds]
            root_ext = list(sizes) + [extent_of(hi - lo) for lo, hi in reduce_bounds]
            ext = leaf_extents(s, root_ext)
            local = axis_values(s, ext)
        except NonAffine as e:
            raise OpError(where, f"convert-te-to-loop: stage '{s.name}', whose sizes are known only "
                          f"when it runs: {e}") from None  # fmt: skip
        result.leaf_extents[s] = ext
        result.extents.update(ext)
        result.root_values[s] = {r: root_mins[k] + local[r] for k, r in enumerate(s.root)}
    return result


def _requests(state: ScheduleState, p: Stage) -> list[tuple[Stage, set[Hashable]]]:
    """Each reader of `p` with the loops that run inside `p`'s attach point (and,
    for a "shared" stage, the thread-bound loops around it: one buffer serves
    every thread of the block, so it holds what all of them read)."""
    consumer, axis = p.attach_stage, p.attach_axis
    order = consumer.loop_order
    after = set(order[order.index(axis) + 1 :])
    if p.scope == "shared":
        after |= set(enclosing_thread_loops(consumer, axis))
    requests = []
    for reader in state.readers(p):
        free: set[Hashable] = set(after)
        s = reader
        while s is not consumer:
            free |= set(s.leaves)
            s = s.attach_stage
        requests.append((reader, free))
    return requests


def enclosing_thread_loops(stage: Stage, axis: IterVar) -> list[IterVar]:
    """The loops bound to a thread index (`threadIdx.x`, ...) from the outermost
    down to `axis` of `stage`, through the stages it is computed in."""
    found: list[IterVar] = []
    while True:
        order = stage.loop_order
        found = [v for v in order[: order.index(axis) + 1] if v.annotation.startswith("threadIdx.")] + found
        if stage.attach != "at" or stage.attach_stage is None or stage.attach_axis is None:
            return found
        stage, axis = stage.attach_stage, stage.attach_axis


def axis_values(s: Stage, ext: dict[IterVar, Extent]) -> dict[IterVar, Expr]:
    """Every axis of `s` as an expression in its leaf axes (relations undone in
    reverse: `outer * factor + inner` for a split, div/mod for a fuse)."""
    value: dict[IterVar, Expr] = {v: Expr.var(v) for v in s.leaves}
    for rel in reversed(s.relations):
        if isinstance(rel, Split):
            inner = ext[rel.inner]
            if not isinstance(inner, int):
                raise NonAffine(f"split '{rel.parent.name}' by a factor, not into parts (its inner extent is {inner})")
            value[rel.parent] = value[rel.outer] * inner + value[rel.inner]
        elif isinstance(rel, Fuse):
            rest = value[rel.fused]
            for p in reversed(rel.parents[1:]):
                if not isinstance(ext[p], int):
                    raise NonAffine(f"only the outermost axis of a fuse may have a size known when it runs, not '{p.name}'")
                value[p] = rest.mod(ext[p])
                rest = rest.floordiv(ext[p])
            value[rel.parents[0]] = rest
    return value
