"""Vectorizing `loop.for ... vectorized` while lowering it, the way TVM does.

A vectorized loop of constant extent W is written once, with every value that
depends on the loop variable held as a `<W x T>` vector (one lane per iteration)
and every other value kept as a scalar and broadcast where it meets a vector.
Instead of first vectorizing loop IR and then lowering vector IR, the lowering
tracks, for each loop-level value, one of three forms:

- a plain `SSAValue`: *uniform*, the same in every lane (a scalar);
- `Affine(base, stride)`: an index that is `base + stride * lane` (the loop
  variable is `Affine(lb, 1)`; `addi`/`subi`/`muli` by a constant keep the form).
  This is what makes an access `A[i, uniform + j]` recognisably contiguous;
- `Vec(value)`: anything else, a real vector.

Affine values become vectors only when something needs one
(`base + <0, 1, ..., W-1> * stride`).

A loop whose extent is larger than `max_lanes` (4 zmm registers' worth) is strip
mined: a serial loop over full vectors plus one shorter vector for the tail.

Conditions that vary across lanes (`loop.guard`, `scf.if`) do not branch: they
narrow the *mask* of active lanes, memory access under a mask becomes a masked
load/store/gather/scatter (see `memory.py`), and `scf.if` results are selected.
Uniform conditions still branch.

A loop is written serially instead (still correct, and LLVM's own vectorizer may
take it) when lanes would not be independent: it allocates a buffer (one per
lane would be needed), or it stores to one address from every lane (a reduction
into a scalar, where each iteration reads the previous one's result).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.backends.llvm.builder import FunctionBuilder
from tilecraft.dialects.loop import AllocOp, ForOp, GuardOp
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, SSAValue

# Vectors wider than this many bytes are strip mined (4 x 512-bit registers).
MAX_VECTOR_BYTES = 256
MAX_LANES = 64


@dataclass(frozen=True)
class Affine:
    """An index whose value in lane `l` is `base + stride * l` (`base` is i64)."""

    base: SSAValue
    stride: int


@dataclass(frozen=True)
class Vec:
    """A value that differs between lanes, as a `<W x T>` vector."""

    value: SSAValue


Lowered = SSAValue | Affine | Vec


@dataclass
class Lanes:
    """The vector context: how many lanes, and which are active (None: all)."""

    width: int
    mask: SSAValue | None = None


def is_uniform(x: Lowered) -> bool:
    return isinstance(x, SSAValue)


def materialize(b: FunctionBuilder, x: Lowered, width: int) -> SSAValue:
    """`x` as a `width`-lane vector."""
    if isinstance(x, Vec):
        return x.value
    if isinstance(x, Affine):
        if x.base in b.known:
            base = int(b.known[x.base])
            return b.const_vector(
                [base + x.stride * lane for lane in range(width)],
                b.iota(width).type,  # type: ignore[arg-type]
            )
        return b.iadd(b.splat(x.base, width), b.iota(width, x.stride))
    return b.splat(x, width)


def affine_arith(b: FunctionBuilder, kind: str, x: Lowered, y: Lowered) -> Affine | None:
    """`x + y`, `x - y` or `x * y` of index values kept affine where possible."""

    def parts(v: Lowered) -> tuple[SSAValue, int] | None:
        if isinstance(v, Affine):
            return v.base, v.stride
        if isinstance(v, SSAValue):
            return v, 0
        return None

    px, py = parts(x), parts(y)
    if px is None or py is None or (px[1] == 0 and py[1] == 0):
        return None
    if kind == "add":
        return Affine(b.iadd(px[0], py[0]), px[1] + py[1])
    if kind == "sub":
        return Affine(b.isub(px[0], py[0]), px[1] - py[1])
    # A product stays affine only when the other factor is a known constant.
    for (base, stride), (other, other_stride) in ((px, py), (py, px)):
        if other_stride == 0 and other in b.known:
            factor = int(b.known[other])
            return Affine(b.imul(base, other), stride * factor)
    return None


def max_lanes(loop: ForOp) -> int:
    """The widest vector to use for `loop`, from the widest element it touches."""
    widest = 1
    for op in loop.walk():
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            mtype = op.memref.type
            assert isinstance(mtype, MemRefType)
            bits = getattr(mtype.element_type, "bitwidth", 8)
            widest = max(widest, (bits + 7) // 8)
    return max(1, min(MAX_LANES, MAX_VECTOR_BYTES // widest))


def vectorization_blocker(loop: ForOp) -> tuple[Operation, str] | None:
    """Why `loop`'s lanes cannot run side by side (the op and a reason), or None."""
    varying: set[SSAValue] = {loop.var}

    def visit(block: Block, masked: bool) -> tuple[Operation, str] | None:
        for op in block.ops:
            found = None
            if isinstance(op, AllocOp):
                return op, "allocates a buffer inside the loop"
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
