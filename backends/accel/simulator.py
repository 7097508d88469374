"""A cycle-level simulator of the VTA-like accelerator, bit-exact and vectorized with numpy.

`simulate(insns, dram, spec)` runs a list of `isa` instructions (`simulate_stream` runs
the binary stream) against a `dram.Dram` and returns a `SimResult`: total cycles, each
module's busy and stall cycles, GEMM utilization, MACs, bytes moved, instruction counts
(`summary()` prints them) and the final on-chip buffers. DRAM is updated in place.

The machine
-----------
Three modules run their own instructions in stream order, concurrently:
load (LOAD of INP, WGT), compute (LOAD of UOP, ACC, ACC_8BIT; GEMM; ALU; FINISH) and
store (STORE of OUT). A fetch unit hands instructions out in stream order into one
command queue per module of COMMAND_QUEUE_DEPTH entries; when the queue an instruction
belongs to is full, fetch waits, and so do the instructions behind it. An instruction
leaves its queue when its module starts it. Four token queues order the modules:
load->compute (pushed by push_next of a load instruction, popped by pop_prev of a
compute instruction), compute->load (push_prev / pop_next), compute->store
(push_next / pop_prev), store->compute (push_prev / pop_next). The k-th pop on a queue
takes the token of the k-th push on it; a token is pushed when its instruction ends.

Timing is a discrete-event (max-plus) model, not a tick loop. Instruction i of module
m starts at max(end of m's previous instruction, the cycle fetch handed it to m's
queue, the end of each instruction whose token it pops) and runs for its cost:

| instruction        | cycles                                                             |
|--------------------|--------------------------------------------------------------------|
| LOAD, STORE        | DMA_LATENCY_CYCLES + ceil(bytes / DMA_BYTES_PER_CYCLE)              |
| GEMM               | iter_out * iter_in * (uop_end - uop_begin) * GEMM_INITIATION_INTERVAL |
|                    | + GEMM_PIPELINE_CYCLES                                             |
| ALU                | the same with ALU_INITIATION_INTERVAL + ALU_PIPELINE_CYCLES         |
| FINISH, DMA no-op  | 1 (a LOAD/STORE with x_size 0 moves nothing, as in VTA's runtime)   |

A LOAD's bytes are all the elements it writes into the buffer, padding included: the
load unit writes a zero element at the rate it writes a fetched one, so padding costs
time but moves nothing over the bus (the `bytes_loaded` statistic counts DRAM bytes
only). Fetch itself takes no time. Total cycles = the end of the last instruction.

Data effects run in simulated start order (ties in stream order), with these semantics:
LOAD copies y_size rows of x_size elements, x_stride elements apart in DRAM, into the
buffer from sram_base, with y_pad_0/y_pad_1 rows and x_pad_0/x_pad_1 elements of zeros
around them (row length x_pad_0 + x_size + x_pad_1). GEMM runs, for i < iter_out,
j < iter_in, micro-op k in [uop_begin, uop_end): dst = uop[k].dst_idx + i*dst_factor_out
+ j*dst_factor_in (src, wgt alike) and acc[dst] += inp[src] (BATCH x BLOCK_IN) times
wgt[wgt]^T (BLOCK_IN x BLOCK_OUT) in integers wrapped to the accumulator width, or
acc[dst] = 0 with `reset`. ALU computes acc[dst] = op(acc[dst], imm or acc[src]) per
value, wrapped to the accumulator width: MIN, MAX, ADD, MUL, and SHR, an arithmetic
right shift whose negative amount shifts left (VTA); a shift by the width or more gives
the sign (right) or 0 (left), not C's undefined result. GEMM and ALU also write each
result's low out-width bits to the output buffer at the same index; STORE copies the
output buffer to DRAM. This is the hardware's output buffer; VTA's functional simulator
instead truncates the accumulator on STORE, so there a STORE right after a LOAD ACC
works, and here it reads an output element nothing has written (an error).

Errors (all `SimulationError`, a `DiagnosticException`: one line naming the instruction
by stream index and text, and the field) stop the run, never a hang or a traceback:
a deadlock (each blocked instruction and what it waits for), a token queue holding more
than TOKEN_QUEUE_DEPTH tokens, tokens nobody pops at the end, an SRAM index past its
buffer, DRAM out of range, reading a buffer element nothing has written (padding counts
as written), unsupported memory types or flags, fields that do not encode at the spec.

Speed: a GEMM gathers its (dst, src, wgt) indices for all steps and does one batched
product (float32 or float64 when exact at the spec's widths, int64 otherwise) and one
`np.add.at`; an ALU instruction is one vector op when its destinations are distinct and
no step reads what an earlier step of it wrote, else it runs step by step.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum, IntEnum

import numpy as np
from tilecraft.backends.accel.dram import (
    Dram,
    elem_bytes,
    pack_values,
    tile_shape,
    unpack_tiles,
    wrap_signed,
)
from tilecraft.backends.accel.isa import (
    Alu,
    AluOpcode,
    EncodingError,
    Finish,
    Gemm,
    Instruction,
    Load,
    MemoryType,
    Store,
    decode_stream,
    encode,
    layouts,
)
from tilecraft.backends.accel.spec import AccelSpec, default_spec
from xdsl.utils.exceptions import DiagnosticException

GEMM_PIPELINE_CYCLES = 4  # fill/drain of the GEMM pipeline, once per instruction
ALU_PIPELINE_CYCLES = 4
SINGLE_CYCLE = 1  # FINISH, and a LOAD/STORE with x_size 0
_CHUNK = 8192  # GEMM steps per batched product (bounds the gathered temporaries)


class Module(IntEnum):
    LOAD = 0
    COMPUTE = 1
    STORE = 2


class TokenQueue(Enum):
    LOAD_TO_COMPUTE = "load->compute"
    COMPUTE_TO_LOAD = "compute->load"
    COMPUTE_TO_STORE = "compute->store"
    STORE_TO_COMPUTE = "store->compute"


# (module, flag) -> the queue that flag pops or pushes; a missing pair is not allowed.
_POPS = {
    (Module.COMPUTE, "pop_prev"): TokenQueue.LOAD_TO_COMPUTE,
    (Module.LOAD, "pop_next"): TokenQueue.COMPUTE_TO_LOAD,
    (Module.STORE, "pop_prev"): TokenQueue.COMPUTE_TO_STORE,
    (Module.COMPUTE, "pop_next"): TokenQueue.STORE_TO_COMPUTE,
}
_PUSHES = {
    (Module.LOAD, "push_next"): TokenQueue.LOAD_TO_COMPUTE,
    (Module.COMPUTE, "push_prev"): TokenQueue.COMPUTE_TO_LOAD,
    (Module.COMPUTE, "push_next"): TokenQueue.COMPUTE_TO_STORE,
    (Module.STORE, "push_prev"): TokenQueue.STORE_TO_COMPUTE,
}
_BUFFER_NAMES = {
    MemoryType.UOP: "micro-op",
    MemoryType.INP: "input",
    MemoryType.WGT: "weight",
    MemoryType.ACC: "accumulator",
    MemoryType.ACC_8BIT: "accumulator",
    MemoryType.OUT: "output",
}


# -- errors ------------------------------------------------------------------------------
class SimulationError(DiagnosticException):
    """The stream cannot run; `str()` is one line naming the instruction and field."""

    def __init__(self, message: str, index: int | None = None, insn: Instruction | None = None):
        self.index = index
        self.insn = insn
        self.message = message
        where = f"insn #{index} `{format_insn(insn)}`: " if index is not None and insn is not None else ""
        super().__init__(f"accel simulator: {where}{message}")


class DeadlockError(SimulationError):
    """No module can make progress."""


class TokenError(SimulationError):
    """A token queue overflows, a token is never popped, or a flag names no queue."""


class BufferOverflowError(SimulationError):
    """An index past an on-chip buffer's depth."""


