"""Running a schedule on the accelerator: `tc.build(s, args, target="accel")`.

The schedule is lowered to loop IR as for the CPU, then taken down the pipeline
`loop-to-accel` (`pipelines/loop_to_accel.py`), which `tilecraft-opt` runs by name
as well:

    inject-dma, inject-virtual-threads, convert-loop-to-accel, insert-dependences

and laid out (`backends/accel/program.py`: micro-op kernels placed in DRAM after
the arguments). Calling the result writes the argument arrays into a simulated
DRAM at the places the program's `accel.buffer`s name, runs the instruction stream
on the cycle-level simulator, and copies every argument a STORE writes back into
its array, as `tc.build`'s CPU functions write their outputs in place. The call
returns the simulator's result (cycles, utilization, bytes moved: `.stats`).

Arrays are in the layouts the schedule's tensors have: the accelerator's packed
layouts are the user's business here (topi/accel_conv2d.py has the packing
functions), as they are in VTA's own flow.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp

from tilecraft.analysis.accel_fit import Chain
from tilecraft.backends.accel.dram import Dram
from tilecraft.backends.accel.program import Program, find_program, format_asm, program_from_ir
from tilecraft.backends.accel.simulator import SimResult, simulate
from tilecraft.backends.accel.spec import AccelSpec, default_spec
from tilecraft.pipelines.loop_to_accel import LoopToAccelPass
from tilecraft.pipelines.run_stages import run_stages
from tilecraft.utils.dtypes import numpy_dtype

class AccelFunction:
    """A schedule compiled for the accelerator; `f(a, b, c)` runs it on the simulator,
    writing the outputs in place, and returns the `SimResult`."""

    def __init__(self, loop_module: ModuleOp, name: str, spec_path: str = "", serial: bool = False):
        function = next(f for f in loop_module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)
        self.arg_types: list[MemRefType] = list(function.function_type.inputs.data)  # type: ignore[arg-type]
        self.loop_ir = str(loop_module)
        run_stages(LoopToAccelPass(spec=spec_path, serial=serial).stages(), Context(), loop_module)
        self.module = loop_module
        self.program: Program = program_from_ir(find_program(loop_module, name))
        self.spec: AccelSpec = self.program.spec
        self.entry_name = name
        self.last: SimResult | None = None

    def get_source(self, kind: str = "accel") -> str:
        """The accel IR ("accel"), the instruction listing ("asm") or the loop IR ("loop")."""
        if kind == "asm":
            return format_asm(self.program)
        if kind == "loop":
            return self.loop_ir
        return str(self.module)

    def __call__(self, *arrays: np.ndarray) -> SimResult:
        if len(arrays) != len(self.arg_types):
            names = ", ".join(b.name for b in self.program.buffers)
            raise ValueError(
                f"{self.entry_name} takes {len(self.arg_types)} arrays, got {len(arrays)}; "
                f"its arguments are {names}"
            )
        buffers = self.program.buffers
        for n, (a, t, b) in enumerate(zip(arrays, self.arg_types, buffers)):
            shape, dtype = tuple(t.get_shape()), numpy_dtype(t.element_type)
            if not isinstance(a, np.ndarray) or a.shape != shape or a.dtype != dtype:
                got = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
                raise ValueError(f"argument {n} ({b.name}) of {self.entry_name} must be a {dtype} array of "
                                 f"shape {shape}, not {got}")
        dram = Dram(self.program.dram_bytes())
        for a, b in zip(arrays, buffers):
            dram.write(b.byte_address(self.spec), np.ascontiguousarray(a))
        for address, data in self.program.uop_segments():
            dram.write(address, data)
        result = simulate(self.program.instructions, dram, self.spec)
        written = _stored(self.program)
        for a, b in zip(arrays, buffers):
            if b.name in written:
                a[...] = dram.read(b.byte_address(self.spec), a.shape, a.dtype)
        self.last = result
        return result


def _stored(program: Program) -> set[str]:
    """The buffers some STORE writes."""
    from tilecraft.backends.accel import isa

    names = set()
    for insn in program.instructions:
        if isinstance(insn, isa.Store):
            for b in program.buffers:
                start = b.byte_address(program.spec)
                byte = insn.dram_base * b.elem_bytes(program.spec)
                if b.memory_type == insn.memory_type and start <= byte < start + b.nbytes(program.spec):
                    names.add(b.name)
    return names


def build_accel(s, args: Sequence, name: str = "main", spec_path: str = "", serial: bool = False) -> AccelFunction:
    from tilecraft.driver.te_pieces import lower_module

    return AccelFunction(lower_module(s, list(args), name), name, spec_path, serial)


def simulated_cycles(chain: Chain, spec: AccelSpec) -> int:  # (the accelerability analysis's `cycles`)
    """The timing model's cycles of `chain` built as `tc.compile(target="accel")`
    builds it untuned (`conv2d_accel` with `default_config`), run on zeros: the
    cycles do not depend on the data."""
    from tilecraft.topi import accel_conv2d as ac

    shape, kernel = chain.input_shape(), chain.weight.shape
    config = ac.default_config(shape, kernel, chain.strides, chain.pads, spec)
    s, args = ac.conv2d_accel(shape, kernel, chain.strides, chain.pads, chain.shift, relu=chain.relu, spec=spec,
                              **config)  # fmt: skip
    function = build_accel(s, args, "main", "" if spec == default_spec() else spec.source)
    arrays = [np.zeros([int(d) for d in a.shape], a.dtype) for a in args]
    return function(*arrays).cycles
