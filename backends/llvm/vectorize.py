"""Vectorizing `loop.for ... vectorized` while lowering it, the way TVM does.

This is the one part of `convert-loop-to-llvm` that is not yet a pattern per op:
the pattern for a vectorizable `loop.for ... vectorized` hands the whole loop nest
to `lower_vectorized_loop` below, which writes it (uniform parts included) in one
sweep. (`loop-vectorize`, the pass that would write this vector code as IR before
LLVM, is not written yet.)

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tilecraft.backends.llvm.builder import FunctionBuilder, lanes_type, scalar_type
from tilecraft.dialects.loop import AllocOp, ForOp, GuardOp, LoopKind
from xdsl.dialects import arith, llvm, memref, scf
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import IsTerminator

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


Declare = Callable[[str, Sequence[Attribute], Attribute | None], None]


def lower_vectorized_loop(
    b: FunctionBuilder, loop: ForOp, fastmath: llvm.FastMathAttr, declare: Declare
) -> None:
    """Write `loop` (vectorizable: `vectorization_blocker(loop)` is None) at the
    end of `b`'s current block. Values defined outside the loop are already LLVM
    values (uniform); the builder ends in the block after the loop."""
    VectorLoopLowering(b, fastmath, declare).lower_vectorized(loop)


class VectorLoopLowering:
    """Writes a vectorized loop nest (see the module docstring)."""

    def __init__(self, b: FunctionBuilder, fastmath: llvm.FastMathAttr, declare: Declare):
        self.b = b
        self.fastmath = fastmath
        self.declare = declare
        self.values: dict[SSAValue, Lowered] = {}
        self.lanes: Lanes | None = None

    def get(self, value: SSAValue) -> Lowered:
        # A value defined outside the loop nest is already lowered (and uniform);
        # a converted memref is a cast of its pointer.
        if value in self.values:
            return self.values[value]
        owner = value.owner
        if isinstance(owner, UnrealizedConversionCastOp):
            return owner.inputs[0]
        return value

    def vector(self, value: Lowered) -> SSAValue:
        assert self.lanes is not None
        return materialize(self.b, value, self.lanes.width)

    def run_block(self, block: Block) -> list[Lowered]:
        """Lower `block`'s ops; return what its terminator yields."""
        for op in block.ops:
            if op.has_trait(IsTerminator):
                return [self.get(v) for v in op.operands]
            self.lower_op(op)
        return []

    def lower_op(self, op: Operation) -> None:
        from tilecraft.backends.llvm.memory import lower_load, lower_store

        if isinstance(op, ForOp):
            self.lower_serial(op)
        elif isinstance(op, GuardOp):
            self.lower_guard(op)
        elif isinstance(op, scf.IfOp):
            self.lower_if(op)
        elif isinstance(op, memref.LoadOp):
            indices = [self.get(i) for i in op.indices]
            ref = self.get(op.memref)
            self.values[op.res] = lower_load(self.b, op, ref, indices, self.lanes)  # type: ignore[arg-type]
        elif isinstance(op, memref.StoreOp):
            indices = [self.get(i) for i in op.indices]
            ref = self.get(op.memref)
            lower_store(self.b, op, self.get(op.value), ref, indices, self.lanes)  # type: ignore[arg-type]
        elif isinstance(op, arith.ConstantOp):
            value = op.value
            assert isinstance(value, IntegerAttr | FloatAttr)
            self.values[op.result] = self.b.const(value.value.data, scalar_type(op.result.type))
        else:
            self.lower_compute(op)

    def lower_compute(self, op: Operation) -> None:
        from tilecraft.backends.llvm.ops import HANDLERS, OpLowering

        args = [self.get(v) for v in op.operands]
        result = op.results[0]
        if self.lanes is not None and isinstance(result.type, IndexType):
            kind = {arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul"}.get(type(op))
            affine = affine_arith(self.b, kind, *args) if kind else None
            if affine is not None:
                self.values[result] = affine
                return
        vector = self.lanes is not None and not all(is_uniform(a) for a in args)
        width = self.lanes.width if vector else None  # type: ignore[union-attr]
        llvm_args = [self.vector(a) for a in args] if vector else args
        mask = self.lanes.mask if vector else None  # type: ignore[union-attr]
        lowering = OpLowering(self.b, self.fastmath, mask, self.declare)
        value = HANDLERS[type(op)](lowering, op, llvm_args, lanes_type(result.type, width))  # type: ignore[arg-type]
        self.values[result] = Vec(value) if vector else value

    # Loops ------------------------------------------------------------------

    def counted_loop(
        self, lb: SSAValue, ub: SSAValue, step: int, body: Callable[[SSAValue], None]
    ) -> None:
        """`for (iv = lb; iv < ub; iv += step) body(iv)`, bottom-tested (lb < ub)."""
        b = self.b
        header = Block(arg_types=[i64])
        exit_block = Block()
        b.br(header, lb)
        b.start(header)
        body(header.args[0])
        following = b.iadd(header.args[0], b.index(step), nsw=True)
        b.cond_br(b.icmp("slt", following, ub), header, [following], exit_block)
        b.start(exit_block)

    def lower_serial(self, op: ForOp) -> None:
        """A loop inside the vectorized one runs serially (every kind)."""
        if op.extent == 0:
            return

        def body(iv: SSAValue) -> None:
            self.values[op.var] = iv
            self.run_block(op.body.block)

        self.counted_loop(self.b.index(op.lb.data), self.b.index(op.ub.data), 1, body)

    def lower_vectorized(self, op: ForOp) -> None:
        assert op.kind.data == LoopKind.VECTORIZED
        width = max_lanes(op)
        lb, extent = op.lb.data, op.extent

        def vector_body(lanes: int) -> Callable[[SSAValue], None]:
            def body(base: SSAValue) -> None:
                self.lanes = Lanes(lanes)
                self.values[op.var] = Affine(base, 1)
                self.run_block(op.body.block)
                self.lanes = None

            return body

        full = extent // width if extent > width else 0
        if full:
            end = lb + full * width
            self.counted_loop(self.b.index(lb), self.b.index(end), width, vector_body(width))
            lb = end
        if (tail := extent - full * width) > 0:
            vector_body(tail)(self.b.index(lb))

    # Conditions -------------------------------------------------------------

    def lower_guard(self, op: GuardOp) -> None:
        cond = self.get(op.cond)
        if is_uniform(cond):
            self._branch(cond, lambda: self.run_block(op.body.block), None)  # type: ignore[arg-type]
            return
        self._masked(self.vector(cond), lambda: self.run_block(op.body.block))

    def lower_if(self, op: scf.IfOp) -> None:
        cond = self.get(op.cond)
        then_region = lambda: self.run_block(op.true_region.block)  # noqa: E731
        else_region = (
            (lambda: self.run_block(op.false_region.block)) if op.false_region.blocks else None
        )
        if is_uniform(cond):
            results = self._branch(cond, then_region, else_region)  # type: ignore[arg-type]
        else:
            mask = self.vector(cond)
            taken = self._masked(mask, then_region)
            not_taken = self.b.add(llvm.XOrOp(mask, self.b.const(1, mask.type)))
            other = self._masked(not_taken, else_region) if else_region else []
            results = [
                Vec(self.b.select(mask, self.vector(t), self.vector(e)))
                for t, e in zip(taken, other)
            ]
        self.values.update(zip(op.results, results))

    def _masked(self, cond: SSAValue, body: Callable[[], list[Lowered]]) -> list[Lowered]:
        """Run `body` with only the lanes where `cond` holds active."""
        lanes = self.lanes
        assert lanes is not None
        outer = lanes.mask
        lanes.mask = cond if outer is None else self.b.add(llvm.AndOp(outer, cond))
        results = body()
        lanes.mask = outer
        return results

    def _branch(
        self,
        cond: SSAValue,
        then: Callable[[], list[Lowered]],
        other: Callable[[], list[Lowered]] | None,
    ) -> list[Lowered]:
        """if/else on a uniform condition; returns the values of the merge block."""
        b = self.b
        if cond in b.known:  # a guard folded to a constant: no branch at all
            chosen = then if b.known[cond] else other
            return chosen() if chosen else []
        then_block, else_block = Block(), Block()
        b.cond_br(cond, then_block, [], else_block)
        b.start(then_block)
        then_values, then_end = then(), b.block
        b.start(else_block)
        else_values, else_end = (other() if other else []), b.block
        # A result is a vector if either side yields one.
        vector = [not (is_uniform(t) and is_uniform(e)) for t, e in zip(then_values, else_values)]
        incoming = []
        for values, end in ((then_values, then_end), (else_values, else_end)):
            b.resume(end)
            incoming.append([self.vector(v) if vec else v for v, vec in zip(values, vector)])
        merge = Block(arg_types=[v.type for v in incoming[0]])  # type: ignore[union-attr]
        for values, end in zip(incoming, (then_end, else_end)):
            b.resume(end)
            b.br(merge, *values)  # type: ignore[arg-type]
        b.start(merge)
        return [Vec(a) if vec else a for a, vec in zip(merge.args, vector)]
