"""The accelerator's timing: which module runs each instruction, its cost, and when it
starts, as a discrete-event (max-plus) model rather than a tick loop.

Three modules run their own instructions in stream order, concurrently: load (LOAD of
INP, WGT), compute (LOAD of UOP, ACC, ACC_8BIT; GEMM; ALU; FINISH) and store (STORE of
OUT). A fetch unit hands instructions out in stream order, taking no time, into one
command queue per module of COMMAND_QUEUE_DEPTH entries; when the queue an instruction
belongs to is full, fetch waits, and so do all instructions behind it. An instruction
leaves its queue when its module starts it. Four token queues order the modules:
load->compute (push_next of a load instruction, pop_prev of a compute one),
compute->load (push_prev / pop_next), compute->store (push_next / pop_prev) and
store->compute (push_prev / pop_next). The k-th pop on a queue takes the token of the
k-th push on it; a token is pushed when its instruction ends.

Instruction i of module m starts at max(the end of m's previous instruction, the cycle
fetch put it in m's queue, the end of each instruction whose token it pops), and runs:

| instruction        | cycles                                                              |
|--------------------|---------------------------------------------------------------------|
| LOAD, STORE        | DMA_LATENCY_CYCLES + ceil(bytes / DMA_BYTES_PER_CYCLE)               |
| GEMM               | iter_out * iter_in * (uop_end - uop_begin) * GEMM_INITIATION_INTERVAL  |
|                    | + GEMM_PIPELINE_CYCLES                                              |
| ALU                | the same with ALU_INITIATION_INTERVAL + ALU_PIPELINE_CYCLES          |
| FINISH, DMA no-op  | 1 (a LOAD/STORE with x_size 0 moves nothing, as VTA's runtime's no-ops) |

A LOAD's bytes are all the elements it writes into its buffer, padding included: the
load unit writes a zero element at the rate it writes a fetched one, so padding costs
time but no DRAM traffic. A STORE's bytes are the output elements it writes.

`plan` checks one instruction on its own (module, flags, buffer and DRAM ranges, that
it encodes) and gives its cost and tokens; `schedule` computes every start and end or
raises a `DeadlockError` naming each blocked instruction and what it waits for;
`check_tokens` refuses a token queue holding more than TOKEN_QUEUE_DEPTH tokens and
tokens nobody pops by the end of the stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum, IntEnum

import numpy as np
from tilecraft.backends.accel.dram import Dram, elem_bytes
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
    encode,
)
from tilecraft.backends.accel.machine import (
    BUFFER_NAMES,
    BufferOverflowError,
    DeadlockError,
    DramRangeError,
    SimulationError,
    TokenError,
    UnsupportedError,
    buffer_depth,
    format_insn,
)
from tilecraft.backends.accel.spec import AccelSpec

GEMM_PIPELINE_CYCLES = 4  # fill/drain of the GEMM pipeline, once per instruction
ALU_PIPELINE_CYCLES = 4
SINGLE_CYCLE = 1  # FINISH, and a LOAD/STORE with x_size 0


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


# -- the plan of each instruction (static checks, module, cost, tokens) ---------------------
@dataclass
class Plan:
    module: Module
    cycles: int
    pops: list[TokenQueue]
    pushes: list[TokenQueue]
    kind: str


def _check_enums(index: int, insn: Instruction) -> None:
    """Enum fields given as plain integers must name a value (encode takes any that fit)."""
    for name, enum in (("memory_type", MemoryType), ("alu_opcode", AluOpcode)):
        value = getattr(insn, name, None)
        if value is not None and value not in enum._value2member_map_:
            raise UnsupportedError(f"field {name}: {value!r} is not a valid {enum.__name__}", index, insn)


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


def plan(index: int, insn: Instruction, spec: AccelSpec, dram: Dram) -> Plan:
    """Check `insn` (stream index `index`) on its own and give its module, cost and tokens."""
    _check_enums(index, insn)
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
        return Plan(module, _check_memory(index, insn, spec, dram), pops, pushes, _kind(insn))
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
        return Plan(module, cycles, pops, pushes, _kind(insn))
    return Plan(module, SINGLE_CYCLE, pops, pushes, _kind(insn))


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
    depth = buffer_depth(memory_type, spec)
    if insn.sram_base + elements > depth:
        raise BufferOverflowError(
            f"field sram_base: elements [{insn.sram_base}, {insn.sram_base + elements}) "
            f"((y_pad_0 + y_size + y_pad_1) x (x_pad_0 + x_size + x_pad_1) = {y_total} x {x_total} "
            f"from sram_base {insn.sram_base}) pass the {BUFFER_NAMES[memory_type]} buffer's depth {depth}",
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


# -- timing --------------------------------------------------------------------------------
@dataclass
class Schedule:
    dispatch: list[int]
    start: list[int]
    end: list[int]
    pushers: dict[TokenQueue, list[int]]  # pushing instructions of each queue, in order
    poppers: dict[TokenQueue, list[int]]


def schedule(insns: list[Instruction], plans: list[Plan], spec: AccelSpec) -> Schedule:
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
    return Schedule(dispatch, start, end, pushers, poppers)


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


def check_tokens(insns: list[Instruction], schedule: Schedule, spec: AccelSpec) -> None:
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
