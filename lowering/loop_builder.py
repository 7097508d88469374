"""Small helpers to build loop-level IR: an insertion cursor and index arithmetic.

A `Cursor` appends ops to one block (before its terminator). Cursors nest as the
loops they fill do, each knowing the loop variable its block binds; `emit_index`
uses this to place every index computation in the outermost block where its
operands exist and to reuse one already built there, so the loop IR shows each
`io * 32` once, at the loop that defines `io`, instead of once per use.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from tilecraft.analysis.expr import Div, Expr, Mod, nonnegative


class Cursor:
    def __init__(
        self,
        block: Block,
        parent: Cursor | None = None,
        owner: Operation | None = None,
        binds: Hashable | None = None,
    ):
        self.block = block
        self.parent = parent
        self.owner = owner  # the op in parent.block whose region holds `block`
        self.binds = binds  # the loop variable this block binds, if any
        self.cache: dict[Expr, SSAValue] = {}

    def child(self, op: Operation, binds: Hashable | None = None) -> Cursor:
        """A cursor into the (single-block) body of `op`, which this cursor inserted."""
        return Cursor(op.regions[0].block, self, op, binds)

    def insert(self, op: Operation) -> Operation:
        last = self.block.last_op
        if last is not None and last.has_trait(IsTerminator):
            self.block.insert_op_before(op, last)
        else:
            self.block.add_op(op)
        return op

    def value(self, op: Operation) -> SSAValue:
        self.insert(op)
        return op.results[0]

    def index_const(self, v: int) -> SSAValue:
        return emit_index(Expr(const=v), {}, self)


class _Hoisted(Cursor):
    """`target`'s block and scope, inserting just before `anchor` (the op of that
    block that holds the cursor we came from), so the value dominates its uses."""

    def __init__(self, target: Cursor, anchor: Operation):
        super().__init__(target.block, target.parent, target.owner, target.binds)
        self.cache = target.cache
        self.anchor = anchor

    def insert(self, op: Operation) -> Operation:
        self.block.insert_op_before(op, self.anchor)
        return op


def _home(expr: Expr, cur: Cursor) -> Cursor:
    """A cursor into the outermost block where every operand of `expr` is defined."""
    atoms = expr.atoms()
    path = [cur]
    while path[-1].parent is not None and path[-1].binds not in atoms:
        path.append(path[-1].parent)
    if len(path) == 1:
        return cur
    return _Hoisted(path[-1], path[-2].owner)


def _depth(atom: Hashable, cur: Cursor) -> int:
    """How many scopes out from `cur` the innermost operand of `atom` is bound (0: here)."""
    atoms = atom.expr.atoms() if isinstance(atom, (Div, Mod)) else {atom}
    depth, c = 0, cur
    while c is not None and c.binds not in atoms:
        depth, c = depth + 1, c.parent
    return depth


def emit_floor_mod(
    cur: Cursor, a: SSAValue, b: SSAValue, divisor_positive: bool = False
) -> SSAValue:
    """`arith` ops computing the floor modulo of `a` by `b` (`te.floormod`): the
    truncated remainder, plus `b` where it is nonzero and its sign differs from `b`'s.
    Modulo zero gives 0, because `arith.remsi` by zero does in tilecraft's IR."""
    rem = cur.value(arith.RemSIOp(a, b))
    if isinstance(a.type, IndexType):
        zero = cur.index_const(0)
    else:
        zero = cur.value(arith.ConstantOp(IntegerAttr(0, a.type)))
    if divisor_positive:
        adjust = cur.value(arith.CmpiOp(rem, zero, "slt"))
    else:
        nonzero = cur.value(arith.CmpiOp(rem, zero, "ne"))
        signs = cur.value(arith.XOrIOp(rem, b))
        differ = cur.value(arith.CmpiOp(signs, zero, "slt"))
        adjust = cur.value(arith.AndIOp(nonzero, differ))
    return cur.value(arith.SelectOp(adjust, cur.value(arith.AddiOp(rem, b)), rem))


def emit_index(expr: Expr, env: Mapping[Hashable, SSAValue], cur: Cursor) -> SSAValue:
    """`arith` ops computing `expr` (every leaf atom bound in `env`), hoisted and reused.

    A sum is built as (everything but its innermost term) + innermost term, so each
    partial sum lands at the outermost loop where it can be computed."""
    at = _home(expr, cur)
    if expr in at.cache:
        return at.cache[expr]
    terms = list(expr.terms.items())
    if expr.is_const:
        result = at.value(arith.ConstantOp(IntegerAttr(expr.const, IndexType())))
    elif len(terms) == 1 and expr.const == 0:
        (atom, coeff), = terms
        if isinstance(atom, (Div, Mod)):
            inner = emit_index(atom.expr, env, at)
            divisor = emit_index(Expr(const=atom.divisor), env, at)
            if isinstance(atom, Div):
                term = at.value(arith.FloorDivSIOp(inner, divisor))
            elif nonnegative(atom.expr):
                term = at.value(arith.RemSIOp(inner, divisor))
            else:
                term = emit_floor_mod(at, inner, divisor, divisor_positive=True)
        else:
            term = env[atom]
        if coeff != 1:
            term = at.value(arith.MuliOp(term, emit_index(Expr(const=coeff), env, at)))
        result = term
    else:
        atom, coeff = min(terms, key=lambda t: _depth(t[0], at))
        last = Expr({atom: coeff})
        rest = expr - last
        result = at.value(arith.AddiOp(emit_index(rest, env, at), emit_index(last, env, at)))
    at.cache[expr] = result
    return result
