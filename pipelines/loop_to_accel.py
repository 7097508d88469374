"""`loop-to-accel`: loop IR of a schedule down to an accelerator program, the
pipeline `tc.build(..., target="accel")` runs (`runtime/accel.py`):

1. `inject-dma`: each copy nest between a global and an accelerator buffer
   becomes one `loop.dma`;
2. `inject-virtual-threads`: loops bound to virtual threads interleave, so one
   thread's loads overlap another's compute;
3. `convert-loop-to-accel`: every loop function becomes an `accel.program` of
   LOAD/GEMM/ALU/STORE instructions;
4. `insert-dependences`: the instructions get the dependence tokens between
   the accelerator's load, compute and store queues.

Options: `spec`, the accelerator spec file (JSON or TOML; VTA's default when
empty), for the passes that need it; `serial=true` orders every instruction
after the one before (no latency hiding), as `insert-dependences{serial=true}`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilecraft.pipelines.run_stages import run_stages

LOOP_TO_ACCEL = ("inject-dma", "inject-virtual-threads", "convert-loop-to-accel", "insert-dependences")


@dataclass(frozen=True)
class LoopToAccelPass(ModulePass):
    """Run `inject-dma`, `inject-virtual-threads`, `convert-loop-to-accel` and
    `insert-dependences`, in that order."""

    name = "loop-to-accel"

    spec: str = ""
    """The accelerator spec file (.json or .toml); VTA's default when empty."""

    serial: bool = False
    """Passed to `insert-dependences`."""

    def stages(self) -> tuple[ModulePass, ...]:
        """Its passes (tilecraft-opt runs and prints them one by one)."""
        from tilecraft.lowering.convert_loop_to_accel import ConvertLoopToAccelPass
        from tilecraft.transforms.inject_dma import InjectDmaPass
        from tilecraft.transforms.inject_virtual_threads import InjectVirtualThreadsPass
        from tilecraft.transforms.insert_dependences import InsertDependencesPass

        passes = (
            InjectDmaPass(spec=self.spec),
            InjectVirtualThreadsPass(),
            ConvertLoopToAccelPass(spec=self.spec),
            InsertDependencesPass(serial=self.serial),
        )
        assert tuple(p.name for p in passes) == LOOP_TO_ACCEL
        return passes

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_stages(self.stages(), ctx, op)
