"""`loop-partition`: iterations where a loop's guards always hold run without them.

A split that does not divide its axis leaves a guard (`loop.guard`) on the tail,
and the guard sits inside the innermost loops: a GEMM whose 1000 columns are
tiled by 64 checks `j < 1000` in every vector of every register tile, so the
vectorizer masks every load, store and accumulator of every tile, not only the
last one's (measured: a 64 x 1280 x 1000 dense 2.5x slower than at 1024
columns). As TVM's LoopPartition, this pass finds, for a loop, the range of its
iterations on which its guards hold for every value of the loops inside, and
runs that range on a copy of the body without those guards:

- a guard is considered when its condition is a conjunction (`arith.andi`) of
  signed comparisons (`arith.cmpi slt/sle/sgt/sge`) of affine index expressions
  (`arith.addi`, `subi`, `muli` by a constant, constants) of loop variables;
- the guard belongs to the outermost loop whose variable it depends on; every
  other variable in it ranges over its loop's bounds, and the guard's *true
  range* is where it holds for all of them;
- a loop's range is the intersection of its guards' true ranges. A serial loop
  becomes up to three loops (the head and tail keep the guards, the middle has
  them inlined); a parallel loop keeps one launch and branches in its body
  between a copy without the guards (inside the range) and the original.

Loops that are vectorized or unrolled are left alone: the vectorizer masks lanes
of a guard that varies across them, unrolling makes a guard's condition constant.
Guards on anything else (a loaded value, a division) stay as they are.

```mlir
loop.for %jo = 0 to 4 {
  loop.for %ji = 0 to 8 vectorized {
    %j = arith.addi %base, %ji : index      // %base = %jo * 8
    %ok = arith.cmpi slt, %j, %c30 : index
    loop.guard %ok { ... }
  }
}
```
becomes a loop `%jo = 0 to 3` whose body has the guard's contents inlined, then
`%jo = 3 to 4` with the guard.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.dialects.loop import ForOp, GuardOp, LoopKind, YieldOp
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

# arith.cmpi predicates: slt, sle, sgt, sge
_SLT, _SLE, _SGT, _SGE = 2, 3, 4, 5


@dataclass(frozen=True)
class Affine:
    """sum(coeffs[v] * v) + const over loop variables v."""

    coeffs: tuple[tuple[SSAValue, int], ...]
    const: int

    def scaled(self, k: int) -> Affine:
        return Affine(tuple((v, c * k) for v, c in self.coeffs), self.const * k)

    def plus(self, other: Affine) -> Affine:
        merged: dict[SSAValue, int] = dict(self.coeffs)
        for v, c in other.coeffs:
            merged[v] = merged.get(v, 0) + c
        return Affine(tuple((v, c) for v, c in merged.items() if c), self.const + other.const)


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _loop_of(value: SSAValue) -> ForOp | None:
    if isinstance(value, BlockArgument) and isinstance(value.block.parent_op(), ForOp):
        return value.block.parent_op()
    return None


def affine(value: SSAValue) -> Affine | None:
    """`value` as an affine expression of loop variables, or None."""
    k = _constant(value)
    if k is not None:
        return Affine((), k)
    if _loop_of(value) is not None:
        return Affine(((value, 1),), 0)
    op = value.owner
    if isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp)):
        lhs, rhs = affine(op.lhs), affine(op.rhs)
        if lhs is None or rhs is None:
            return None
        if isinstance(op, arith.AddiOp):
            return lhs.plus(rhs)
        if isinstance(op, arith.SubiOp):
            return lhs.plus(rhs.scaled(-1))
        if not lhs.coeffs:
            return rhs.scaled(lhs.const)
        if not rhs.coeffs:
            return lhs.scaled(rhs.const)
    return None


def negative_forms(cond: SSAValue) -> list[Affine] | None:
    """Affine E_i with `cond` true exactly where every E_i < 0, or None."""
    op = cond.owner
    if isinstance(op, arith.AndIOp):
        lhs, rhs = negative_forms(op.lhs), negative_forms(op.rhs)
        return None if lhs is None or rhs is None else lhs + rhs
    if not isinstance(op, arith.CmpiOp) or not isinstance(op.lhs.type, IndexType):
        return None
    lhs, rhs = affine(op.lhs), affine(op.rhs)
    if lhs is None or rhs is None:
        return None
    pred = op.predicate.value.data
    if pred == _SLT:  # l < r  <=>  l - r < 0
        return [lhs.plus(rhs.scaled(-1))]
    if pred == _SLE:  # l <= r  <=>  l - r - 1 < 0
        return [lhs.plus(rhs.scaled(-1)).plus(Affine((), -1))]
    if pred == _SGT:  # l > r  <=>  r - l < 0
        return [rhs.plus(lhs.scaled(-1))]
    if pred == _SGE:
        return [rhs.plus(lhs.scaled(-1)).plus(Affine((), -1))]
    return None


def _enclosing_loops(op: Operation) -> list[ForOp]:
    """The loops around `op`, outermost first."""
    loops = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops[::-1]


def true_range(guard: GuardOp) -> tuple[ForOp, int, int] | None:
    """(loop, lo, hi): the guard's owning loop and the iterations [lo, hi) of it on
    which the guard holds whatever the loops inside it run; None when unknown."""
    forms = negative_forms(guard.cond)
    if not forms:
        return None
    loops = _enclosing_loops(guard)
    depth = {loop.var: i for i, loop in enumerate(loops)}
    variables = {v for form in forms for v, _ in form.coeffs}
    if not variables or not variables <= depth.keys():
        return None
    owner = loops[min(depth[v] for v in variables)]
    if owner.kind.data not in (LoopKind.SERIAL, LoopKind.PARALLEL) or owner.extent < 2:
        return None
    lo, hi = owner.lb.data, owner.ub.data
    for form in forms:
        a, rest = 0, form.const  # rest: the largest the other terms can make E
        for v, c in form.coeffs:
            if v is owner.var:
                a = c
                continue
            loop = loops[depth[v]]
            rest += max(c * loop.lb.data, c * (loop.ub.data - 1))
        # a * x + rest < 0 for the x kept
        if a > 0:
            hi = min(hi, (-rest - 1) // a + 1)
        elif a < 0:
            lo = max(lo, rest // -a + 1)
        elif rest >= 0:
            return None
    return (owner, lo, hi) if lo < hi else None


def _inline_guards(body: Block, guards: set[GuardOp]) -> None:
    """Replace each of `guards` inside `body` by its contents."""
    for op in list(body.walk()):
        if isinstance(op, GuardOp) and op in guards:
            block = op.body.block
            assert isinstance(block.last_op, YieldOp)
            Rewriter.erase_op(block.last_op)
            Rewriter.inline_block(block, InsertPoint.before(op))
            cond = op.cond.owner
            Rewriter.erase_op(op)
            _erase_unused_condition(cond)


def _erase_unused_condition(op) -> None:
    """The comparisons (and their conjunctions) of an inlined guard, if nothing else
    reads them."""
    if isinstance(op, (arith.CmpiOp, arith.AndIOp)) and not op.results[0].uses:
        operands = [v.owner for v in op.operands]
        Rewriter.erase_op(op)
        for owner in operands:
            _erase_unused_condition(owner)


def _clone_body(loop: ForOp, var: SSAValue, guards: list[GuardOp]) -> tuple[Block, set[GuardOp]]:
    """A copy of `loop`'s body ops (not the yield) with `loop.var` mapped to `var`,
    and the copies of `guards`."""
    mapping: dict[SSAValue, SSAValue] = {loop.var: var}
    copy = Block()
    by_original: dict[Operation, Operation] = {}
    for op in loop.body.block.ops:
        if isinstance(op, YieldOp):
            break
        clone = op.clone(mapping)
        by_original.update(zip(op.walk(), clone.walk(), strict=True))
        copy.add_op(clone)
    return copy, {by_original[g] for g in guards}


def _split_serial(loop: ForOp, lo: int, hi: int, guards: list[tuple[GuardOp, int, int]]) -> None:
    """`loop` becomes [lb, lo) and [hi, ub), each without the guards that hold on all
    of it, and [lo, hi) without any of `guards`."""
    pieces: list[ForOp] = []
    for start, stop in ((loop.lb.data, lo), (lo, hi), (hi, loop.ub.data)):
        if start >= stop:
            continue
        piece = ForOp(start, stop, loop.kind)
        piece.var.name_hint = loop.var.name_hint
        piece.attributes |= loop.attributes
        holding = [g for g, glo, ghi in guards if glo <= start and stop <= ghi]
        block, copies = _clone_body(loop, piece.var, holding)
        _inline_guards(block, copies)
        target = piece.body.block
        for op in list(block.ops):
            op.detach()
            target.insert_op_before(op, target.last_op)
        pieces.append(piece)
    Rewriter.insert_op(pieces, InsertPoint.before(loop))
    Rewriter.erase_op(loop)


def _version_parallel(loop: ForOp, lo: int, hi: int, guards: list[tuple[GuardOp, int, int]]) -> None:
    """`loop`'s body becomes `if lo <= x < hi { copy without guards } else { body }`."""
    body = loop.body.block
    var = loop.var
    made: list[Operation] = []
    inside: list[SSAValue] = []
    outside: list[SSAValue] = []
    for bound, keep, leave, needed in ((lo, "sge", "slt", lo > loop.lb.data), (hi, "slt", "sge", hi < loop.ub.data)):
        if needed:
            c = arith.ConstantOp(IntegerAttr(bound, IndexType()))
            yes, no = arith.CmpiOp(var, c, keep), arith.CmpiOp(var, c, leave)
            made += [c, yes, no]
            inside.append(yes.result)
            outside.append(no.result)
    if len(inside) == 2:
        both, either = arith.AndIOp(*inside), arith.OrIOp(*outside)
        made += [both, either]
        inside, outside = [both.result], [either.result]
    fast_block, copies = _clone_body(loop, var, [g for g, _, _ in guards])
    _inline_guards(fast_block, copies)
    fast_block.add_op(YieldOp())
    slow_block = Block()
    for op in list(body.ops):
        if isinstance(op, YieldOp):
            break
        op.detach()
        slow_block.add_op(op)
    slow_block.add_op(YieldOp())
    fast = GuardOp(inside[0], Region(fast_block))
    slow = GuardOp(outside[0], Region(slow_block))
    for op in [*made, fast, slow]:
        body.insert_op_before(op, body.last_op)


