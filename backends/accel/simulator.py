"""A cycle-level simulator of the VTA-like accelerator, bit-exact and vectorized with numpy.

`simulate(insns, dram, spec)` runs a list of `isa` instructions (`simulate_stream` runs
a binary stream) against a `dram.Dram`, updated in place, and returns a `SimResult`:
total cycles, each module's busy and stall cycles, GEMM utilization, MACs, bytes moved,
instruction counts (`summary()` prints them), each instruction's start and end cycle
and the final on-chip buffers.

It runs in three steps: `timing.plan` checks each instruction alone and gives its
module, cost and tokens; `timing.schedule` runs the discrete-event model of the load,
compute and store modules, their command queues and four token queues (see `timing`
for the model and the cost table); `machine.Machine` then runs each instruction's data
effect in simulated start order (ties in stream order; see `machine` for the semantics
and where they differ from VTA's functional simulator).

Errors are `SimulationError`s (a `DiagnosticException`): one line naming the
instruction by stream index and text, and the field. The run stops, never hangs:
`DeadlockError`, `TokenError` (queue overflow, tokens never popped, flags naming no
queue), `BufferOverflowError`, `DramRangeError`, `UninitializedReadError`, `RaceError`
(modules touching the same buffer elements at once: a missing token),
`UnsupportedError` (memory types, STORE padding, fields that do not encode, a FINISH
that is not last), `CycleLimitError` (past `max_cycles`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from tilecraft.backends.accel.dram import Dram
from tilecraft.backends.accel.isa import Alu, Finish, Gemm, Instruction, decode_stream
from tilecraft.backends.accel.machine import (
    BufferOverflowError,
    Buffers,
    CycleLimitError,
    DeadlockError,
    DramRangeError,
    Machine,
    RaceError,
    SimulationError,
    TokenError,
    UninitializedReadError,
    UnsupportedError,
    format_insn,
)
from tilecraft.backends.accel.spec import AccelSpec, default_spec
from tilecraft.backends.accel.timing import (
    ALU_PIPELINE_CYCLES,
    GEMM_PIPELINE_CYCLES,
    SINGLE_CYCLE,
    Module,
    Plan,
    Schedule,
    TokenQueue,
    check_tokens,
    plan,
    schedule,
)

# A guard, not a limit of the model: 150x ResNet-18's ideal GEMM cycles. A stream past it
# (say a GEMM looping 2^41 times) would take hours to simulate; pass max_cycles=None to allow it.
DEFAULT_MAX_CYCLES = 10**9

__all__ = [
    "DEFAULT_MAX_CYCLES",
    "ALU_PIPELINE_CYCLES",
    "GEMM_PIPELINE_CYCLES",
    "SINGLE_CYCLE",
    "BufferOverflowError",
    "Buffers",
    "CycleLimitError",
    "DeadlockError",
    "DramRangeError",
    "ModuleStats",
    "RaceError",
    "SimResult",
    "SimStats",
    "SimulationError",
    "TokenError",
    "TokenQueue",
    "UninitializedReadError",
    "UnsupportedError",
    "format_insn",
    "simulate",
    "simulate_stream",
]


# -- statistics --------------------------------------------------------------------------
@dataclass
class ModuleStats:
    """Cycles of one module. A module is busy while an instruction runs; it stalls on
    tokens while its next instruction waits for a pop, and on the queue while its next
    instruction has not been fetched because fetch waits on another module's full
    command queue. After its last instruction it is idle (neither)."""

    instructions: int = 0
    busy_cycles: int = 0
    token_stall_cycles: int = 0
    queue_stall_cycles: int = 0


@dataclass
class SimStats:
    cycles: int = 0
    macs_per_cycle: int = 1
    modules: dict[str, ModuleStats] = field(default_factory=lambda: {m.name.lower(): ModuleStats() for m in Module})
    fetch_stall_cycles: int = 0  # cycles fetch waited for room in a full command queue
    gemm_busy_cycles: int = 0  # cycles of GEMM instructions without reset
    gemm_ops: int = 0  # micro-op executions of those GEMMs
    macs: int = 0
    alu_busy_cycles: int = 0
    alu_ops: int = 0
    bytes_loaded: Counter = field(default_factory=Counter)  # DRAM bytes read, by memory type
    bytes_stored: Counter = field(default_factory=Counter)  # DRAM bytes written
    instructions: Counter = field(default_factory=Counter)  # by kind: "LOAD INP", "GEMM", ...

    @property
    def gemm_utilization(self) -> float:
        """GEMM-busy cycles over total cycles."""
        return self.gemm_busy_cycles / self.cycles if self.cycles else 0.0

    @property
    def ideal_gemm_cycles(self) -> float:
        """MACs over the MACs the GEMM core does per cycle."""
        return self.macs / self.macs_per_cycle

    @property
    def mac_utilization(self) -> float:
        """MACs done over MACs the core could have done in the run."""
        return self.macs / (self.macs_per_cycle * self.cycles) if self.cycles else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "cycles": self.cycles,
            "gemm_busy_cycles": self.gemm_busy_cycles,
            "gemm_utilization": self.gemm_utilization,
            "mac_utilization": self.mac_utilization,
            "macs": self.macs,
            "gemm_ops": self.gemm_ops,
            "alu_busy_cycles": self.alu_busy_cycles,
            "alu_ops": self.alu_ops,
            "fetch_stall_cycles": self.fetch_stall_cycles,
            "modules": {name: vars(m).copy() for name, m in self.modules.items()},
            "bytes_loaded": dict(self.bytes_loaded),
            "bytes_stored": dict(self.bytes_stored),
            "instructions": dict(self.instructions),
        }


@dataclass
class SimResult:
    stats: SimStats
    start: list[int]  # start cycle of each instruction, in stream order
    end: list[int]
    buffers: Buffers
    finished: bool  # a FINISH ran

    @property
    def cycles(self) -> int:
        return self.stats.cycles

    def summary(self) -> str:
        s = self.stats
        lines = [
            f"cycles              {s.cycles:,}",
            f"GEMM utilization    {s.gemm_utilization:.1%} (GEMM busy {s.gemm_busy_cycles:,} cycles; "
            f"{s.macs:,} MACs = {s.ideal_gemm_cycles:,.0f} ideal cycles; MAC utilization {s.mac_utilization:.1%})",
            f"ALU                 {s.alu_busy_cycles:,} busy cycles, {s.alu_ops:,} micro-op steps",
            f"{'module':<10}{'insns':>9}{'busy':>14}{'stall:tokens':>15}{'stall:queue':>14}",
        ]
        for name, m in s.modules.items():
            lines.append(
                f"{name:<10}{m.instructions:>9,}{m.busy_cycles:>14,}{m.token_stall_cycles:>15,}"
                f"{m.queue_stall_cycles:>14,}"
            )
        lines.append(f"fetch stalled on full command queues {s.fetch_stall_cycles:,} cycles")
        moved = ", ".join(f"{k} {v:,}" for k, v in sorted(s.bytes_loaded.items()))
        lines.append(f"bytes loaded        {moved or '-'}")
        lines.append(f"bytes stored        {', '.join(f'{k} {v:,}' for k, v in s.bytes_stored.items()) or '-'}")
        lines.append(f"instructions        {', '.join(f'{k} {v:,}' for k, v in sorted(s.instructions.items()))}")
        return "\n".join(lines)


# -- the driver -------------------------------------------------------------------------------
def simulate(
    insns: list[Instruction],
    dram: Dram,
    spec: AccelSpec | None = None,
    *,
    max_cycles: int | None = DEFAULT_MAX_CYCLES,
) -> SimResult:
    """Run `insns` on the machine of `spec` (VTA's default if None) against `dram`,
    which is updated in place. Raises a `SimulationError` if the stream cannot run,
    a `CycleLimitError` (before any data effect) if it runs past `max_cycles`."""
    spec = spec or default_spec()
    insns = list(insns)
    for i, insn in enumerate(insns[:-1]):
        if isinstance(insn, Finish):
            raise UnsupportedError(f"FINISH ends the stream, but {len(insns) - 1 - i} instructions follow it", i, insn)
    plans = [plan(i, insn, spec, dram) for i, insn in enumerate(insns)]
    timeline = schedule(insns, plans, spec)
    check_tokens(insns, timeline, spec)
    stats = SimStats(cycles=max(timeline.end, default=0), macs_per_cycle=spec.macs_per_cycle)
    if max_cycles is not None and stats.cycles > max_cycles:
        last = int(np.argmax(timeline.end))
        raise CycleLimitError(f"the stream runs {stats.cycles} cycles, past max_cycles {max_cycles}", last, insns[last])
    _account(plans, timeline, stats, insns)
    machine = Machine(spec, dram, stats, insns)
    for i in sorted(range(len(insns)), key=lambda i: (timeline.start[i], i)):
        machine.run(i, insns[i], timeline.start[i], timeline.end[i])
    return SimResult(
        stats=stats,
        start=timeline.start,
        end=timeline.end,
        buffers=machine.buffers,
        finished=bool(insns) and isinstance(insns[-1], Finish),
    )


def simulate_stream(data: bytes, dram: Dram, spec: AccelSpec | None = None, **kwargs) -> SimResult:
    """`simulate` on a binary stream (`isa.encode_stream`'s 16 bytes per instruction)."""
    spec = spec or default_spec()
    return simulate(decode_stream(data, spec), dram, spec, **kwargs)


def _account(plans: list[Plan], timeline: Schedule, stats: SimStats, insns: list[Instruction]) -> None:
    free = [0, 0, 0]
    previous_dispatch = 0
    for i, step in enumerate(plans):
        module = stats.modules[step.module.name.lower()]
        start, dispatch = timeline.start[i], timeline.dispatch[i]
        stats.fetch_stall_cycles += dispatch - previous_dispatch
        previous_dispatch = dispatch
        gap = start - free[step.module]
        queue_wait = min(max(dispatch - free[step.module], 0), gap)
        module.queue_stall_cycles += queue_wait
        module.token_stall_cycles += gap - queue_wait
        module.busy_cycles += step.cycles
        module.instructions += 1
        free[step.module] = timeline.end[i]
        stats.instructions[step.kind] += 1
        if isinstance(insns[i], Gemm) and not insns[i].reset:
            stats.gemm_busy_cycles += step.cycles
        elif isinstance(insns[i], Alu):
            stats.alu_busy_cycles += step.cycles
