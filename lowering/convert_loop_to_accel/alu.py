"""convert-loop-to-accel's elementwise statements: a store of an elementwise chain
into an accumulator buffer as one ALU instruction per step (ADD, MAX, MIN, SHR,
MUL with an immediate or another buffer's element), in place; a chain that writes
another buffer than it reads first zeroes it and adds the source in.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Operation, SSAValue
from tilecraft.dialects.loop import (
    MemoryScope,
    buffer_scope,
)
from tilecraft.utils.diagnostics import OpError
from tilecraft.lowering.convert_loop_to_accel.affine import _Affine, _Loop, _project, _zero
from tilecraft.lowering.convert_loop_to_accel.chains import _chain, _is_zero, _only_after, _only_before

from tilecraft.lowering.convert_loop_to_accel.buffers import PASS


class AluStatements:
    """`_Lowering`'s elementwise stores (a mixin: it uses the lowering's affine
    fits, buffers and emitter)."""

    def store(self, loops: list[_Loop], lower: list[int], op: memref.StoreOp, env) -> None:
        target = op.memref
        if buffer_scope(target) != MemoryScope.ACC_BUFFER:
            raise OpError(op, f"{PASS}: the accelerator computes into acc_buffer buffers only; this store writes "
                          f"a {buffer_scope(target).value} buffer")
        scalar = self.affine(loops, lower, env, lambda e: self.flat(target, op.indices, e))
        element_loops, lanes = self.lanes(loops, scalar, op)
        dst = self.operand(target, scalar, scalar, element_loops, lanes, op)
        outer = [loops[k] for k in element_loops]
        if any(c == 0 for c, lp in zip(dst.coeffs, outer) if lp.extent > 1):
            raise OpError(op, f"{PASS}: a loop of this nest writes the same accumulator element again")
        if _is_zero(op.value):
            self.emit_alu_like(outer, [dst, _zero(len(outer)), _zero(len(outer))], gemm_reset=True)
            return
        chain = _chain(op.value)
        if chain is None:
            raise OpError(op, f"{PASS}: this elementwise computation has no ALU form (a chain of add, sub of a "
                          "constant, mul, max, min, shift or floor-division by a power of two, starting from one "
                          "accumulator element)")
        source, steps = chain
        src_fit = self.affine(loops, lower, env, lambda e: self.flat(source.memref, source.indices, e))
        src = self.operand(source.memref, src_fit, scalar, element_loops, lanes, op)
        if buffer_scope(source.memref) != MemoryScope.ACC_BUFFER:
            raise OpError(source, f"{PASS}: the ALU reads acc_buffer buffers; this load reads "
                          f"{buffer_scope(source.memref).value}")
        if (src.base, src.coeffs) != (dst.base, dst.coeffs):
            same_place = src.coeffs == dst.coeffs and (
                src.base - self.sram[source.memref] == dst.base - self.sram[target])
            if same_place and _only_before(source.memref, op) and _only_after(target, op):
                # the source dies here and the destination is born here: compute in place
                self.sram[target] = self.sram[source.memref]
                dst = src
            else:
                self.emit_alu_like(outer, [dst, _zero(len(outer)), _zero(len(outer))], gemm_reset=True)
                self.emit_alu_like(outer, [dst, src], opcode="add")
        for step in steps:
            if step.operand is None:
                self.emit_alu_like(outer, [dst, dst], opcode=step.opcode, imm=step.imm, at=step.op)
                continue
            other = step.operand
            fit = self.affine(loops, lower, env, lambda e: self.flat(other.memref, other.indices, e))
            if buffer_scope(other.memref) != MemoryScope.ACC_BUFFER:
                raise OpError(other, f"{PASS}: the ALU's tensor operand must be in acc_buffer "
                              f"(cache_read it into acc_buffer), not {buffer_scope(other.memref).value}")
            operand = self.operand(other.memref, fit, scalar, element_loops, lanes, step.op)
            self.emit_alu_like(outer, [dst, operand], opcode=step.opcode, at=step.op)

    def lanes(self, loops: list[_Loop], scalar: _Affine, op: Operation) -> tuple[list[int], list[int]]:
        """Split a scalar nest into the loops over an element's lanes and those over
        elements: the lanes must be innermost-contiguous and cover one element."""
        elem = self.element(MemoryScope.ACC_BUFFER)
        lane_loops = [k for k in range(len(loops)) if 0 < scalar.coeffs[k] < elem and loops[k].extent > 1]
        covered = 1
        for k in sorted(lane_loops, key=lambda k: scalar.coeffs[k]):
            if scalar.coeffs[k] != covered:
                raise OpError(op, f"{PASS}: the loops over an accumulator element's {elem} values must walk "
                              "them contiguously")
            covered *= loops[k].extent
        if covered != elem:
            raise OpError(op, f"{PASS}: each iteration of the element loops must cover a whole accumulator element "
                          f"({elem} values), not {covered}")
        return [k for k in range(len(loops)) if k not in lane_loops], lane_loops

    def operand(self, buffer: SSAValue, fit: _Affine, scalar: _Affine, element_loops: list[int], lanes: list[int],
                op: Operation) -> _Affine:
        """An access's element index over the element loops; its lane loops must walk
        an element's values as the result's do (the ALU works on whole elements)."""
        if any(fit.coeffs[k] != scalar.coeffs[k] for k in lanes):
            raise OpError(op, f"{PASS}: {buffer.name_hint or 'an operand'} walks an element's values unlike the "
                          "result it computes (the ALU works on whole elements)")
        index = self._element_index(buffer, _project(fit, element_loops, len(fit.coeffs)), buffer_scope(buffer), op)
        return _Affine(index.base, [index.coeffs[k] for k in element_loops])

