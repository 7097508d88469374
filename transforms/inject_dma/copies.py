"""inject-dma's analysis of copies: a store of a load between a global buffer and an
accelerator buffer (`match_copy`), and the loop nest that does nothing else (`copy_nest`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from tilecraft.backends.accel.spec import AccelSpec
from tilecraft.dialects.loop import (
    ACCEL_SCOPES,
    ForOp,
    GuardOp,
    MemoryScope,
    YieldOp,
    buffer_scope,
)
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue


def element_scalars(spec: AccelSpec, scope: MemoryScope) -> int:
    """Scalars in one element of an accelerator buffer (one DMA unit)."""
    if scope == MemoryScope.WGT_BUFFER:
        return spec.block * spec.block
    return spec.batch * spec.block


# -- recognizing a copy -------------------------------------------------------------


@dataclass
class Copy:
    """One element copy: `store(cast(load))`, possibly selected by `conditions`."""

    store: memref.StoreOp
    load: memref.LoadOp
    sram: SSAValue  # the accelerator buffer
    is_load: bool  # global -> accelerator buffer
    conditions: list[SSAValue] = field(default_factory=list)
    value_ops: list[Operation] = field(default_factory=list)  # load, scf.if, cast


def _is_zero(value: SSAValue) -> bool:
    op = value.owner
    return isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and op.value.value.data == 0


def _selected_load(value: SSAValue) -> tuple[memref.LoadOp, SSAValue | None, list[Operation]] | None:
    """`load`, `scf.if %c { load } else { 0 }` or `arith.select %c, load, 0`."""
    op = value.owner
    if isinstance(op, memref.LoadOp):
        return op, None, [op]
    if isinstance(op, arith.SelectOp) and isinstance(op.lhs.owner, memref.LoadOp) and _is_zero(op.rhs):
        return op.lhs.owner, op.cond, [op.lhs.owner, op]
    if isinstance(op, scf.IfOp) and len(op.results) == 1 and len(op.false_region.blocks) == 1:
        then_ops = list(op.true_region.block.ops)
        else_ops = list(op.false_region.block.ops)
        if (
            len(then_ops) == 2
            and isinstance(then_ops[0], memref.LoadOp)
            and tuple(then_ops[1].operands) == (then_ops[0].res,)
            and isinstance(else_ops[-1], scf.YieldOp)
            and _is_zero(else_ops[-1].operands[0])
        ):
            return then_ops[0], op.cond, [op]
    return None


def match_copy(store: memref.StoreOp) -> Copy | None:
    """The copy `store` performs between a global and an accelerator buffer, if it is one."""
    dst_scope = buffer_scope(store.memref)
    value, cast = store.value, None
    if isinstance(value.owner, arith.TruncIOp):
        cast = value.owner
        value = cast.input
    found = _selected_load(value)
    if found is None:
        return None
    load, cond, value_ops = found
    src_scope = buffer_scope(load.memref)
    if src_scope == MemoryScope.GLOBAL and dst_scope in ACCEL_SCOPES and cast is None:
        copy = Copy(store, load, store.memref, True)
    elif src_scope == MemoryScope.ACC_BUFFER and dst_scope == MemoryScope.GLOBAL and cond is None:
        copy = Copy(store, load, load.memref, False)
    else:
        return None
    if cond is not None:
        copy.conditions.append(cond)
    copy.value_ops = value_ops + ([cast] if cast is not None else [])
    return copy


def _only_index_math(block: Block, keep: set[Operation]) -> bool:
    return all(
        op in keep or isinstance(op, YieldOp) or (op.dialect_name() == "arith" and not op.regions)
        for op in block.ops
    )


def copy_nest(copy: Copy) -> tuple[list[ForOp], list[SSAValue]] | None:
    """The loops of the nest around `copy` (outer first) and the guard conditions,
    up to the block of the accelerator buffer's allocation or the first loop whose
    body does anything else. None if `copy.store` is not inside a loop."""
    keep: set[Operation] = {copy.store, *copy.value_ops}
    if not _only_index_math(copy.store.parent_block(), keep):
        return None
    alloc_block = copy.sram.owner.parent_block() if isinstance(copy.sram.owner, Operation) else None
    loops: list[ForOp] = []
    guards: list[SSAValue] = []
    op: Operation = copy.store
    while True:
        parent = op.parent_op()
        if not isinstance(parent, ForOp | GuardOp):
            break
        if parent.body.block is alloc_block:
            break
        if op is not copy.store and not _only_index_math(parent.body.block, {op}):
            break
        if isinstance(parent, ForOp):
            loops.append(parent)
        else:
            guards.append(parent.cond)
        op = parent
        if op.parent_block() is alloc_block:
            break
    if not loops or isinstance(op, GuardOp):
        return None
    return loops[::-1], guards
