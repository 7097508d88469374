"""insert-dependences: the dependence flags of an accelerator program, from what each
instruction reads and writes (`backends/accel/dependences.py`, the TVM paper's RAW
and WAR tokens between the load, compute and store modules).

convert-loop-to-accel leaves a program without tokens or flags: instructions in
stream order, which on the machine would race. This pass lays the program out as
the backend will (micro-op kernels placed and loaded where they are not
resident), finds every hazard between modules on the on-chip buffers, and sets the
fewest pops and pushes that order them (`pop_prev`, `push_next`, ...). With
`serial=true` every instruction waits for the previous one of a neighbouring
module: the ablation in which loads never overlap compute.

A program that already has tokens or flags is left alone (what it says is kept).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

from tilecraft.backends.accel import isa
from tilecraft.backends.accel.dependences import DependenceError, insert_dependences
from tilecraft.backends.accel.program import program_from_ir
from tilecraft.dialects import accel
from tilecraft.utils.diagnostics import OpError

FLAGS = ("pop_prev", "pop_next", "push_prev", "push_next")


@dataclass(frozen=True)
class InsertDependencesPass(ModulePass):
    name = "insert-dependences"

    serial: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for program in [p for p in op.walk() if isinstance(p, accel.ProgramOp)]:
            ops = [i for i in program.body.block.ops if isinstance(i, accel.InstructionOp)]
            if any(i.deps or any(f in i.properties for f in FLAGS) for i in ops):
                continue
            laid_out = program_from_ir(program, require_flags=False)
            uops = {k.dram_base + n: u for k in laid_out.kernels for n, u in enumerate(k.uops)}

            def read_uops(base: int, count: int):
                return [uops[base + n] for n in range(count) if base + n in uops]

            try:
                flagged = insert_dependences(laid_out.instructions, read_uops, program.spec, serial=self.serial)
            except DependenceError as e:
                raise OpError(program, f"{self.name}: {e}") from None
            # the layout adds a LOAD of a micro-op kernel before a GEMM/ALU whose kernel
            # is not resident (compute-module loads no other module waits for: no flags)
            pos = 0
            for insn_op in ops:
                if isinstance(insn_op, (accel.GemmOp, accel.AluOp)) and insn_op.kernel is not None:
                    raw = laid_out.instructions[pos]
                    if isinstance(raw, isa.Load) and raw.memory_type == isa.MemoryType.UOP:
                        pos += 1
                insn = flagged[pos]
                pos += 1
                for flag in FLAGS:
                    if getattr(insn, flag):
                        insn_op.properties[flag] = UnitAttr()