class DramRangeError(SimulationError):
    """A LOAD or STORE touches bytes outside the DRAM."""


class UninitializedReadError(SimulationError):
    """An instruction reads a buffer element that nothing has written."""


class UnsupportedError(SimulationError):
    """An instruction the machine does not run (memory type, padding on STORE, ...)."""


class CycleLimitError(SimulationError):
    """The stream runs past `max_cycles`."""


def format_insn(insn: Instruction) -> str:
    """A short one-line text of an instruction, for messages."""
    flags = [f for f in ("pop_prev", "pop_next", "push_prev", "push_next") if getattr(insn, f, False)]
    tail = f" [{' '.join(flags)}]" if flags else ""
    if isinstance(insn, Load | Store):
        pads = (insn.y_pad_0, insn.y_pad_1, insn.x_pad_0, insn.x_pad_1)
        pad = f" pad={pads}" if any(pads) else ""
        name = "LOAD" if isinstance(insn, Load) else "STORE"
        memory = insn.memory_type.name if isinstance(insn.memory_type, MemoryType) else insn.memory_type
        return (
            f"{name} {memory} sram={insn.sram_base} dram={insn.dram_base} "
            f"y={insn.y_size} x={insn.x_size} stride={insn.x_stride}{pad}{tail}"
        )
    if isinstance(insn, Gemm | Alu):
        if isinstance(insn, Gemm):
            head = "GEMM" + (" reset" if insn.reset else "")
            wgt = f" wgt=({insn.wgt_factor_out},{insn.wgt_factor_in})"
        else:
            op = insn.alu_opcode.name if isinstance(insn.alu_opcode, AluOpcode) else insn.alu_opcode
            head = f"ALU {op}" + (f" imm={insn.imm}" if insn.use_imm else "")
            wgt = ""
        return (
            f"{head} uop=[{insn.uop_begin},{insn.uop_end}) iter={insn.iter_out}x{insn.iter_in} "
            f"dst=({insn.dst_factor_out},{insn.dst_factor_in}) src=({insn.src_factor_out},{insn.src_factor_in})"
            f"{wgt}{tail}"
        )
    if isinstance(insn, Finish):
        return f"FINISH{tail}"
    return repr(insn)


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


