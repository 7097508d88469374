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
from tilecraft.backends.accel.dependences import DependenceError, footprints, insert_dependences
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
            if not self.serial:
                _order_loads(program, ops)
                ops = [i for i in program.body.block.ops if isinstance(i, accel.InstructionOp)]
            laid_out, insns = _laid_out(program, ops)
            try:
                flagged = insert_dependences(laid_out.instructions, _uop_reader(laid_out), program.spec,
                                             serial=self.serial)
            except DependenceError as e:
                raise OpError(program, f"{self.name}: {e}") from None
            for insn_op, index in zip(ops, insns):
                for flag in FLAGS:
                    if getattr(flagged[index], flag):
                        insn_op.properties[flag] = UnitAttr()


def _uop_reader(laid_out):
    uops = {k.dram_base + n: u for k in laid_out.kernels for n, u in enumerate(k.uops)}

    def read_uops(base: int, count: int):
        return [uops[base + n] for n in range(count) if base + n in uops]

    return read_uops


def _laid_out(program, ops):
    """The program as the backend lays it out, and the stream index of each op (the
    layout adds a LOAD of a micro-op kernel before a GEMM/ALU whose kernel is not
    resident: compute-module loads no other module waits for, which carry no flags)."""
    laid_out = program_from_ir(program, require_flags=False)
    indices, pos = [], 0
    for insn_op in ops:
        if isinstance(insn_op, (accel.GemmOp, accel.AluOp)) and insn_op.kernel is not None:
            raw = laid_out.instructions[pos]
            if isinstance(raw, isa.Load) and raw.memory_type == isa.MemoryType.UOP:
                pos += 1
        indices.append(pos)
        pos += 1
    return laid_out, indices


def _order_loads(program, ops) -> None:
    """Issue each run of consecutive input/weight loads in the order the compute module
    first reads what they load. The load module runs its queue in order, so a load that
    waits (for the buffer it refills to be released) holds back the loads behind it; a
    load another thread's compute needs sooner goes first. Only loads of one run, which
    write disjoint ranges and have no compute or store between them, trade places, so
    every dependence between modules is the same afterwards."""
    laid_out, indices = _laid_out(program, ops)
    prints = footprints(laid_out.instructions, _uop_reader(laid_out), program.spec)
    n = len(ops)
    k = 0
    while k < n:
        if not _is_load_module(ops[k]):
            k += 1
            continue
        end = k
        while end < n and _is_load_module(ops[end]):
            end += 1
        run = list(range(k, end))
        writes = [prints[indices[m]].writes for m in run]
        disjoint = all(not any(a.overlaps(b) for a in writes[x] for b in writes[y])
                       for x in range(len(run)) for y in range(x + 1, len(run)))
        if len(run) > 1 and disjoint:
            def first_reader(m: int) -> int:
                for later in range(end, n):
                    reads = prints[indices[later]].reads
                    if any(w.overlaps(r) for w in prints[indices[m]].writes for r in reads):
                        return later
                return n

            order = sorted(run, key=lambda m: (first_reader(m), m))
            if order != run:
                anchor = ops[end] if end < n else None
                moved = [ops[m] for m in order]
                for o in moved:
                    o.detach()
                block = program.body.block
                for o in moved:
                    if anchor is not None:
                        block.insert_op_before(o, anchor)
                    else:
                        block.add_op(o)
        k = end


def _is_load_module(insn_op) -> bool:
    return isinstance(insn_op, accel.LoadOp) and insn_op.mem in (accel.MemoryType.INP, accel.MemoryType.WGT)
