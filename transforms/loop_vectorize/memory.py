"""loop-vectorize's memory accesses: a load or store whose index is uniform, contiguous
(an `Affine` index of stride 1 in the last dimension), strided, or a gather or
scatter of per-lane offsets, each under the loop's mask where lanes are inactive.
"""

from __future__ import annotations

from tilecraft.dialects.loop import (
    GatherOp,
    ScatterOp,
)
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    IndexType,
    MemRefType,
    i1,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from tilecraft.transforms.loop_vectorize.values import Affine, Lowered, Vec, constant_of, is_uniform, row_major_strides


class MemoryAccess:
    """`VectorWriter`'s loads and stores (a mixin: it uses the writer's values,
    mask and builders)."""

    def _access(self, mtype: MemRefType, indices: list[Lowered]):
        """(per-dimension uniform indices, lane stride, varying parts) of an access."""
        uniform: list[SSAValue] = []
        lane_stride = 0
        varying: list[tuple[SSAValue, int]] = []
        for index, stride in zip(indices, row_major_strides(mtype.get_shape())):
            if isinstance(index, Affine):
                uniform.append(index.base)
                lane_stride += index.stride * stride
            elif isinstance(index, Vec):
                uniform.append(self.index(0))
                varying.append((index.value, stride))
            else:
                uniform.append(index)
        return uniform, lane_stride, varying

    def _strides(self, ref: SSAValue, mtype: MemRefType) -> list[int | SSAValue]:
        """Row-major element strides, computed from `memref.dim` where a size after
        the dimension is known only when it runs."""
        shape = mtype.get_shape()
        if all(d >= 0 for d in shape[1:]):
            return list(row_major_strides(shape))
        strides: list[int | SSAValue] = []
        step: int | SSAValue = 1
        for d in reversed(range(1, len(shape))):
            strides.append(step)
            size = self.add(memref.DimOp(ref, self.index(d))) if shape[d] < 0 else shape[d]
            if isinstance(step, int) and isinstance(size, int):
                step = step * size
            elif step == 1:
                step = size
            else:
                lhs = self.index(step) if isinstance(step, int) else step
                rhs = self.index(size) if isinstance(size, int) else size
                step = self.add(arith.MuliOp(lhs, rhs))
        return [step, *strides[::-1]]

    def _offsets(self, ref: SSAValue, mtype: MemRefType, uniform, lane_stride, varying) -> SSAValue:
        """Per-lane element offsets from the buffer's start, for gather/scatter
        (`lane_stride` and the `varying` parts' strides are static: see
        analysis/vectorize_legality.py)."""
        flat: SSAValue | None = None
        for index, stride in zip(uniform, self._strides(ref, mtype)):
            if constant_of(index) == 0:
                continue
            if isinstance(stride, int):
                term = self.add(arith.MuliOp(index, self.index(stride))) if stride != 1 else index
            else:
                term = self.add(arith.MuliOp(index, stride))
            flat = term if flat is None else self.add(arith.AddiOp(flat, term))
        total = self.vector(Affine(flat if flat is not None else self.index(0), lane_stride))
        itype = self.vtype(IndexType())
        for value, stride in varying:
            if stride != 1:
                value = self.add(arith.MuliOp(value, self.const(stride, itype)))
            total = self.add(arith.AddiOp(total, value))
        return total

    def _all_lanes(self) -> SSAValue:
        return self.mask if self.mask is not None else self.const(1, self.vtype(i1))

    def write_load(self, op: memref.LoadOp) -> None:
        mtype = op.memref.type
        assert isinstance(mtype, MemRefType)
        ref = op.memref
        uniform, lane_stride, varying = self._access(mtype, [self.get(i) for i in op.indices])
        element = mtype.element_type
        if not varying and lane_stride == 0 and self.mask is None:
            self.values[op.res] = self.add(memref.LoadOp.get(ref, uniform))
            return
        if not varying and lane_stride == 0:
            self.values[op.res] = self._load_if_any_lane(ref, uniform, element)
            return
        result = self.vtype(element)
        if not varying and lane_stride == 1 and self.mask is None:
            value = self.add(vector.LoadOp(ref, uniform, result))
        elif not varying and lane_stride == 1:
            zero = self.const(0, result)
            assert self.mask is not None
            value = self.add(vector.MaskedLoadOp(ref, uniform, self.mask, zero))
        else:
            offsets = self._offsets(ref, mtype, uniform, lane_stride, varying)
            value = self.add(GatherOp(ref, offsets, self._all_lanes(), result))
        self.values[op.res] = Vec(value)

    def _load_if_any_lane(self, ref: SSAValue, indices: list[SSAValue], element: Attribute) -> SSAValue:
        """A uniform address under a mask: one scalar load if any lane is active (the
        serial loop loads it then; the guard may be what keeps the address in bounds),
        a uniform value, not a gather of the same element into every lane."""
        assert self.mask is not None
        active = self._any_lane(self.mask)
        taken, skipped = Block(), Block()
        with self.into(taken):
            loaded = self.add(memref.LoadOp.get(ref, indices))
            self.add(scf.YieldOp(loaded))
        with self.into(skipped):
            self.add(scf.YieldOp(self.const(0, element)))
        new = scf.IfOp(active, [element], Region(taken), Region(skipped))
        self.add(new)
        return new.results[0]

    def write_store(self, op: memref.StoreOp) -> None:
        mtype = op.memref.type
        assert isinstance(mtype, MemRefType)
        ref = op.memref
        uniform, lane_stride, varying = self._access(mtype, [self.get(i) for i in op.indices])
        value = self.get(op.value)
        if not varying and lane_stride == 0 and self.mask is None and is_uniform(value):
            self.add(memref.StoreOp.get(value, ref, uniform))  # type: ignore[arg-type]
            return
        lanes = self.vector(value)
        if not varying and lane_stride == 1 and self.mask is None:
            self.add(vector.StoreOp(lanes, ref, uniform))
        elif not varying and lane_stride == 1:
            self.add(vector.MaskedStoreOp(ref, uniform, self.mask, lanes))  # type: ignore[arg-type]
        else:
            offsets = self._offsets(ref, mtype, uniform, lane_stride, varying)
            self.add(ScatterOp(lanes, ref, offsets, self._all_lanes()))

    # Control flow -------------------------------------------------------------

