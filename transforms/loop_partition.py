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
- each conjunct belongs to the outermost loop (of more than one iteration) whose
  variable it reads; every other variable in it ranges over its loop's bounds,
  and the conjunct's *true range* is the iterations of its loop on which it
  holds for all of them;
- a loop's range is the intersection of its conjuncts' true ranges. A serial
  loop becomes up to three loops, each without the conjuncts that hold on all of
  it (a guard left with none becomes its contents); a parallel loop keeps one
  launch and branches in its body between a copy without them (inside the
  range) and the original. Loops are taken outermost first, so a guard
  `i < 13 and j < 37` of a tiled 2-D loop nest leaves whole tiles with no guard
  and each edge with the one it needs.

Loops that are vectorized or unrolled are left alone: the vectorizer masks lanes
of a guard that varies across them, unrolling makes a guard's condition constant.
Guards on anything else (a loaded value, a division) stay as they are.

A conjunct may also read sizes known only when the function runs (index values
made outside every loop: `memref.dim`, arithmetic on it): `io * 8 + ii < %n`
holds for every `ii` below `floordiv(%n - 8, 8) + 1`. Such a loop (serial or
parallel, to a static or run-time bound) keeps one loop whose body branches
once per iteration between a copy without those conjuncts and the original, the
bound computed before it: whole tiles run unguarded (vectorized without masks),
the last partial one guarded. With `residues=true`, unrolled loops (a register
tile's rows) that one size expression bounds get residue dispatch in that partial
tile (Nimble's): a copy per residue r in 1..E-1 (E the unrolled extent, at most
MAX_RESIDUE_EXTENT) in which they run r iterations without the guard, chosen by
r when it runs, so a 6-row GEMM tile over 7 rows runs a 1-row tile, not six
guarded rows; the guarded body stays for any other r. Measured (2 cores, AVX2):
BERT's FFN dense at 1, 5, 7 and 13 rows 1.1-1.3x faster, BERT-base's layer
compiled in 9.4 s instead of 3.5 s: off by default.

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
from xdsl.dialects.builtin import IndexType, IntAttr, IntegerAttr, ModuleOp
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


def _is_size(value: SSAValue) -> bool:
    """An index value known when the function runs, made outside every loop (a
    size read with `memref.dim`, arithmetic on sizes): a symbol of guards."""
    if not isinstance(value.type, IndexType) or _loop_of(value) is not None:
        return False
    op = value.owner if isinstance(value.owner, Operation) else value.owner.parent_op()  # type: ignore[union-attr]
    while op is not None:
        if isinstance(op, ForOp):
            return False
        op = op.parent_op()
    return True


def affine(value: SSAValue) -> Affine | None:
    """`value` as an affine expression of loop variables and sizes, or None."""
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
    if _is_size(value):
        return Affine(((value, 1),), 0)
    return None


def conjuncts(cond: SSAValue) -> list[SSAValue]:
    """The leaves of `cond`'s tree of `arith.andi`."""
    op = cond.owner
    if isinstance(op, arith.AndIOp):
        return conjuncts(op.lhs) + conjuncts(op.rhs)
    return [cond]


def negative_form(cond: SSAValue) -> Affine | None:
    """Affine E with `cond` (a signed index comparison) true exactly where E < 0."""
    op = cond.owner
    if not isinstance(op, arith.CmpiOp) or not isinstance(op.lhs.type, IndexType):
        return None
    lhs, rhs = affine(op.lhs), affine(op.rhs)
    if lhs is None or rhs is None:
        return None
    pred = op.predicate.value.data
    if pred == _SLT:  # l < r  <=>  l - r < 0
        return lhs.plus(rhs.scaled(-1))
    if pred == _SLE:  # l <= r  <=>  l - r - 1 < 0
        return lhs.plus(rhs.scaled(-1)).plus(Affine((), -1))
    if pred == _SGT:  # l > r  <=>  r - l < 0
        return rhs.plus(lhs.scaled(-1))
    if pred == _SGE:
        return rhs.plus(lhs.scaled(-1)).plus(Affine((), -1))
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


@dataclass(frozen=True)
class Fact:
    """A conjunct of a guard's condition that holds on iterations [lo, hi) of its
    loop, whatever the loops inside run. With sizes in it (`sizes`: an affine
    form of them, known when it runs), it holds below `floordiv(sizes, a) + 1`
    instead of `hi` (`a` > 0; `hi` is then the loop's end)."""

    guard: GuardOp
    leaf: SSAValue
    lo: int
    hi: int
    sizes: Affine | None = None
    a: int = 1


def facts(guard: GuardOp) -> list[tuple[ForOp, Fact]]:
    """Each conjunct of the guard that bounds a loop: (the loop, its fact). The
    loop of a conjunct is the outermost one whose variable it reads."""
    loops = _enclosing_loops(guard)
    depth = {loop.var: i for i, loop in enumerate(loops)}
    found = []
    for leaf in conjuncts(guard.cond):
        form = negative_form(leaf)
        if form is None:
            continue
        sizes = Affine(tuple((v, c) for v, c in form.coeffs if v not in depth), 0)
        form = Affine(tuple((v, c) for v, c in form.coeffs if v in depth), form.const)
        if not form.coeffs:
            continue
        # A loop of one iteration (a split's last piece) holds its variable fixed.
        varying = [depth[v] for v, _ in form.coeffs if not loops[depth[v]].is_static or loops[depth[v]].extent > 1]
        if not varying:
            continue
        owner = loops[min(varying)]
        if owner.kind.data not in (LoopKind.SERIAL, LoopKind.PARALLEL):
            continue
        if any(v is not owner.var and not loops[depth[v]].is_static for v, _ in form.coeffs):
            continue  # (an inner loop whose extent is known only when it runs: left alone)
        a, rest = 0, form.const  # rest: the largest the other terms can make E
        for v, c in form.coeffs:
            if v is owner.var:
                a = c
            else:
                loop = loops[depth[v]]
                rest += max(c * loop.lb.data, c * (loop.ub.data - 1))
        if sizes.coeffs:
            # a * x + rest + sizes < 0: only an upper bound, found when it runs
            if a > 0:
                found.append((owner, Fact(guard, leaf, owner.lb.data, owner.ub.data,
                                          sizes.scaled(-1).plus(Affine((), -rest - 1)), a)))  # fmt: skip
            continue
        if not owner.is_static:
            continue
        lo, hi = owner.lb.data, owner.ub.data
        if a > 0:  # a * x + rest < 0
            hi = min(hi, (-rest - 1) // a + 1)
        else:
            lo = max(lo, rest // -a + 1)
        if lo < hi:
            found.append((owner, Fact(guard, leaf, lo, hi)))
    return found


def _drop_conjuncts(guard: GuardOp, dropped: set[SSAValue]) -> None:
    """Remove conjuncts known to hold from `guard`'s condition: the guard becomes
    its contents when none is left, else it tests the rest."""
    kept = [leaf for leaf in conjuncts(guard.cond) if leaf not in dropped]
    old = guard.cond.owner
    if kept:
        cond = kept[0]
        for leaf in kept[1:]:
            both = arith.AndIOp(cond, leaf)
            Rewriter.insert_op(both, InsertPoint.before(guard))
            cond = both.result
        guard.operands = [cond]
    else:
        block = guard.body.block
        assert isinstance(block.last_op, YieldOp)
        Rewriter.erase_op(block.last_op)
        Rewriter.inline_block(block, InsertPoint.before(guard))
        Rewriter.erase_op(guard)
    _erase_unused_condition(old)


def _erase_unused_condition(op) -> None:
    """The comparisons (and their conjunctions) of a guard, once nothing reads them."""
    if isinstance(op, (arith.CmpiOp, arith.AndIOp)) and not op.results[0].uses:
        operands = [v.owner for v in op.operands]
        Rewriter.erase_op(op)
        for owner in operands:
            _erase_unused_condition(owner)


def _copy_without(loop: ForOp, var: SSAValue, holding: list[Fact]) -> Block:
    """A copy of `loop`'s body ops (not the yield) with `loop.var` mapped to `var`,
    the conjuncts of `holding` dropped from the copies of their guards."""
    mapping: dict[SSAValue, SSAValue] = {loop.var: var}
    copy = Block()
    by_original: dict[Operation, Operation] = {}
    for op in loop.body.block.ops:
        if isinstance(op, YieldOp):
            break
        clone = op.clone(mapping)
        by_original.update(zip(op.walk(), clone.walk(), strict=True))
        copy.add_op(clone)
    dropped: dict[GuardOp, set[SSAValue]] = {}
    for fact in holding:
        leaf = mapping.get(fact.leaf, fact.leaf)  # a condition made outside stays itself
        dropped.setdefault(by_original[fact.guard], set()).add(leaf)
    for guard, leaves in dropped.items():
        _drop_conjuncts(guard, leaves)
    return copy


def _split_serial(loop: ForOp, lo: int, hi: int, found: list[Fact]) -> None:
    """`loop` becomes [lb, lo), [lo, hi) and [hi, ub), each without the conjuncts
    that hold on all of it."""
    pieces: list[ForOp] = []
    for start, stop in ((loop.lb.data, lo), (lo, hi), (hi, loop.ub.data)):
        if start >= stop:
            continue
        piece = ForOp(start, stop, loop.kind)
        piece.var.name_hint = loop.var.name_hint
        piece.attributes |= loop.attributes
        block = _copy_without(loop, piece.var, [f for f in found if f.lo <= start and stop <= f.hi])
        target = piece.body.block
        for op in list(block.ops):
            op.detach()
            target.insert_op_before(op, target.last_op)
        pieces.append(piece)
    Rewriter.insert_op(pieces, InsertPoint.before(loop))
    Rewriter.erase_op(loop)


def _version_parallel(loop: ForOp, lo: int, hi: int, found: list[Fact]) -> None:
    """`loop`'s body becomes `if lo <= x < hi { copy without the conjuncts } else
    { body }`: one launch still."""
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
    _branch(loop, found, made, inside[0], outside[0])


def _branch(loop: ForOp, holding: list[Fact], made: list[Operation], inside: SSAValue, outside: SSAValue) -> Block:
    """`loop`'s body becomes `made` (the ops computing the conditions), then
    `if inside { copy without the conjuncts of holding } if outside { body }`;
    returns the block of the latter."""
    body = loop.body.block
    fast_block = _copy_without(loop, loop.var, holding)
    fast_block.add_op(YieldOp())
    slow_block = Block()
    for op in list(body.ops):
        if isinstance(op, YieldOp):
            break
        op.detach()
        slow_block.add_op(op)
    slow_block.add_op(YieldOp())
    for op in [*made, GuardOp(inside, Region(fast_block)), GuardOp(outside, Region(slow_block))]:
        body.insert_op_before(op, body.last_op)
    return slow_block


class _Ops:
    """Index ops made in order, to insert together."""

    def __init__(self) -> None:
        self.made: list[Operation] = []

    def emit(self, op: Operation) -> SSAValue:
        self.made.append(op)
        return op.results[0]

    def index(self, k: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(k, IndexType())))


def _version_by_sizes(loop: ForOp, found: list[Fact], residues: bool = False) -> None:
    """A loop whose guards hold below a bound known when it runs (a split of a
    size known then: the last tile is partial): its body becomes `if x < hi {
    copy without those conjuncts } else { body }`, with `hi` the smallest of the
    bounds, computed once before the loop. (One loop still, serial or parallel:
    a branch per iteration of the outer loop, none in the inner ones.)"""
    ops = _Ops()
    made, emit, index = ops.made, ops.emit, ops.index
    hi: SSAValue | None = None
    holding = []
    for f in found:
        if f.sizes is None:
            if f.lo > loop.lb.data:
                continue  # (a lower bound of its own: the slow copy keeps it)
            bound = index(f.hi)
        else:
            total = index(f.sizes.const)
            for v, c in f.sizes.coeffs:
                term = v if c == 1 else emit(arith.MuliOp(v, index(c)))
                total = emit(arith.AddiOp(total, term))
            quotient = emit(arith.FloorDivSIOp(total, index(f.a))) if f.a != 1 else total
            bound = emit(arith.AddiOp(quotient, index(1)))
        hi = bound if hi is None else emit(arith.MinSIOp(hi, bound))
        holding.append(f)
    assert hi is not None
    Rewriter.insert_op(made, InsertPoint.before(loop))
    inside = arith.CmpiOp(loop.var, hi, "slt")
    outside = arith.CmpiOp(loop.var, hi, "sge")
    tail = _branch(loop, holding, [inside, outside], inside.result, outside.result)
    if residues:
        _dispatch_residues(loop, tail)


# Unrolled loops (register tiles) of at most this many iterations that a size
# bounds get, in the last partial tile, one copy per residue (Nimble's residue
# dispatch): the rows of a 6-row tile that remain, without a guard each.
MAX_RESIDUE_EXTENT = 8


def _residue_bound(leaf: SSAValue, outer: ForOp) -> tuple[ForOp, Affine] | None:
    """For a conjunct `v + g < 0` whose `v` is the variable of an unrolled or serial
    loop from 0 (of at most MAX_RESIDUE_EXTENT iterations) and `g` reads `outer`'s variable,
    sizes and constants only: (v's loop, g). It holds for the first `-g` values of v."""
    form = negative_form(leaf)
    if form is None:
        return None
    inner = [(v, c) for v, c in form.coeffs if _loop_of(v) is not None and v is not outer.var]
    if len(inner) != 1 or inner[0][1] != 1:
        return None
    loop = _loop_of(inner[0][0])
    assert loop is not None
    if (loop.kind.data not in (LoopKind.UNROLLED, LoopKind.SERIAL) or not loop.is_static or loop.lb.data != 0
            or not 1 < loop.extent <= MAX_RESIDUE_EXTENT):  # fmt: skip
        return None
    return loop, Affine(tuple((v, c) for v, c in form.coeffs if v is not inner[0][0]), form.const)


def _dispatch_residues(outer: ForOp, tail: Block) -> None:
    """In `tail` (the guarded body of `outer`'s last partial tile), where unrolled
    loops of one extent E are bounded by one size expression (`v < -g`): a copy per
    residue r = -g in 1..E-1 with those loops running r iterations and no guard on
    them, chosen by r when it runs; the guarded body stays for any other r."""
    groups: dict[tuple, list[tuple[GuardOp, SSAValue, ForOp]]] = {}
    forms: dict[tuple, Affine] = {}
    for op in tail.walk():
        if isinstance(op, GuardOp):
            for leaf in conjuncts(op.cond):
                found = _residue_bound(leaf, outer)
                if found is not None:
                    loop, g = found
                    key = (frozenset(g.coeffs), g.const, loop.extent)
                    forms.setdefault(key, g)  # (its terms in the order the IR gives them)
                    groups.setdefault(key, []).append((op, leaf, loop))
    # (a group of serial loops alone keeps its guards: one test per row, not per step)
    groups = {k: m for k, m in groups.items() if any(loop.kind.data == LoopKind.UNROLLED for _, _, loop in m)}
    if not groups:
        return
    key, members = max(groups.items(), key=lambda item: len(item[1]))
    _, const, extent = key
    coeffs = forms[key].coeffs  # (not the frozenset's: its order follows object ids)
    ops = _Ops()
    made, emit, index = ops.made, ops.emit, ops.index
    residue = index(-const)  # r = -g
    for v, c in coeffs:
        term = v if c == -1 else emit(arith.MuliOp(v, index(-c)))
        residue = emit(arith.AddiOp(residue, term))
    original = [op for op in tail.ops if not isinstance(op, YieldOp)]
    for r in range(1, extent):
        is_r = emit(arith.CmpiOp(residue, index(r), "eq"))
        copy, by_original = _clone_ops(original)
        dropped: dict[GuardOp, set[SSAValue]] = {}
        for guard, leaf, loop in members:
            clone = by_original[loop]
            assert isinstance(clone, ForOp)
            clone.ub = IntAttr(r)
            dropped.setdefault(by_original[guard], set()).add(_mapped(leaf, by_original))  # type: ignore[arg-type]
        for guard, leaves in dropped.items():
            _drop_conjuncts(guard, leaves)  # type: ignore[arg-type]
        copy.add_op(YieldOp())
        made.append(GuardOp(is_r, Region(copy)))
    low = emit(arith.CmpiOp(residue, index(1), "slt"))
    high = emit(arith.CmpiOp(residue, index(extent), "sge"))
    rest = Block()
    for op in original:
        op.detach()
        rest.add_op(op)
    rest.add_op(YieldOp())
    made.append(GuardOp(emit(arith.OrIOp(low, high)), Region(rest)))
    for op in made:
        tail.insert_op_before(op, tail.last_op)


def _clone_ops(ops: list[Operation]) -> tuple[Block, dict[Operation, Operation]]:
    mapping: dict[SSAValue, SSAValue] = {}
    copy = Block()
    by_original: dict[Operation, Operation] = {}
    for op in ops:
        clone = op.clone(mapping)
        by_original.update(zip(op.walk(), clone.walk(), strict=True))
        copy.add_op(clone)
    return copy, by_original


def _mapped(value: SSAValue, by_original: dict[Operation, Operation]) -> SSAValue:
    """`value`'s copy among the cloned ops (itself when made outside them)."""
    owner = value.owner
    if isinstance(owner, Operation) and owner in by_original:
        return by_original[owner].results[value.index]  # type: ignore[union-attr]
    return value


def partition_once(root: Operation, done: set[ForOp], residues: bool = False) -> bool:
    """Partition the outermost loop in `root` that guards bound, if any; True if
    one was."""
    owned: dict[ForOp, list[Fact]] = {}
    for op in root.walk():
        if isinstance(op, GuardOp):
            for loop, fact in facts(op):
                if loop not in done:
                    owned.setdefault(loop, []).append(fact)
    for loop, found in owned.items():
        done.add(loop)
        if any(f.sizes is not None for f in found):
            _version_by_sizes(loop, found, residues)
            return True
        lo, hi = max(f.lo for f in found), min(f.hi for f in found)
        if (lo, hi) == (loop.lb.data, loop.ub.data):
            always: dict[GuardOp, set[SSAValue]] = {}
            for f in found:
                always.setdefault(f.guard, set()).add(f.leaf)
            for guard, leaves in always.items():
                _drop_conjuncts(guard, leaves)
        elif lo >= hi:
            continue
        elif loop.kind.data == LoopKind.PARALLEL:
            _version_parallel(loop, lo, hi, found)
        else:
            _split_serial(loop, lo, hi, found)
        return True
    return False


@dataclass(frozen=True)
class LoopPartitionPass(ModulePass):
    """Run the iterations where a loop's guards hold on a copy without them."""

    name = "loop-partition"

    residues: bool = False
    """Residue dispatch in the last partial tile of a symbolic axis (module
    docstring). Off by default: on BERT's layer it bought 1.1-1.3x on the dense
    layers at row counts that 6 does not divide and tripled the compile."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        done: set[ForOp] = set()
        # One function (a kernel) at a time: each partition walks only its own.
        for top in list(op.ops):
            while partition_once(top, done, self.residues):
                pass
