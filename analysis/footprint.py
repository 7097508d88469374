"""Which bytes the loads and stores of a loop nest touch, and how many of them a
cache of some size misses: the memory half of the cost model
(analysis/cost_model.py), kept apart for the passes that weigh loop orders and
partitions.

A *footprint* is what accesses touch while some loops run (the others stay put),
after the TVM features' touched memory (autotune/features.py): per buffer, the box
its indices span, per dimension the span each distinct part from the fixed loops
adds (`A[i + r]` and `A[i + r + 4]` in one box, `A[i]` and `A[j]` in two), the
innermost dimension rounded up to whole cache lines. An index `index_expr`
cannot follow (a select, a loaded value) moves with the loops it is computed
from, over the whole dimension at most.

*Misses* follow from footprints and reuse: one iteration of a loop touches its
inner loops' whole runs, so the loops one iteration of which fits a cache are
the innermost ones; over them an access brings in once what it touches (what an
iteration brought is still there for the next: `B[j]` read in every iteration
of `i` comes in once while a row of the nest fits), and each iteration of the
loops outside brings that again. Set-associativity, prefetching and write-backs
are left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tilecraft.analysis.bounds import index_expr
from tilecraft.analysis.expr import Expr, bounds
from tilecraft.dialects.loop import ForOp

# An index `index_expr` cannot follow (a select, a loaded value): the loops it
# depends on, so that it moves with them (over the whole dimension at most).
Index = Expr | frozenset[ForOp]


@dataclass
class Access:
    """A load or store, with the loops around it and its index per dimension."""

    op: memref.LoadOp | memref.StoreOp
    buffer: SSAValue
    loops: list[ForOp]  # enclosing, outermost first
    indices: list[Index]  # per dimension, in the loops' variables
    shape: list[int]
    element: int  # bytes

    def __post_init__(self):
        # Per dimension, each term's atom, coefficient and the loops it reads (a
        # div or mod reads those of its expression), and whether every atom is a
        # loop: `footprint` asks these of each access many times.
        self.terms = [
            [(atom, c, frozenset((atom,)) if isinstance(atom, ForOp) else frozenset(atom.expr.atoms()))
             for atom, c in e.terms.items()] if isinstance(e, Expr) else []
            for e in self.indices
        ]  # fmt: skip
        self.affine = [isinstance(e, Expr) and all(isinstance(t, ForOp) for t in e.terms) for e in self.indices]


def value_bytes(t: Attribute) -> int:
    """Bytes of a value of type `t` (an index: 8, what LLVM makes of it)."""
    return max(1, (getattr(t, "bitwidth", 64) + 7) // 8)


def flat_stride(access: Access, loop: ForOp) -> int | None:
    """How many elements the access's address moves when `loop`'s variable grows by
    one (None: it cannot be followed)."""
    stride = 0
    for k, e in enumerate(access.indices):
        if not isinstance(e, Expr):
            if loop in e:
                return None
            continue
        if any(loop in atom.expr.atoms() for atom in e.terms if not isinstance(atom, ForOp)):
            return None  # a div or mod of the loop's variable
        stride += e.terms.get(loop, 0) * math.prod(access.shape[k + 1 :])
    return stride


def footprint(accesses: Iterable[Access], running: set[ForOp], line: int) -> int:
    """The bytes `accesses` touch while the loops `running` go through their ranges
    (the others stay put): per buffer, the box its indices span (per dimension, the
    span each distinct part from the other loops adds), the innermost dimension
    rounded up to whole cache lines."""
    spans: dict[SSAValue, list[dict[object, tuple[int, int]]]] = {}
    shapes: dict[SSAValue, tuple[list[int], int]] = {}

    def atom_range(atom) -> tuple[int, int]:
        return (0, atom.extent - 1) if atom in running else (0, 0)

    for a in accesses:
        dims = spans.setdefault(a.buffer, [{} for _ in a.shape])
        shapes[a.buffer] = (a.shape, a.element)
        for k, e in enumerate(a.indices):
            if not isinstance(e, Expr):
                moving = [loop for loop in e if loop in running]
                key = (a.op.indices[k], frozenset(loop for loop in e if loop not in running))
                span = min(a.shape[k], math.prod(loop.extent for loop in moving))
                dims[k][key] = (0, max(span - 1, dims[k].get(key, (0, 0))[1]))
                continue
            key = frozenset((atom, c) for atom, c, reads in a.terms[k] if reads.isdisjoint(running))
            if a.affine[k]:
                lo = hi = e.const
                for atom, c, _ in a.terms[k]:
                    if atom in running:
                        lo, hi = lo + min(0, c * (atom.extent - 1)), hi + max(0, c * (atom.extent - 1))
            else:
                lo, hi = bounds(e, atom_range)
            known = dims[k].get(key)
            dims[k][key] = (lo, hi) if known is None else (min(lo, known[0]), max(hi, known[1]))
    total = 0
    for buffer, dims in spans.items():
        shape, element = shapes[buffer]
        size = 1
        for k, ranges in enumerate(dims):
            extent = min(shape[k], sum(hi - lo + 1 for lo, hi in ranges.values()))
            if k == len(dims) - 1:
                granule = max(1, min(shape[k], line // element))
                extent = -(-extent // granule) * granule
            size *= max(1, extent)
        total += size * element
    return total


class Accesses:
    """The loads and stores of a function, walked once: the loops around each, the
    loops inside each loop, and what the function's statements miss."""

    def __init__(self, function: func.FuncOp, line: int):
        self.line = line
        self.accesses: dict[Operation, Access] = {}
        self.stored = {op.memref for op in function.walk() if isinstance(op, memref.StoreOp)}
        self._depends: dict[SSAValue, frozenset[ForOp]] = {}
        self.inner: dict[ForOp, set[ForOp]] = {}  # the loops inside each loop
        self._collect(function.body.block, [], {})
        self.in_statement: dict[Operation, list[Access]] = {}  # by top-level statement
        self.inside: dict[ForOp, list[Access]] = {}
        for a in self.accesses.values():
            top = a.op
            while top.parent_op() is not function:
                top = top.parent_op()  # type: ignore[assignment]
            self.in_statement.setdefault(top, []).append(a)
            for loop in a.loops:
                self.inside.setdefault(loop, []).append(a)
        self._body_footprints: dict[ForOp, int] = {}

    def _collect(self, block: Block, loops: list[ForOp], env: dict[SSAValue, Expr | None]) -> None:
        for op in block.ops:
            if isinstance(op, ForOp):
                env[op.var] = Expr.var(op)
                self._depends[op.var] = frozenset((op,))
                self.inner[op] = set()
                for outer in loops:
                    self.inner[outer].add(op)
                self._collect(op.body.block, [*loops, op], env)
                continue
            if isinstance(op, (memref.LoadOp, memref.StoreOp)):
                t = op.memref.type
                assert isinstance(t, MemRefType)
                indices = [index_expr(i, env) or self.loops_of(i) for i in op.indices]
                self.accesses[op] = Access(
                    op, op.memref, loops, indices, list(t.get_shape()), value_bytes(t.element_type)
                )
            for region in op.regions:
                for inner in region.blocks:
                    self._collect(inner, loops, env)

    def loops_of(self, value: SSAValue) -> frozenset[ForOp]:
        """The loops whose variables `value` is computed from (a value loaded from a
        buffer the function stores to: every loop around the load)."""
        if value not in self._depends:
            owner = value.owner
            found: frozenset[ForOp] = frozenset()
            if isinstance(owner, memref.LoadOp) and owner.memref in self.stored:
                found = frozenset(self.accesses[owner].loops)
            elif isinstance(owner, Operation):
                for operand in owner.operands:
                    found |= self.loops_of(operand)
            self._depends[value] = found
        return self._depends[value]

    def whole(self) -> int:
        """The bytes the whole function touches."""
        return footprint(self.accesses.values(), set(self.inner), self.line)

    def body_footprint(self, loop: ForOp) -> int:
        """The bytes one iteration of `loop` touches."""
        if loop not in self._body_footprints:
            self._body_footprints[loop] = footprint(self.inside.get(loop, []), self.inner[loop], self.line)
        return self._body_footprints[loop]

    def misses(self, accesses: Sequence[Access], capacities: Sequence[int]) -> list[float]:
        """Bytes `accesses` (to one buffer, in the same loops) bring into caches of
        `capacities` bytes. The loops one iteration of which fits the cache are
        the innermost ones (an iteration holds every inner loop's whole run):
        over them, what the accesses touch comes in once (what an iteration
        brought is still there for the next); each iteration of the loops outside
        brings its own."""
        loops = accesses[0].loops
        spans: dict[int, int] = {}
        found = []
        for capacity in capacities:
            depth = len(loops)
            while depth > 0 and self.body_footprint(loops[depth - 1]) <= capacity:
                depth -= 1
            if depth not in spans:
                spans[depth] = footprint(accesses, set(loops[depth:]), self.line)
            found.append(spans[depth] * math.prod(loop.extent for loop in loops[:depth]))
        return found

    def statement_misses(self, op: Operation, capacities: Sequence[int]) -> list[float]:
        """Bytes the statement `op` brings into caches of `capacities` bytes."""
        groups: dict[tuple, list[Access]] = {}
        for access in self.in_statement.get(op, []):
            groups.setdefault((access.buffer, *access.loops), []).append(access)
        total = [0.0] * len(capacities)
        for group in groups.values():
            for k, missed in enumerate(self.misses(group, capacities)):
                total[k] += missed
        return total