# -- the plan of each instruction (static checks, module, cost, tokens) ---------------------
@dataclass
class _Plan:
    module: Module
    cycles: int
    pops: list[TokenQueue]
    pushes: list[TokenQueue]
    kind: str


def _module_of(index: int, insn: Instruction) -> Module:
    if isinstance(insn, Load):
        if insn.memory_type in (MemoryType.INP, MemoryType.WGT):
            return Module.LOAD
        if insn.memory_type in (MemoryType.UOP, MemoryType.ACC, MemoryType.ACC_8BIT):
            return Module.COMPUTE
        raise UnsupportedError(
            f"field memory_type: LOAD of {MemoryType(insn.memory_type).name} is not supported "
            "(the output buffer is written by GEMM/ALU and read by STORE)",
            index,
            insn,
        )
    if isinstance(insn, Store):
        if insn.memory_type != MemoryType.OUT:
            raise UnsupportedError(
                f"field memory_type: STORE of {MemoryType(insn.memory_type).name} is not supported "
                "(STORE copies the output buffer: memory type OUT)",
                index,
                insn,
            )
        return Module.STORE
    if isinstance(insn, Gemm | Alu | Finish):
        return Module.COMPUTE
    raise UnsupportedError(f"{insn!r} is not an accelerator instruction", index, insn)


def _dma_cycles(nbytes: int, spec: AccelSpec) -> int:
    return spec.dma_latency_cycles + math.ceil(nbytes / spec.dma_bytes_per_cycle)


def _plan(index: int, insn: Instruction, spec: AccelSpec, dram: Dram) -> _Plan:
    module = _module_of(index, insn)
    try:
        encode(insn, spec)
    except EncodingError as e:
        raise SimulationError(f"does not encode at this spec: {e}", index, insn) from None
    pops, pushes = [], []
    for flag in ("pop_prev", "pop_next", "push_prev", "push_next"):
        if not getattr(insn, flag):
            continue
        table = _POPS if flag.startswith("pop") else _PUSHES
        queue = table.get((module, flag))
        if queue is None:
            side = "previous" if flag.endswith("prev") else "next"
            raise TokenError(
                f"field {flag}: the {module.name.lower()} module has no {side} module to exchange tokens with",
                index,
                insn,
            )
        (pops if flag.startswith("pop") else pushes).append(queue)
    if isinstance(insn, Load | Store):
        return _Plan(module, _check_memory(index, insn, spec, dram), pops, pushes, _kind(insn))
    if isinstance(insn, Gemm | Alu):
        if insn.uop_end > spec.uop_depth:
            raise BufferOverflowError(
                f"field uop_end: {insn.uop_end} is past the micro-op buffer's depth {spec.uop_depth}", index, insn
            )
        if insn.uop_begin > insn.uop_end:
            raise UnsupportedError(f"field uop_begin: {insn.uop_begin} is past uop_end {insn.uop_end}", index, insn)
        steps = insn.iter_out * insn.iter_in * (insn.uop_end - insn.uop_begin)
        if isinstance(insn, Gemm):
            cycles = steps * spec.gemm_initiation_interval + GEMM_PIPELINE_CYCLES
        else:
            cycles = steps * spec.alu_initiation_interval + ALU_PIPELINE_CYCLES
        return _Plan(module, cycles, pops, pushes, _kind(insn))
    return _Plan(module, SINGLE_CYCLE, pops, pushes, _kind(insn))


