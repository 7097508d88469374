"""loop-vectorize's writer: the vector form of one vectorized loop, op by op
(`VectorWriter`); memory accesses are `memory.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from tilecraft.dialects import llvmx
from tilecraft.dialects.loop import (
    AssertOp,
    ForOp,
    GuardOp,
    LoopKind,
)
from tilecraft.utils.attrs import integer_attr, integer_type, vector_type
from tilecraft.utils.diagnostics import OpError
from xdsl.dialects import arith, llvm, memref, scf, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException
from tilecraft.analysis.vectorize_legality import DIVISIONS, MAX_VECTOR_BYTES, PASS, max_lanes
from tilecraft.transforms.loop_vectorize.values import Affine, Lowered, Vec, constant_of, is_uniform
from tilecraft.transforms.loop_vectorize.memory import MemoryAccess


class VectorWriter(MemoryAccess):
    """Writes the vector form of one vectorized loop before it."""

    def __init__(self, loop: ForOp, max_bytes: int = MAX_VECTOR_BYTES):
        self.loop = loop
        self.max_bytes = max_bytes
        self.values: dict[SSAValue, Lowered] = {}
        self.width: int | None = None
        self.mask: SSAValue | None = None
        block = loop.parent_block()
        assert block is not None
        self.block: Block = block
        self.before: Operation | None = loop
        # Constants go before the first op written, so they dominate all of it.
        self.first: Operation = loop
        # The op being written: what its vector form is located at.
        self.source: Operation = loop
        self._constants: dict[tuple, SSAValue] = {}

    # Emission -----------------------------------------------------------------

    def add(self, op: Operation) -> SSAValue:
        op.location = self.source.location
        if self.before is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.before)
        if self.first is self.loop and self.before is self.loop:
            self.first = op
        return op.results[0] if op.results else None  # type: ignore[return-value]

    @contextmanager
    def into(self, block: Block, before: Operation | None = None) -> Iterator[None]:
        saved = self.block, self.before
        self.block, self.before = block, before
        yield
        self.block, self.before = saved

    def const(self, value: int | float | tuple, t: Attribute) -> SSAValue:
        """A constant (a list of lanes for a vector type), made once, before the loop."""
        key = (value, t)
        if key not in self._constants:
            if isinstance(t, VectorType):
                lanes = list(value) if isinstance(value, tuple) else [value] * t.get_shape()[0]
                attr: Attribute = DenseIntOrFPElementsAttr.from_list(t, lanes)
            elif isinstance(t, IndexType | IntegerType):
                attr = IntegerAttr(int(value), t)  # type: ignore[arg-type]
            else:
                attr = FloatAttr(float(value), t)  # type: ignore[arg-type]
            op = arith.ConstantOp(attr, t)
            self.first.parent_block().insert_op_before(op, self.first)  # type: ignore[union-attr]
            self._constants[key] = op.result
        return self._constants[key]

    def index(self, value: int) -> SSAValue:
        return self.const(value, IndexType())

    def vtype(self, t: Attribute) -> VectorType:
        """`t` per lane (index lanes are i64)."""
        assert self.width is not None
        return vector_type(i64 if isinstance(t, IndexType) else t, self.width)

    def splat(self, x: SSAValue) -> SSAValue:
        """A uniform scalar in every lane."""
        if isinstance(x.type, IndexType):
            x = self.add(arith.IndexCastOp(x, i64))
        return self.add(vector.BroadcastOp(x, self.vtype(x.type)))

    # Values -------------------------------------------------------------------

    def get(self, value: SSAValue) -> Lowered:
        return self.values.get(value, value)

    def vector(self, x: Lowered) -> SSAValue:
        """`x` as a vector of the current width."""
        assert self.width is not None
        if isinstance(x, Vec):
            return x.value
        if isinstance(x, Affine):
            lanes = tuple(x.stride * lane for lane in range(self.width))
            itype = self.vtype(IndexType())
            base = constant_of(x.base)
            if base is not None:
                return self.const(tuple(int(base) + o for o in lanes), itype)
            return self.add(arith.AddiOp(self.splat(x.base), self.const(lanes, itype)))
        constant = constant_of(x)
        if constant is not None:
            return self.const(constant, self.vtype(x.type))
        return self.splat(x)

    def affine(self, op: Operation, x: Lowered, y: Lowered) -> Affine | None:
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
        if isinstance(op, arith.AddiOp):
            if constant_of(px[0]) == 0:
                return Affine(py[0], px[1] + py[1])
            if constant_of(py[0]) == 0:
                return Affine(px[0], px[1] + py[1])
            return Affine(self.add(arith.AddiOp(px[0], py[0])), px[1] + py[1])
        if isinstance(op, arith.SubiOp):
            if constant_of(py[0]) == 0:
                return Affine(px[0], px[1] - py[1])
            return Affine(self.add(arith.SubiOp(px[0], py[0])), px[1] - py[1])
        if isinstance(op, arith.MuliOp):
            # A product stays affine only when the other factor is a constant.
            for (base, stride), (other, other_stride) in ((px, py), (py, px)):
                factor = constant_of(other)
                if other_stride == 0 and factor is not None:
                    return Affine(self.add(arith.MuliOp(base, other)), stride * int(factor))
        return None

    # Ops ----------------------------------------------------------------------

    def run_block(self, block: Block) -> list[Lowered]:
        """Write `block`'s ops; return what its terminator yields."""
        for op in block.ops:
            if op.has_trait(IsTerminator):
                return [self.get(v) for v in op.operands]
            self.write(op)
        return []

    def write(self, op: Operation) -> None:
        self.source = op
        if isinstance(op, ForOp):
            self.write_for(op)
        elif isinstance(op, GuardOp):
            self.write_guard(op)
        elif isinstance(op, scf.IfOp):
            self.write_if(op)
        elif isinstance(op, memref.LoadOp):
            self.write_load(op)
        elif isinstance(op, memref.StoreOp):
            self.write_store(op)
        elif isinstance(op, AssertOp):
            self.write_assert(op)
        else:
            self.write_compute(op)

    def write_assert(self, op: AssertOp) -> None:
        """A check that varies across lanes holds if no active lane fails it: the
        failing lanes' bits, as one integer, must be 0 (one scalar check)."""
        cond = self.get(op.cond)
        if is_uniform(cond) and self.mask is None:
            self.add(AssertOp(cond, op.message))  # type: ignore[arg-type]
            return
        assert self.width is not None
        ok = self.vector(cond)
        failed = self.add(arith.XOrIOp(ok, self.const(1, self.vtype(i1))))
        if self.mask is not None:
            failed = self.add(arith.AndIOp(failed, self.mask))
        self.add(AssertOp(self._any_lane(failed, "eq"), op.message))

    def _any_lane(self, lanes: SSAValue, predicate: str = "ne") -> SSAValue:
        """Whether any lane of the i1 vector `lanes` is set ("ne"), or none is ("eq"):
        its bits, as one integer, compared with 0."""
        assert self.width is not None
        bits_type = integer_type(self.width)
        bits = self.add(llvm.BitcastOp(lanes, bits_type))
        return self.add(arith.CmpiOp(bits, self.const(0, bits_type), predicate))

    def write_compute(self, op: Operation) -> None:
        args = [self.get(v) for v in op.operands]
        if all(is_uniform(a) for a in args):
            mapping = {v: a for v, a in zip(op.operands, args)}
            copy = op.clone(value_mapper=mapping)  # type: ignore[arg-type]
            self.add(copy)
            self.values.update(zip(op.results, copy.results))
            return
        if isinstance(op.results[0].type, IndexType) and len(args) == 2:
            affine = self.affine(op, args[0], args[1])
            if affine is not None:
                self.values[op.results[0]] = affine
                return
        operands = [self.vector(a) for a in args]
        if isinstance(op, DIVISIONS) and self.mask is not None:
            one = self.const(1, operands[1].type)
            operands[1] = self.add(llvmx.SelectOp(self.mask, operands[1], one))
        result_type = self.vtype(op.results[0].type)
        self.values[op.results[0]] = Vec(self.lane_op(op, operands, result_type))

    def lane_op(self, op: Operation, operands: list[SSAValue], result: VectorType) -> SSAValue:
        """`op` on vectors: the arith/math op itself, or the LLVM dialect's vector
        form where xDSL's op takes scalars only."""
        if isinstance(op, arith.CmpiOp):
            # arith and llvm number the integer predicates the same way.
            predicate = list(llvm.ICmpPredicateFlag)[op.predicate.value.data]
            flag = integer_attr(predicate.to_int(), i64)
            return self.add(llvm.ICmpOp(operands[0], operands[1], flag))
        if isinstance(op, arith.CmpfOp):
            predicate = llvmx.FCMP_PREDICATES[op.predicate.value.data]
            return self.add(llvmx.FCmpOp(predicate, operands[0], operands[1]))
        if isinstance(op, arith.SelectOp):
            return self.add(llvmx.SelectOp(*operands))
        if isinstance(op, arith.IndexCastOp | arith.ExtSIOp | arith.ExtUIOp | arith.TruncIOp):
            source = operands[0].type.element_type  # type: ignore[attr-defined]
            target = result.element_type
            assert isinstance(source, IntegerType) and isinstance(target, IntegerType)
            if source.width.data == target.width.data:
                return operands[0]
            if source.width.data > target.width.data:
                return self.add(llvm.TruncOp(operands[0], result))
            if isinstance(op, arith.ExtUIOp):
                return self.add(llvm.ZExtOp(operands[0], result))
            return self.add(llvm.SExtOp(operands[0], result))
        casts = {
            arith.SIToFPOp: llvm.SIToFPOp,
            arith.UIToFPOp: llvmx.UIToFPOp,
            arith.FPToSIOp: llvmx.FPToSIOp,
            arith.FPToUIOp: llvmx.FPToUIOp,
        }
        if type(op) in casts:
            return self.add(casts[type(op)](operands[0], result))
        new = type(op).create(
            operands=operands,
            result_types=[result],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        try:
            new.verify()
        except VerifyException as error:
            raise OpError(op, f"{PASS}: '{op.name}' has no vector form ({error}).") from None
        return self.add(new)

    # Memory -------------------------------------------------------------------

    def write_for(self, op: ForOp) -> None:
        """A loop inside the vectorized one runs serially (an unrolled one stays
        unrolled: LLVM, or `loop-unroll`, unrolls it after this pass)."""
        kind = LoopKind.UNROLLED if op.kind.data == LoopKind.UNROLLED else LoopKind.SERIAL
        new = ForOp(op.lb.data, op.ub.data, kind, var_name=op.var.name_hint)
        self.add(new)
        self.values[op.var] = new.var
        with self.into(new.body.block, new.body.block.last_op):
            self.run_block(op.body.block)

    def _masked(self, cond: SSAValue, body: Callable[[], list[Lowered]]) -> list[Lowered]:
        """Run `body` with only the lanes where `cond` holds active."""
        outer = self.mask
        self.mask = cond if outer is None else self.add(arith.AndIOp(outer, cond))
        results = body()
        self.mask = outer
        return results

    def write_guard(self, op: GuardOp) -> None:
        cond = self.get(op.cond)
        if is_uniform(cond):
            new = GuardOp(cond)  # type: ignore[arg-type]
            self.add(new)
            with self.into(new.body.block, new.body.block.last_op):
                self.run_block(op.body.block)
            return
        self._masked(self.vector(cond), lambda: self.run_block(op.body.block))

    def write_if(self, op: scf.IfOp) -> None:
        cond = self.get(op.cond)
        has_else = bool(op.false_region.blocks)
        if not is_uniform(cond):
            mask = self.vector(cond)
            taken = self._masked(mask, lambda: self.run_block(op.true_region.block))
            others: list[Lowered] = []
            if has_else:
                not_taken = self.add(arith.XOrIOp(mask, self.const(1, mask.type)))
                others = self._masked(not_taken, lambda: self.run_block(op.false_region.block))
            for result, t, e in zip(op.results, taken, others):
                selected = self.add(llvmx.SelectOp(mask, self.vector(t), self.vector(e)))
                self.values[result] = Vec(selected)
            return
        blocks = [Block(), Block()]
        yielded: list[list[Lowered]] = [[], []]
        for k, region in enumerate((op.true_region, op.false_region)):
            if region.blocks:
                with self.into(blocks[k]):
                    yielded[k] = self.run_block(region.block)
        # A result is a vector if either side yields one.
        vector_results = [
            not (is_uniform(t) and is_uniform(e)) for t, e in zip(yielded[0], yielded[1])
        ]
        for k in range(2 if has_else else 1):
            with self.into(blocks[k]):
                values = [
                    self.vector(v) if vec else v for v, vec in zip(yielded[k], vector_results)
                ]
                self.add(scf.YieldOp(*values))  # type: ignore[arg-type]
        result_types = [
            self.vtype(r.type) if vec else r.type for r, vec in zip(op.results, vector_results)
        ]
        regions = [Region(blocks[0]), Region(blocks[1]) if has_else else Region()]
        new = scf.IfOp(cond, result_types, regions[0], regions[1])  # type: ignore[arg-type]
        self.add(new)
        for result, value, vec in zip(op.results, new.results, vector_results):
            self.values[result] = Vec(value) if vec else value

    # The loop -----------------------------------------------------------------

    def write_loop(self) -> None:
        """The loop as a serial loop over full vectors, then its tail as one vector
        of the next power of two lanes, the lanes past the end masked off (44
        lanes: a 64-lane vector, 44 active). Vectors of other widths are legal
        LLVM, but its code generator can take minutes on a 44-lane masked gather."""
        loop = self.loop
        width = max_lanes(loop, self.max_bytes)
        lb, extent = loop.lb.data, loop.extent
        full = extent // width if extent > width else 0
        if full:
            strip = ForOp(0, full, LoopKind.SERIAL, var_name=f"{loop.var.name_hint or 'v'}_vec")
            self.add(strip)
            with self.into(strip.body.block, strip.body.block.last_op):
                start = self.add(arith.MuliOp(strip.var, self.index(width)))
                if lb:
                    start = self.add(arith.AddiOp(start, self.index(lb)))
                self.write_lanes(width, start)
            lb += full * width
        if (tail := extent - full * width) > 0:
            self.write_lanes(1 << (tail - 1).bit_length(), self.index(lb), active=tail)

    def write_lanes(self, width: int, base: SSAValue, active: int | None = None) -> None:
        """The loop body on `width` lanes from `base`; only the first `active`
        are live when given (a constant mask, as a guard that varies would make)."""
        self.width = width
        self.values = {self.loop.var: Affine(base, 1)}
        if active is not None and active < width:
            self.mask = self.const(tuple(int(lane < active) for lane in range(width)), self.vtype(i1))
        self.run_block(self.loop.body.block)
        self.width = None
        self.mask = None
