"""loop-vectorize's analysis: which vectorized loops can be written as vector code
(`vectorization_blocker`: their lanes are independent, their ops have vector
forms), how many lanes they may have, and the error for one that cannot.
"""

from __future__ import annotations

from tilecraft.dialects.loop import (
    AllocOp,
    ForOp,
    GuardOp,
    LaunchOp,
    LoopKind,
)
from tilecraft.utils.diagnostics import OpError
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Block, Operation, SSAValue


PASS = "loop-vectorize"
# Vectors wider than this many bytes are strip mined (4 x 512-bit registers).
MAX_VECTOR_BYTES = 256
MAX_LANES = 64
# Integer divisions: inactive lanes divide by one under a mask.
DIVISIONS = (arith.DivSIOp, arith.DivUIOp, arith.RemSIOp, arith.RemUIOp, arith.FloorDivSIOp,
             arith.CeilDivSIOp)  # fmt: skip


# Analyses ---------------------------------------------------------------------


def max_lanes(loop: ForOp, max_bytes: int = MAX_VECTOR_BYTES) -> int:
    """The widest vector to use for `loop`, from the widest element it touches:
    at most `max_bytes` (a GPU thread's widest load is 16 bytes)."""
    widest = 1
    for op in loop.walk():
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            mtype = op.memref.type
            assert isinstance(mtype, MemRefType)
            bits = getattr(mtype.element_type, "bitwidth", 8)
            widest = max(widest, (bits + 7) // 8)
    return max(1, min(MAX_LANES, max_bytes // widest))


def vectorization_blocker(loop: ForOp) -> tuple[Operation, str] | None:
    """Why `loop`'s lanes cannot run side by side (the op and a reason), or None."""
    varying: set[SSAValue] = {loop.var}

    def visit(block: Block, masked: bool) -> tuple[Operation, str] | None:
        for op in block.ops:
            found = None
            if isinstance(op, AllocOp):
                return op, "allocates a buffer inside the loop"
            if isinstance(op, memref.LoadOp | memref.StoreOp) and _varies_in_dynamic_stride(op, varying):
                return op, "its lanes step through a dimension whose stride is known only when it runs"
            if isinstance(op, ForOp):
                found = visit(op.body.block, masked)
            elif isinstance(op, GuardOp):
                found = visit(op.body.block, masked or op.cond in varying)
            elif isinstance(op, scf.IfOp):
                cond_varies = op.cond in varying
                results_vary = cond_varies
                for region in op.regions:
                    if region.blocks:
                        found = found or visit(region.block, masked or cond_varies)
                        yielded = region.block.last_op
                        assert yielded is not None
                        results_vary |= any(v in varying for v in yielded.operands)
                if results_vary:
                    varying.update(op.results)
            elif isinstance(op, memref.StoreOp):
                address_varies = any(i in varying for i in op.indices)
                if not address_varies and (masked or op.value in varying):
                    return op, "stores to the same address from every iteration"
            elif any(o in varying for o in op.operands):
                varying.update(op.results)
            if found:
                return found
        return None

    return visit(loop.body.block, False)


def _varies_in_dynamic_stride(op: memref.LoadOp | memref.StoreOp, varying: set[SSAValue]) -> bool:
    """Whether a lane-varying index is in a dimension followed by a '?' size: the
    lanes' distance would be known only when it runs (the vector loads, stores,
    gathers and scatters take static lane strides)."""
    mtype = op.memref.type
    if not isinstance(mtype, MemRefType):
        return False
    shape = mtype.get_shape()
    return any(i in varying and any(n < 0 for n in shape[d + 1 :]) for d, i in enumerate(op.indices))


def check_vectorizable(module: ModuleOp) -> None:
    """A call or a launch cannot run once per lane: refuse it at the op."""
    for op in module.walk():
        if isinstance(op, ForOp) and op.kind.data == LoopKind.VECTORIZED:
            for inner in op.walk():
                if isinstance(inner, func.CallOp | LaunchOp):
                    raise OpError(
                        inner,
                        f"{PASS}: '{inner.name}' cannot be vectorized; make the loop "
                        "around it serial.",
                    )