def _kind(insn: Instruction) -> str:
    if isinstance(insn, Load | Store):
        return f"{'LOAD' if isinstance(insn, Load) else 'STORE'} {MemoryType(insn.memory_type).name}"
    if isinstance(insn, Gemm):
        return "GEMM reset" if insn.reset else "GEMM"
    if isinstance(insn, Alu):
        return f"ALU {AluOpcode(insn.alu_opcode).name}"
    return "FINISH"


def _check_memory(index: int, insn: Load | Store, spec: AccelSpec, dram: Dram) -> int:
    """Check a LOAD/STORE's buffer and DRAM ranges; return its cycles."""
    memory_type = MemoryType(insn.memory_type)
    if isinstance(insn, Store):
        for pad in ("y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1"):
            if getattr(insn, pad):
                raise UnsupportedError(f"field {pad}: STORE does not pad (it is {getattr(insn, pad)})", index, insn)
    if insn.x_size == 0:  # a no-op carrying dependence flags, as VTA's runtime emits
        return SINGLE_CYCLE
    x_total = insn.x_pad_0 + insn.x_size + insn.x_pad_1
    y_total = insn.y_pad_0 + insn.y_size + insn.y_pad_1
    elements = x_total * y_total
    depth = _depth(memory_type, spec)
    if insn.sram_base + elements > depth:
        raise BufferOverflowError(
            f"field sram_base: elements [{insn.sram_base}, {insn.sram_base + elements}) "
            f"((y_pad_0 + y_size + y_pad_1) x (x_pad_0 + x_size + x_pad_1) = {y_total} x {x_total} "
            f"from sram_base {insn.sram_base}) pass the {_BUFFER_NAMES[memory_type]} buffer's depth {depth}",
            index,
            insn,
        )
    size = elem_bytes(memory_type, spec)
    if insn.y_size:
        first = insn.dram_base * size
        last = (insn.dram_base + (insn.y_size - 1) * insn.x_stride + insn.x_size) * size
        if last > dram.size:
            raise DramRangeError(
                f"field dram_base: DRAM bytes [{first:#x}, {last:#x}) ({insn.y_size} rows of {insn.x_size} "
                f"{memory_type.name} elements of {size} bytes, x_stride {insn.x_stride}, from element "
                f"{insn.dram_base}) pass the end of the {dram.size}-byte DRAM",
                index,
                insn,
            )
    if isinstance(insn, Store):
        return _dma_cycles(insn.x_size * insn.y_size * size, spec)
    return _dma_cycles(elements * size, spec)


def _depth(memory_type: MemoryType, spec: AccelSpec) -> int:
    return {
        MemoryType.UOP: spec.uop_depth,
        MemoryType.INP: spec.inp_depth,
        MemoryType.WGT: spec.wgt_depth,
        MemoryType.ACC: spec.acc_depth,
        MemoryType.ACC_8BIT: spec.acc_depth,
        MemoryType.OUT: spec.out_depth,
    }[memory_type]


# -- timing --------------------------------------------------------------------------------
@dataclass
class _Schedule:
    dispatch: list[int]
    start: list[int]
    end: list[int]
    pushers: dict[TokenQueue, list[int]]  # pushing instructions of each queue, in order
    poppers: dict[TokenQueue, list[int]]


def _schedule(insns: list[Instruction], plans: list[_Plan], spec: AccelSpec) -> _Schedule:
    """Start and end cycles of every instruction; a `DeadlockError` if some never start."""
    n = len(plans)
    depth = spec.command_queue_depth
    by_module: list[list[int]] = [[], [], []]
    position = [0] * n
    pushers: dict[TokenQueue, list[int]] = {q: [] for q in TokenQueue}
    poppers: dict[TokenQueue, list[int]] = {q: [] for q in TokenQueue}
    waits: list[list[tuple[TokenQueue, int, int | None]]] = []  # (queue, k, k-th pusher)
    for i, plan in enumerate(plans):
        position[i] = len(by_module[plan.module])
        by_module[plan.module].append(i)
        for q in plan.pushes:
            pushers[q].append(i)
    for i, plan in enumerate(plans):
        mine = []
        for q in plan.pops:
            k = len(poppers[q])
            poppers[q].append(i)
            mine.append((q, k, pushers[q][k] if k < len(pushers[q]) else None))
        waits.append(mine)

    dispatch, start, end = [0] * n, [-1] * n, [0] * n
    fetched, last_dispatch = 0, 0
    head, free = [0, 0, 0], [0, 0, 0]
    progress = True
    while progress:
        progress = False
        while fetched < n:  # fetch: in stream order, into the module's command queue
            i = fetched
            room = 0
            if position[i] >= depth:
                leaving = by_module[plans[i].module][position[i] - depth]
                if start[leaving] < 0:
                    break
                room = start[leaving]
            last_dispatch = max(last_dispatch, room)
            dispatch[i] = last_dispatch
            fetched += 1
            progress = True
        for m in Module:
            queue = by_module[m]
            while head[m] < len(queue):
                i = queue[head[m]]
                if i >= fetched:
                    break
                t = max(free[m], dispatch[i])
                for _q, _k, pusher in waits[i]:
                    if pusher is None or start[pusher] < 0:
                        break
                    t = max(t, end[pusher])
                else:
                    start[i], end[i] = t, t + plans[i].cycles
                    free[m] = end[i]
                    head[m] += 1
                    progress = True
                    continue
                break
    if fetched < n or any(head[m] < len(by_module[m]) for m in Module):
        raise _deadlock(insns, plans, by_module, head, fetched, waits, start, max(free), depth)
    return _Schedule(dispatch, start, end, pushers, poppers)


