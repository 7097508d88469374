"""convert-loop-to-accel's recognition of statements: the elementwise chain of a
store (`_chain`: a load of an accumulator buffer, then integer steps with an
immediate or another buffer's element), and where a nest's statements start and
what they may share (`_distributable`, `_nest_top`).
"""

from __future__ import annotations

from dataclasses import dataclass
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue
from tilecraft.dialects import te
from tilecraft.dialects.loop import (
    ForOp,
    TensorIntrinOp,
)


def _distributable(leaves: list[Operation]) -> bool:
    """Whether each statement of a loop body can run over the whole nest in turn: no
    statement touches a buffer another one writes (the threads' copies of one
    statement after inject-virtual-threads, each with its own buffers)."""
    writes, touches = [], []
    for leaf in leaves:
        if isinstance(leaf, TensorIntrinOp):
            regions = [b for b, _ in leaf.operand_regions()]
            writes.append({regions[-1]})
            touches.append(set(regions))
        else:
            loads = {op.memref for op in _loads(leaf.value)}
            writes.append({leaf.memref})
            touches.append(loads | {leaf.memref})
    return all(not (writes[a] & touches[b]) for a in range(len(leaves)) for b in range(len(leaves)) if a != b)


def _loads(value: SSAValue) -> list[memref.LoadOp]:
    found, stack, seen = [], [value], set()
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, Operation) or op in seen:
            continue
        seen.add(op)
        if isinstance(op, memref.LoadOp):
            found.append(op)
        elif _is_scalar_math(op):
            stack.extend(op.operands)
    return found


def _ancestors(op: Operation) -> list[Operation]:
    chain = [op]
    while chain[-1].parent_op() is not None:
        chain.append(chain[-1].parent_op())
    return chain


def _order(a: Operation, b: Operation) -> int:
    """-1 if a runs before b, 1 if after, 0 if one contains the other (or they are
    the same op), in program order."""
    chain_b = _ancestors(b)
    for x in _ancestors(a):
        block = x.parent_block()
        for y in chain_b:
            if y is x:
                return 0
            if block is not None and y.parent_block() is block:
                return -1 if block.get_operation_index(x) < block.get_operation_index(y) else 1
    return 0


def _nest_top(store: Operation) -> Operation:
    """The outermost loop of the perfect nest around `store` (or the store itself)."""
    top = store
    while isinstance(top.parent_op(), ForOp):
        top = top.parent_op()
    return top


def _only_before(buffer: SSAValue, store: Operation) -> bool:
    """Whether every use of `buffer` runs before the nest of `store` or inside it."""
    top = _nest_top(store)
    return all(_order(use.operation, top) <= 0 for use in buffer.uses)


def _only_after(buffer: SSAValue, store: Operation) -> bool:
    """Whether every use of `buffer` (but its allocation) runs inside the nest of
    `store` or after it."""
    top = _nest_top(store)
    return all(_order(use.operation, top) >= 0 for use in buffer.uses)


def _compare(predicate: int, a: int, b: int) -> bool:
    # arith.cmpi predicates: eq ne slt sle sgt sge ult ule ugt uge
    return [a == b, a != b, a < b, a <= b, a > b, a >= b, a < b, a <= b, a > b, a >= b][predicate]


def _is_scalar_math(op: Operation) -> bool:
    return op.dialect_name() == "arith" or isinstance(op, te.FloorModOp)


def _is_zero(value: SSAValue) -> bool:
    op = value.owner
    return isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and op.value.value.data == 0


@dataclass
class _Step:
    opcode: str
    imm: int | None
    operand: memref.LoadOp | None
    op: Operation


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _chain(value: SSAValue) -> tuple[memref.LoadOp, list[_Step]] | None:
    """`value` as ops applied in turn to one accumulator load, each with a constant
    or another load as its other operand."""
    steps: list[_Step] = []
    while True:
        op = value.owner
        if isinstance(op, memref.LoadOp):
            return op, steps[::-1]
        if isinstance(op, (arith.TruncIOp, arith.ExtSIOp)):
            value = op.input
            continue
        if not isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.MaxSIOp, arith.MinSIOp,
                               arith.FloorDivSIOp, arith.ShRSIOp)):
            return None
        lhs, rhs = op.lhs, op.rhs
        c_rhs, c_lhs = _constant(rhs), _constant(lhs)
        commutes = isinstance(op, (arith.AddiOp, arith.MuliOp, arith.MaxSIOp, arith.MinSIOp))
        if c_rhs is None and c_lhs is not None and commutes:
            lhs, rhs, c_rhs = rhs, lhs, c_lhs
        if c_rhs is not None:
            step = _immediate(op, c_rhs)
            if step is None:
                return None
            steps.append(step)
            value = lhs
            continue
        # two tensors: the chain continues through the one that is not a plain load of
        # another buffer (or, both loads, through the left one)
        left_load, right_load = isinstance(lhs.owner, memref.LoadOp), isinstance(rhs.owner, memref.LoadOp)
        if isinstance(op, (arith.SubiOp, arith.FloorDivSIOp, arith.ShRSIOp)):
            return None
        if right_load:
            chain_value, other = lhs, rhs.owner
        elif left_load and commutes:
            chain_value, other = rhs, lhs.owner
        else:
            return None
        steps.append(_Step(_TENSOR_OPCODE[type(op)], None, other, op))
        value = chain_value


_TENSOR_OPCODE = {arith.AddiOp: "add", arith.MuliOp: "mul", arith.MaxSIOp: "max", arith.MinSIOp: "min"}


def _immediate(op: Operation, c: int) -> _Step | None:
    if isinstance(op, arith.AddiOp):
        return _Step("add", c, None, op)
    if isinstance(op, arith.SubiOp):
        return _Step("add", -c, None, op)
    if isinstance(op, arith.MuliOp):
        return _Step("mul", c, None, op)
    if isinstance(op, arith.MaxSIOp):
        return _Step("max", c, None, op)
    if isinstance(op, arith.MinSIOp):
        return _Step("min", c, None, op)
    if isinstance(op, arith.ShRSIOp) and c >= 0:
        return _Step("shr", c, None, op)
    if isinstance(op, arith.FloorDivSIOp) and c > 0 and c & (c - 1) == 0:
        return _Step("shr", c.bit_length() - 1, None, op)
    return None
