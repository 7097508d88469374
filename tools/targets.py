"""tilecraft's output targets: what `tilecraft-opt -t NAME` writes after the passes
(xDSL `Target`s), and the conversions `tilecraft-translate` shares with them.

    tilecraft-opt kernel.mlir -t llvm                  # LLVM IR after LLVM's O3
    tilecraft-opt kernel.mlir -t 'llvm{optimize=false}'
    tilecraft-opt model.mlir -p compile-model -t asm   # host assembly
    tilecraft-opt prog.mlir -t accel-asm               # an accelerator program's listing

`mlir` (the IR itself, the default) is xDSL's printer. `llvm` and `asm` take
te-level IR (lowered to loops first, as `tilecraft.lower`), loop-level IR or IR in
the llvm dialect and generate code for the host CPU (`tilecraft.backends.llvm`);
`accel-asm` takes accel IR (one `accel.program`). Binary outputs (objects, shared
libraries, accel-bin files) are tilecraft-translate's `--emit`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from tilecraft.tools.errors import UserError


def to_loop_level(module: ModuleOp, tool: str) -> ModuleOp:
    """`module` as the LLVM backend takes it: te functions lowered to loops (in
    place); graph-level IR, a model, is an error on its first graph op."""
    from xdsl.dialects import func

    from tilecraft.driver.context import has_te, lower_to_loops
    from tilecraft.utils.diagnostics import OpError
    from tilecraft.utils.levels import function_level

    for f in module.ops:
        level, op = function_level(f) if isinstance(f, func.FuncOp) else ("llvm", f)
        if level == "graph" and op is not f:
            raise OpError(
                op,
                f"{tool}: the input is graph-level IR ('{op.name}'), a model; it takes "
                "te, loop or llvm IR: lower the model with tilecraft-opt -p compile-model first",
            )
    return lower_to_loops(module) if has_te(module) else module


def accel_program(module: ModuleOp, what: str):
    """The accelerator program of accel IR (tokens lowered to flags first); `what`
    names the output in the error for IR without one."""
    from tilecraft.backends.accel.program import ProgramNotFoundError, find_program, program_from_ir
    from tilecraft.dialects.accel import InstructionOp
    from tilecraft.transforms.lower_accel_tokens import LowerAccelTokensPass
    from tilecraft.utils.diagnostics import verify_module

    try:
        program_op = find_program(module)
    except ProgramNotFoundError as e:
        raise UserError(f"{what} takes accel IR: {e}") from None
    if any(isinstance(op, InstructionOp) and op.deps for op in program_op.body.block.ops):
        LowerAccelTokensPass().apply(Context(), module)
        verify_module(module)
    return program_from_ir(program_op)


@dataclass(frozen=True)
class LlvmTarget(Target):
    """LLVM IR for the host CPU, after LLVM's O3 unless `optimize=false`."""

    name = "llvm"
    optimize: bool = True

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tilecraft.driver.emit import emit_llvm_ir

        output.write(emit_llvm_ir(to_loop_level(module, "-t llvm"), optimize=self.optimize))


@dataclass(frozen=True)
class AsmTarget(Target):
    """Assembly for the host CPU."""

    name = "asm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tilecraft.driver.emit import emit_assembly

        output.write(emit_assembly(to_loop_level(module, "-t asm")))


@dataclass(frozen=True)
class AccelAsmTarget(Target):
    """An accelerator program's listing (as objdump prints one)."""

    name = "accel-asm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tilecraft.backends.accel.program import format_asm

        output.write(format_asm(accel_program(module, "-t accel-asm")))


def _mlir() -> type[Target]:
    from xdsl.targets.mlir import MLIRTarget

    return MLIRTarget


# What each target writes, for --help.
TARGET_SUMMARIES = {
    "mlir": "the IR (default)",
    "llvm": "LLVM IR for the host CPU ({optimize=false}: before LLVM's O3)",
    "asm": "assembly for the host CPU",
    "accel-asm": "an accelerator program's listing",
}


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """tilecraft's targets by name, as xDSL's universe lists targets."""
    return {
        "mlir": _mlir,
        "llvm": lambda: LlvmTarget,
        "asm": lambda: AsmTarget,
        "accel-asm": lambda: AccelAsmTarget,
    }