def _deadlock(insns, plans, by_module, head, fetched, waits, start, cycle, depth) -> DeadlockError:
    parts = []
    for m in Module:
        if head[m] >= len(by_module[m]):
            continue
        i = by_module[m][head[m]]
        what = f"{m.name.lower()} module: insn #{i} `{format_insn(insns[i])}`"
        if i >= fetched:
            blocked = plans[fetched].module.name.lower()
            parts.append(
                f"{what} is not fetched (fetch waits at insn #{fetched} for room in the full {blocked} "
                f"command queue, depth {depth})"
            )
            continue
        for q, k, pusher in waits[i]:
            if pusher is None:
                parts.append(f"{what} waits for token {k + 1} on {q.value}, which no instruction pushes")
                break
            if start[pusher] < 0:
                parts.append(f"{what} waits for token {k + 1} on {q.value}, pushed by insn #{pusher} which never runs")
                break
    return DeadlockError(f"deadlock after cycle {cycle}: " + "; ".join(parts))


def _check_tokens(insns: list[Instruction], schedule: _Schedule, spec: AccelSpec) -> None:
    """Token queues: never more than TOKEN_QUEUE_DEPTH waiting; none left at the end."""
    depth = spec.token_queue_depth
    for q in TokenQueue:
        pushers, poppers = schedule.pushers[q], schedule.poppers[q]
        if len(pushers) > depth:
            times = np.array([schedule.end[i] for i in pushers] + [schedule.start[i] for i in poppers], np.int64)
            delta = np.r_[np.ones(len(pushers), np.int64), -np.ones(len(poppers), np.int64)]
            order = np.argsort(times, kind="stable")
            times, count = times[order], np.cumsum(delta[order])
            settled = np.r_[times[1:] != times[:-1], True]  # the count once a cycle's events are done
            over = np.flatnonzero(settled & (count > depth))
            if over.size:
                cycle = int(times[over[0]])
                popped = sum(1 for i in poppers if schedule.start[i] <= cycle)
                culprit = pushers[popped + depth]
                raise TokenError(
                    f"push on {q.value} at cycle {cycle}: the queue already holds {depth} tokens "
                    f"(TOKEN_QUEUE_DEPTH {depth})",
                    culprit,
                    insns[culprit],
                )
        if len(pushers) > len(poppers):
            culprit = pushers[len(poppers)]
            raise TokenError(
                f"pushes a token on {q.value} that no instruction pops "
                f"({len(pushers)} pushes, {len(poppers)} pops at the end of the stream)",
                culprit,
                insns[culprit],
            )


# -- the on-chip buffers and the data effect of each instruction ------------------------------
class Buffers:
    """The machine's SRAM: values as int arrays indexed by element, plus a written mask
    per buffer. `inp` is (depth, BATCH, BLOCK), `wgt` (depth, BLOCK_OUT, BLOCK_IN),
    `acc` and `out` (depth, BATCH, BLOCK) sign-extended int64; `uop_dst/src/wgt` the
    decoded micro-op fields."""

    def __init__(self, spec: AccelSpec):
        self.spec = spec
        batch, block = spec.batch, spec.block
        # Products summed in float are exact while |sum| < 2^mantissa.
        magnitude = spec.inp_width + spec.wgt_width - 2 + spec.log_block
        self.product_dtype = np.float32 if magnitude <= 24 else np.float64 if magnitude <= 53 else np.int64
        self.inp = np.zeros((spec.inp_depth, batch, block), self.product_dtype)
        self.wgt = np.zeros((spec.wgt_depth, block, block), self.product_dtype)
        self.acc = np.zeros((spec.acc_depth, batch, block), np.int64)
        self.out = np.zeros((spec.out_depth, batch, block), np.int64)
        self.uop_dst = np.zeros(spec.uop_depth, np.int64)
        self.uop_src = np.zeros(spec.uop_depth, np.int64)
        self.uop_wgt = np.zeros(spec.uop_depth, np.int64)
        self.written = {
            MemoryType.UOP: np.zeros(spec.uop_depth, bool),
            MemoryType.INP: np.zeros(spec.inp_depth, bool),
            MemoryType.WGT: np.zeros(spec.wgt_depth, bool),
            MemoryType.ACC: np.zeros(spec.acc_depth, bool),
            MemoryType.OUT: np.zeros(spec.out_depth, bool),
        }


