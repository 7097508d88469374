"""Matching a stage's loop nest against a tensor intrinsic (`sched.tensorize`).

`s[C].tensorize(axis, intrin)` claims that the loops of C from `axis` inwards
(the *region*) compute what the intrinsic computes. `match_tensorize` checks it
on the te IR of both computes, with the stage's axes as index expressions in
its leaf loops (`analysis.expr`):

1. Each root axis of the stage has at most one loop of the region in it (its
   *inner part*, with coefficient 1: the inner half of a split or an unsplit
   axis); an axis fused inside the region is refused.
2. The stage's spatial axes pair with the intrinsic's output axes from the last
   one backwards (numpy's alignment: an intrinsic of rank 2 on a rank-4 stage
   takes its last two axes; the leading ones must have no loop in the region).
   The stage's reduce axes with a loop of extent > 1 in the region pair, in
   order, with the intrinsic's reduce axes of extent > 1. Extents must be equal.
   This pairing maps every intrinsic axis to a region loop (or to 0).
3. The bodies must be the same computation: matched as expression DAGs from
   the yielded (reduced) value back to the reads, the same op at each node with
   the same attributes and element types, the same reduction. Each `te.read` pairs a stage tensor with an intrinsic input; its
   indices, aligned from the last backwards as in 2, must have an inner part
   equal to the intrinsic's index with its axes mapped (an intrinsic reading
   `A[i, k]` matches a stage reading `A[io*4 + ii, ko*8 + ki]`, not
   `A[.., 2*ki]`); the rest is the operand's *base*, which may use only loops
   outside the region.

The result says, per intrinsic operand, which stage's buffer it is and the
index of its first element (`Region.base`), which is all `loop.tensor_intrin`
needs: the region is the intrinsic operand's shape placed at that base in the
buffer's trailing dimensions. A mismatch raises `Mismatch` with a sentence
naming the index, extent or type that differs; the schedule replay reports it
at the `sched.tensorize` op.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from tilecraft.analysis.bounds import index_expr
from tilecraft.analysis.expr import Div, Expr, Mod
from tilecraft.dialects import te
from tilecraft.dialects.sched_replay import (
    IterVar,
    ScheduleState,
    Stage,
    read_producers,
)
from tilecraft.dialects.tensor_intrin import TensorIntrin, lookup
from tilecraft.utils.diagnostics import OpError
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue


class Mismatch(Exception):
    """The region does not compute what the intrinsic computes (the message says why)."""


@dataclass(frozen=True)
class _Axis:
    """An intrinsic axis as an expression atom (printed as its name)."""

    name: str

    def __repr__(self) -> str:
        return self.name


@dataclass
class Region:
    """One operand of the intrinsic: the stage whose buffer holds it and the index
    (in the whole tensor) of its first element, one per tensor dimension."""

    stage: Stage
    base: list[Expr]


@dataclass
class TensorizeMatch:
    intrin: TensorIntrin
    axis: IterVar
    inner: list[IterVar]  # the region's loops, in loop order
    inputs: list[Region]  # one per intrinsic input, in its order
    output: Region


def _fmt(e: Expr) -> str:
    return repr(e).replace(" + -", " - ")


def match_tensorize(
    s: Stage,
    axis: IterVar,
    intrin: TensorIntrin,
    ext: dict[IterVar, int],
    root_values: dict[IterVar, Expr],
    producers: dict[te.ReadOp, Stage],
) -> TensorizeMatch:
    """Match the loops of `s` under `axis` with `intrin` (see the module docstring).
    `ext` gives every axis's extent, `root_values` each root axis as an expression
    in the leaf loops (and the loops `s` is computed in), `producers` the stage
    each te.read of `s` reads."""
    who = f"intrinsic {intrin.name}"
    if s.kind != "compute" or s.compute is None:
        raise Mismatch(f"stage '{s.name}' copies a tensor; only a stage that computes can be tensorized")
    order = s.loop_order
    inner = order[order.index(axis) :]
    inner_set = set(inner)
    inner_of = {r: _inner_loop(r, root_values[r], inner_set) for r in s.root}
    iext = intrin.extents()
    mapping: dict[Hashable, Expr] = {}

    # Output axes, aligned from the last.
    spatial, names = s.spatial_root, intrin.spatial_names
    lead = len(spatial) - len(names)
    if lead < 0:
        raise Mismatch(f"{who} computes a rank-{len(names)} tile; stage '{s.name}' has rank {len(spatial)}")
    for d, r in enumerate(spatial):
        leaf = inner_of[r]
        extent = ext[leaf] if leaf is not None else 1
        if d < lead:
            if extent != 1:
                raise Mismatch(
                    f"the region spans axis '{r.name}' of stage '{s.name}' (loop '{leaf.name}'), "
                    f"but {who} has an output of rank {len(names)}, which covers only the last "
                    f"{len(names)} axes"
                )
            continue
        n = names[d - lead]
        if extent != iext[n]:
            got = f"loop '{leaf.name}' has" if leaf is not None else f"axis '{r.name}' has no loop in the region:"
            raise Mismatch(f"{who}: output axis {n} has extent {iext[n]}, the stage's {got} extent {extent}")
        mapping[_Axis(n)] = Expr.var(leaf) if leaf is not None else Expr()

    # Reduction.
    s_reduce, i_reduce = s.compute.reduce, intrin.compute.reduce
    if (s_reduce is None) != (i_reduce is None):
        what = "reduces" if i_reduce is not None else "does not reduce"
        raise Mismatch(f"{who} {what}, stage '{s.name}' {'does' if s_reduce is not None else 'does not'}")
    if s_reduce is not None and i_reduce is not None:
        if s_reduce.kind.data != i_reduce.kind.data:
            raise Mismatch(
                f"{who} is a {i_reduce.kind.data.value} reduction, stage '{s.name}' a "
                f"{s_reduce.kind.data.value} reduction"
            )
        s_red = [r for r in s.reduce_root if inner_of[r] is not None and ext[inner_of[r]] > 1]
        i_red = [n for n in intrin.reduce_names if iext[n] > 1]
        if len(s_red) != len(i_red):
            mine = ", ".join(f"{inner_of[r].name} ({ext[inner_of[r]]})" for r in s_red) or "none"
            theirs = ", ".join(f"{n} ({iext[n]})" for n in i_red) or "none"
            raise Mismatch(f"{who} reduces over {theirs}; the region reduces over {mine}")
        for r, n in zip(s_red, i_red):
            leaf = inner_of[r]
            if ext[leaf] != iext[n]:
                raise Mismatch(f"{who}: reduce axis {n} has extent {iext[n]}, the stage's loop '{leaf.name}' has {ext[leaf]}")
            mapping[_Axis(n)] = Expr.var(leaf)
        for n in intrin.reduce_names:
            mapping.setdefault(_Axis(n), Expr())

    if s.element_type != intrin.output.element_type:
        raise Mismatch(
            f"{who}: output {intrin.output.name} has element type {intrin.output.element_type}, "
            f"stage '{s.name}' has {s.element_type}"
        )
    _check_scope(intrin.output, s, who)
    inputs = _match_bodies(s, intrin, root_values, producers, inner_set, mapping, who)
    out_base = [
        root_values[r] - (Expr.var(inner_of[r]) if inner_of[r] is not None else Expr()) for r in spatial
    ]
    return TensorizeMatch(intrin, axis, inner, inputs, Region(s, out_base))


def check_tensorize(
    state: ScheduleState, s: Stage, ext: dict[IterVar, int], root_values: dict[IterVar, Expr]
) -> TensorizeMatch:
    """The match of `s`'s tensorized region, or an OpError at its sched.tensorize
    (the schedule replay has checked the rest: the axis, serial loops, nothing
    computed inside)."""
    op = s.tensorize_op
    assert op is not None and s.tensorize_axis is not None
    intrin = lookup(op.intrin.data)
    assert intrin is not None, "the schedule replay checks the intrinsic's name"
    try:
        return match_tensorize(s, s.tensorize_axis, intrin, ext, root_values, read_producers(state))
    except Mismatch as e:
        raise OpError(op, f"sched.tensorize: {e}.") from None


def _inner_loop(r: IterVar, value: Expr, inner: set[IterVar]) -> IterVar | None:
    loops = []
    for atom, coeff in value.terms.items():
        if isinstance(atom, (Div, Mod)):
            if atom.expr.atoms() & inner:
                raise Mismatch(
                    f"axis '{r.name}' comes from a fused loop in the tensorized region; "
                    "tensorize needs each loop of the region to be part of one axis"
                )
        elif atom in inner:
            if coeff != 1:
                raise Mismatch(f"axis '{r.name}' steps by {coeff} with loop '{atom.name}'")
            loops.append(atom)
    if len(loops) > 1:
        raise Mismatch(
            f"axis '{r.name}' has two loops in the tensorized region ({loops[0].name}, "
            f"{loops[1].name}); tensorize needs one loop per axis there"
        )
    return loops[0] if loops else None


def _check_scope(operand, stage: Stage, who: str) -> None:
    if operand.scope is not None and stage.scope != operand.scope:
        raise Mismatch(
            f"{who}: {operand.name} must live in scope {operand.scope}, but '{stage.name}' "
            f"is in {stage.scope} (cache_read/cache_write it into {operand.scope})"
        )


def _env(compute: te.ComputeOp, values: list[Expr], reduce_values: list[Expr]) -> dict[SSAValue, Expr | None]:
    env: dict[SSAValue, Expr | None] = dict(zip(compute.body.block.args, values))
    if compute.reduce is not None:
        env.update(zip(compute.reduce.body.block.args, reduce_values))
    return env


def _match_bodies(
    s: Stage,
    intrin: TensorIntrin,
    root_values: dict[IterVar, Expr],
    producers: dict[te.ReadOp, Stage],
    inner: set[IterVar],
    mapping: dict[Hashable, Expr],
    who: str,
) -> list[Region]:
    """Match the two element computations as expression DAGs, from the yielded
    (reduced) value back to the reads: the same op at each node, with the same
    attributes and types, the operands matching in order."""
    mine, theirs = s.compute, intrin.compute
    env_s = _env(mine, [root_values[r] for r in s.spatial_root], [root_values[r] for r in s.reduce_root])
    env_i = _env(
        theirs,
        [Expr.var(_Axis(n)) for n in intrin.spatial_names],
        [Expr.var(_Axis(n)) for n in intrin.reduce_names],
    )
    args = list(intrin.function.body.block.args)
    bound: dict[int, Region] = {}
    matched: dict[SSAValue, SSAValue] = {}

    def match(x: SSAValue, y: SSAValue) -> None:
        if x in matched:
            if matched[x] is not y:
                raise Mismatch(f"{who} computes another value where the stage reuses one ('{x.owner.name}')")
            return
        a, b = x.owner, y.owner
        if not isinstance(a, Operation) or not isinstance(b, Operation):
            raise Mismatch(f"{who}: the stage uses a loop index as a value; tensorize matches computes whose indices only address tensors")
        if a.name != b.name:
            raise Mismatch(f"{who} computes '{b.name}' where stage '{s.name}' computes '{a.name}'")
        if isinstance(a, te.ReadOp):
            assert isinstance(b, te.ReadOp)
            k = args.index(b.tensor)
            region = _match_read(a, b, producers[a], intrin, k, env_s, env_i, inner, mapping, who)
            old = bound.setdefault(k, region)
            if old.stage is not region.stage or old.base != region.base:
                raise Mismatch(
                    f"{who} reads input {intrin.inputs[k].name} twice; the stage reads two "
                    "different regions there"
                )
        else:
            if [r.type for r in a.results] != [r.type for r in b.results]:
                raise Mismatch(
                    f"{who}: '{b.name}' gives {', '.join(str(r.type) for r in b.results)}, the "
                    f"stage's gives {', '.join(str(r.type) for r in a.results)}"
                )
            if a.properties != b.properties or len(a.operands) != len(b.operands) or a.regions or b.regions:
                raise Mismatch(f"{who}: '{b.name}' has other attributes or operands in the stage")
            for xo, yo in zip(a.operands, b.operands):
                if isinstance(xo.type, IndexType) or isinstance(yo.type, IndexType):
                    raise Mismatch(
                        f"{who}: '{a.name}' takes a loop index as a value; tensorize matches "
                        "computes whose indices only address tensors"
                    )
                match(xo, yo)
        matched[x] = y

    if mine.reduce is not None and theirs.reduce is not None:
        match(mine.reduce.yielded, theirs.reduce.yielded)
    else:
        match(mine.yielded, theirs.yielded)
    missing = [intrin.inputs[k].name for k in range(len(args)) if k not in bound]
    if missing:
        raise Mismatch(f"{who}: input {missing[0]} is never read")
    return [bound[k] for k in range(len(args))]


def _match_read(
    a: te.ReadOp,
    b: te.ReadOp,
    producer: Stage,
    intrin: TensorIntrin,
    k: int,
    env_s: dict,
    env_i: dict,
    inner: set[IterVar],
    mapping: dict[Hashable, Expr],
    who: str,
) -> Region:
    operand = intrin.inputs[k]
    if a.result.type != b.result.type:
        raise Mismatch(
            f"{who}: input {operand.name} has element type {b.result.type}, the stage reads "
            f"'{producer.name}' of {a.result.type} there"
        )
    _check_scope(operand, producer, who)
    s_idx = [index_expr(i, env_s) for i in a.indices]
    i_idx = [index_expr(i, env_i) for i in b.indices]
    if any(e is None for e in s_idx + i_idx):
        raise Mismatch(f"{who}: an index of the read of '{producer.name}' is not affine in the loops")
    lead = len(s_idx) - len(i_idx)
    if lead < 0:
        raise Mismatch(f"{who}: input {operand.name} has rank {len(i_idx)}, '{producer.name}' rank {len(s_idx)}")
    base = []
    for d, e in enumerate(s_idx):
        part = Expr()
        for atom, coeff in e.terms.items():
            if isinstance(atom, (Div, Mod)) and atom.expr.atoms() & inner:
                raise Mismatch(
                    f"{who}: the stage's index {d} of '{producer.name}' divides a loop of the region ({_fmt(e)})"
                )
            if atom in inner:
                part = part + Expr({atom: coeff})
        if d < lead:
            if not part.is_const:
                raise Mismatch(
                    f"{who}: the stage's index {d} of '{producer.name}' is {_fmt(part)} in the region, "
                    f"but input {operand.name} has rank {len(i_idx)} (its indices align with the last ones)"
                )
            base.append(e)
            continue
        want = i_idx[d - lead].substitute(lambda atom: mapping.get(atom))
        theirs = want - want.const
        if part != theirs:
            shown = _fmt(i_idx[d - lead])
            raise Mismatch(
                f"{who}: input {operand.name} index {d - lead} is {shown}, the stage reads {_fmt(part)} here"
            )
        base.append(e - want)
    return Region(producer, base)