def partition_once(root: Operation, done: set[ForOp]) -> bool:
    """Partition the outermost loop in `root` with a range, if any; True if one was."""
    owned: dict[ForOp, list[tuple[GuardOp, int, int]]] = {}
    for op in root.walk():
        if isinstance(op, GuardOp):
            found = true_range(op)
            if found is not None and found[0] not in done:
                loop, lo, hi = found
                owned.setdefault(loop, []).append((op, lo, hi))
    for loop, guards in owned.items():
        done.add(loop)
        lb, ub = loop.lb.data, loop.ub.data
        always = {g for g, glo, ghi in guards if glo <= lb and ub <= ghi}
        _inline_guards(loop.body.block, always)
        guards = [(g, glo, ghi) for g, glo, ghi in guards if g not in always]
        if not guards:
            return True
        lo, hi = max(g[1] for g in guards), min(g[2] for g in guards)
        if lo < hi:
            if loop.kind.data == LoopKind.PARALLEL:
                _version_parallel(loop, lo, hi, guards)
            else:
                _split_serial(loop, lo, hi, guards)
        return True
    return False


@dataclass(frozen=True)
class LoopPartitionPass(ModulePass):
    """Run the iterations where a loop's guards hold on a copy without them."""

    name = "loop-partition"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        done: set[ForOp] = set()
        # One function (a kernel) at a time: each partition walks only its own.
        for top in list(op.ops):
            while partition_once(top, done):
                pass