class _Executor:
    def __init__(self, spec: AccelSpec, dram: Dram, stats: SimStats):
        self.spec = spec
        self.dram = dram
        self.stats = stats
        self.buffers = Buffers(spec)

    def run(self, index: int, insn: Instruction) -> None:
        if isinstance(insn, Load):
            self.load(index, insn)
        elif isinstance(insn, Store):
            self.store(index, insn)
        elif isinstance(insn, Gemm):
            self.gemm(index, insn)
        elif isinstance(insn, Alu):
            self.alu(index, insn)

    # -- DMA ---------------------------------------------------------------------------
    def _dram_bytes(self, insn: Load | Store, size: int) -> np.ndarray:
        """Byte addresses (y_size, x_size * size) of the DRAM rows an instruction touches."""
        rows = (insn.dram_base + np.arange(insn.y_size, dtype=np.int64) * insn.x_stride) * size
        return rows[:, None] + np.arange(insn.x_size * size, dtype=np.int64)[None, :]

    def load(self, index: int, insn: Load) -> None:
        if insn.x_size == 0:
            return
        spec, b = self.spec, self.buffers
        memory_type = MemoryType(insn.memory_type)
        size = elem_bytes(memory_type, spec)
        raw = self.dram.data[self._dram_bytes(insn, size)]
        self.stats.bytes_loaded[memory_type.name.lower()] += raw.size
        x_total = insn.x_pad_0 + insn.x_size + insn.x_pad_1
        y_total = insn.y_pad_0 + insn.y_size + insn.y_pad_1
        first, stop = insn.sram_base, insn.sram_base + x_total * y_total
        if memory_type == MemoryType.UOP:
            words = np.zeros((y_total, x_total), np.int64)
            words[insn.y_pad_0 : insn.y_pad_0 + insn.y_size, insn.x_pad_0 : insn.x_pad_0 + insn.x_size] = (
                raw.reshape(-1).view("<u4").reshape(insn.y_size, insn.x_size)
            )
            words = words.reshape(-1)
            for bit_field in layouts(spec).uop:
                target = {"dst_idx": b.uop_dst, "src_idx": b.uop_src, "wgt_idx": b.uop_wgt}[bit_field.name]
                target[first:stop] = (words >> bit_field.lsb) & ((1 << bit_field.width) - 1)
            b.written[MemoryType.UOP][first:stop] = True
            return
        target_type = MemoryType.ACC if memory_type == MemoryType.ACC_8BIT else memory_type
        buffer = {MemoryType.INP: b.inp, MemoryType.WGT: b.wgt, MemoryType.ACC: b.acc}[target_type]
        values = unpack_tiles(raw, memory_type, spec).reshape(insn.y_size, insn.x_size, *tile_shape(memory_type, spec))
        padded = np.zeros((y_total, x_total, *buffer.shape[1:]), buffer.dtype)
        padded[insn.y_pad_0 : insn.y_pad_0 + insn.y_size, insn.x_pad_0 : insn.x_pad_0 + insn.x_size] = values
        buffer[first:stop] = padded.reshape(-1, *buffer.shape[1:])
        b.written[target_type][first:stop] = True

    def store(self, index: int, insn: Store) -> None:
        if insn.x_size == 0:
            return
        spec, b = self.spec, self.buffers
        count = insn.x_size * insn.y_size
        first = insn.sram_base
        self._check_written(index, insn, MemoryType.OUT, np.arange(first, first + count), "sram_base")
        size = elem_bytes(MemoryType.OUT, spec)
        raw = pack_values(wrap_signed(b.out[first : first + count], spec.out_width), spec.out_width)
        self.dram.data[self._dram_bytes(insn, size)] = raw.reshape(insn.y_size, insn.x_size * size)
        self.stats.bytes_stored["out"] += raw.size

    # -- micro-op loops ----------------------------------------------------------------------
    def _indices(self, index: int, insn: Gemm | Alu, name: str, depth: int, buffer: str) -> np.ndarray:
        """The `name` (dst/src/wgt) index of every step, in execution order, bounds-checked."""
        b = self.buffers
        uop_field = {"dst": b.uop_dst, "src": b.uop_src, "wgt": b.uop_wgt}[name]
        out_factor, in_factor = getattr(insn, f"{name}_factor_out"), getattr(insn, f"{name}_factor_in")
        base = uop_field[insn.uop_begin : insn.uop_end]
        idx = (
            base[None, None, :]
            + (np.arange(insn.iter_out, dtype=np.int64) * out_factor)[:, None, None]
            + (np.arange(insn.iter_in, dtype=np.int64) * in_factor)[None, :, None]
        ).reshape(-1)
        if idx.size and int(idx.max()) >= depth:
            step = int(np.argmax(idx >= depth))
            i, j, k = np.unravel_index(step, (insn.iter_out, insn.iter_in, insn.uop_end - insn.uop_begin))
            uop = insn.uop_begin + int(k)
            raise BufferOverflowError(
                f"field {name}_factor_out/{name}_factor_in: {name} index {int(idx[step])} = micro-op {uop} "
                f"{name}_idx {int(uop_field[uop])} + i={int(i)} x {out_factor} + j={int(j)} x {in_factor} "
                f"is past the {buffer} buffer's depth {depth}",
                index,
                insn,
            )
        return idx

    def _check_written(self, index, insn, memory_type: MemoryType, idx: np.ndarray, what: str) -> None:
        written = self.buffers.written[memory_type]
        ok = written[idx]
        if not ok.all():
            step = int(np.argmin(ok))
            raise UninitializedReadError(
                f"{what}: reads {_BUFFER_NAMES[memory_type]} element {int(idx[step])}, which nothing has written",
                index,
                insn,
            )

    def _steps(self, index: int, insn: Gemm | Alu) -> int:
        uops = np.arange(insn.uop_begin, insn.uop_end)
        self._check_written(index, insn, MemoryType.UOP, uops, "field uop_begin/uop_end")
        return insn.iter_out * insn.iter_in * uops.size

    def gemm(self, index: int, insn: Gemm) -> None:
        spec, b = self.spec, self.buffers
        steps = self._steps(index, insn)
        dst = self._indices(index, insn, "dst", spec.acc_depth, "accumulator")
        if insn.reset:
            b.acc[dst] = 0
            b.out[dst] = 0
            b.written[MemoryType.ACC][dst] = True
            b.written[MemoryType.OUT][dst] = True
            return
        src = self._indices(index, insn, "src", spec.inp_depth, "input")
        wgt = self._indices(index, insn, "wgt", spec.wgt_depth, "weight")
        self._check_written(index, insn, MemoryType.ACC, dst, "dst")
        self._check_written(index, insn, MemoryType.INP, src, "src")
        self._check_written(index, insn, MemoryType.WGT, wgt, "wgt")
        for c in range(0, steps, _CHUNK):
            part = slice(c, c + _CHUNK)
            products = np.einsum("nbk,nok->nbo", b.inp[src[part]], b.wgt[wgt[part]])
            np.add.at(b.acc, dst[part], products.astype(np.int64))
        touched = np.unique(dst)
        b.acc[touched] = wrap_signed(b.acc[touched], spec.acc_width)
        b.out[touched] = wrap_signed(b.acc[touched], spec.out_width)
        b.written[MemoryType.OUT][touched] = True
        self.stats.gemm_ops += steps
        self.stats.macs += steps * spec.macs_per_cycle

    def alu(self, index: int, insn: Alu) -> None:
        spec, b = self.spec, self.buffers
        steps = self._steps(index, insn)
        dst = self._indices(index, insn, "dst", spec.acc_depth, "accumulator")
        self._check_written(index, insn, MemoryType.ACC, dst, "dst")
        op = _ALU_OPS[AluOpcode(insn.alu_opcode)]
        if insn.use_imm:
            src = None
            operand: np.ndarray | np.int64 = np.int64(insn.imm)
        else:
            src = self._indices(index, insn, "src", spec.acc_depth, "accumulator")
            self._check_written(index, insn, MemoryType.ACC, src, "src")
        self.stats.alu_ops += steps
        if steps == 0:
            return
        if _independent(dst, src, spec.acc_depth):
            if src is not None:
                operand = b.acc[src]
            result = wrap_signed(op(b.acc[dst], operand), spec.acc_width)
            b.acc[dst] = result
            b.out[dst] = wrap_signed(result, spec.out_width)
        else:  # a step reads what an earlier one wrote: run them in order
            for t in range(steps):
                d = dst[t]
                value = operand if src is None else b.acc[src[t]]
                b.acc[d] = wrap_signed(op(b.acc[d], value), spec.acc_width)
                b.out[d] = wrap_signed(b.acc[d], spec.out_width)
        b.written[MemoryType.OUT][dst] = True


def _independent(dst: np.ndarray, src: np.ndarray | None, depth: int) -> bool:
    """Whether all steps can run at once: distinct destinations, and no step reading an
    element an earlier step writes (reading its own destination is fine)."""
    if np.unique(dst).size != dst.size:
        return False
    if src is None:
        return True
    steps = np.arange(dst.size)
    first_write = np.full(depth, dst.size, np.int64)
    first_write[dst] = steps
    return bool((first_write[src] >= steps).all())


def _shift_right(a: np.ndarray, amount: np.ndarray) -> np.ndarray:
    amount = np.broadcast_to(np.asarray(amount, np.int64), np.shape(a))
    right = a >> np.clip(amount, 0, 63)
    left = a << np.clip(-amount, 0, 63)
    return np.where(amount >= 0, right, left)


_ALU_OPS = {
    AluOpcode.MIN: np.minimum,
    AluOpcode.MAX: np.maximum,
    AluOpcode.ADD: np.add,
    AluOpcode.MUL: np.multiply,
    AluOpcode.SHR: _shift_right,
}


# -- the driver -------------------------------------------------------------------------------
def simulate(
    insns: list[Instruction],
    dram: Dram,
    spec: AccelSpec | None = None,
    *,
    max_cycles: int | None = None,
) -> SimResult:
    """Run `insns` on the machine of `spec` (VTA's default if None) against `dram`,
    which is updated in place. Raises a `SimulationError` if the stream cannot run."""
    spec = spec or default_spec()
    insns = list(insns)
    for i, insn in enumerate(insns[:-1]):
        if isinstance(insn, Finish):
            raise UnsupportedError(f"FINISH ends the stream, but {len(insns) - 1 - i} instructions follow it", i, insn)
    plans = [_plan(i, insn, spec, dram) for i, insn in enumerate(insns)]
    schedule = _schedule(insns, plans, spec)
    _check_tokens(insns, schedule, spec)
    stats = SimStats(cycles=max(schedule.end, default=0), macs_per_cycle=spec.macs_per_cycle)
    if max_cycles is not None and stats.cycles > max_cycles:
        last = int(np.argmax(schedule.end))
        raise CycleLimitError(f"the stream runs {stats.cycles} cycles, past max_cycles {max_cycles}", last, insns[last])
    _account(plans, schedule, stats, insns)
    executor = _Executor(spec, dram, stats)
    for i in sorted(range(len(insns)), key=lambda i: (schedule.start[i], i)):
        executor.run(i, insns[i])
    return SimResult(
        stats=stats,
        start=schedule.start,
        end=schedule.end,
        buffers=executor.buffers,
        finished=bool(insns) and isinstance(insns[-1], Finish),
    )


def simulate_stream(data: bytes, dram: Dram, spec: AccelSpec | None = None, **kwargs) -> SimResult:
    """`simulate` on a binary stream (`isa.encode_stream`'s 16 bytes per instruction)."""
    spec = spec or default_spec()
    return simulate(decode_stream(data, spec), dram, spec, **kwargs)


def _account(plans: list[_Plan], schedule: _Schedule, stats: SimStats, insns: list[Instruction]) -> None:
    free = [0, 0, 0]
    previous_dispatch = 0
    for i, plan in enumerate(plans):
        module = stats.modules[plan.module.name.lower()]
        start, dispatch = schedule.start[i], schedule.dispatch[i]
        stats.fetch_stall_cycles += dispatch - previous_dispatch
        previous_dispatch = dispatch
        gap = start - free[plan.module]
        queue_wait = min(max(dispatch - free[plan.module], 0), gap)
        module.queue_stall_cycles += queue_wait
        module.token_stall_cycles += gap - queue_wait
        module.busy_cycles += plan.cycles
        module.instructions += 1
        free[plan.module] = schedule.end[i]
        stats.instructions[plan.kind] += 1
        if isinstance(insns[i], Gemm) and not insns[i].reset:
            stats.gemm_busy_cycles += plan.cycles
        elif isinstance(insns[i], Alu):
            stats.alu_busy_cycles += plan.cycles
