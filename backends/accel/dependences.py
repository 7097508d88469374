"""Dependence tokens for an instruction stream, from what each instruction touches.

The load, compute and store modules run their own instructions in order and
concurrently; the only order between two modules is a token (see isa.py: a push
after one instruction, a pop before another). This analysis finds the tokens a
stream needs, as the TVM paper's compiler does: every instruction's reads and
writes of the on-chip buffers (input, weight, accumulator, output, micro-op) are
element ranges; an instruction depends on an earlier instruction of another
module when one writes what the other reads (RAW), reads what the other then
overwrites (WAR), or both write it (WAW).

Tokens on one queue are counted, not named: the k-th pop waits for the k-th push.
So for each producer -> consumer queue, a consumer instruction needs the latest
producer instruction it depends on, and only when that is later than what the
consumer module already waited for, directly or through the third module (its
earlier instructions run first; a vector clock per module tracks this). Each such
new requirement is one push on that producer instruction and one pop on that
consumer instruction; needed producers strictly increase along the consumer's
order, so pushes and pops pair up in order and no instruction pushes or pops
twice on one queue. Every dependence points backwards in the stream, which is a
valid order of all three modules: the result cannot deadlock.

Load and store have no queue between them (VTA has none); a hazard between them
(a store of what a later load overwrites, say) is carried through compute when
both also depend on it, else it is an error naming both instructions.

`serial=True` makes every instruction depend on every earlier one of another
module joined to it by a queue (the ablation without latency hiding: compute and
the memory modules take turns).

LOADs of micro-ops take no part: only the compute module, which runs them in
order, reads the micro-op buffer (and the backend inserts them when it lays the
kernels out, so they carry no flags).

FINISH depends on everything before it (it writes every buffer, as far as this
analysis is concerned), so the stream ends only when all modules are done.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tilecraft.backends.accel.isa import (
    Alu,
    Finish,
    Gemm,
    Instruction,
    Load,
    MemoryType,
    MicroOp,
    Store,
)
from tilecraft.backends.accel.spec import AccelSpec
from xdsl.utils.exceptions import DiagnosticException

LOAD, COMPUTE, STORE = "load", "compute", "store"
MODULES = (LOAD, COMPUTE, STORE)

BUFFERS = ("uop", "inp", "wgt", "acc", "out")
_BUFFER_OF = {
    MemoryType.UOP: "uop", MemoryType.INP: "inp", MemoryType.WGT: "wgt",
    MemoryType.ACC: "acc", MemoryType.OUT: "out",
}  # fmt: skip


class DependenceError(DiagnosticException):
    """A hazard no token can order (between the load and store modules)."""


@dataclass(frozen=True)
class Range:
    buffer: str
    start: int
    stop: int  # exclusive

    def overlaps(self, other: Range) -> bool:
        return self.buffer == other.buffer and self.start < other.stop and other.start < self.stop


@dataclass(frozen=True)
class Footprint:
    module: str
    reads: tuple[Range, ...]
    writes: tuple[Range, ...]


def module_of(insn: Instruction) -> str:
    """Which module runs `insn` (VTA's assignment)."""
    if isinstance(insn, Load):
        return LOAD if insn.memory_type in (MemoryType.INP, MemoryType.WGT) else COMPUTE
    if isinstance(insn, Store):
        return STORE
    return COMPUTE


UopReader = Callable[[int, int], Sequence[MicroOp]]
"""read_uops(dram_base, count): the micro-ops a LOAD UOP brings from DRAM."""


def _span(buffer: str, indices: Sequence[int], size: int) -> tuple[Range, ...]:
    if not indices:
        return ()
    return (Range(buffer, min(indices), max(indices) + size),)


def _loop_indices(insn: Gemm | Alu, uops: Sequence[MicroOp], field: str, out_factor: int, in_factor: int) -> list[int]:
    bases = [getattr(u, field) for u in uops]
    return [
        b + i * out_factor + j * in_factor
        for i in (0, max(insn.iter_out - 1, 0))
        for j in (0, max(insn.iter_in - 1, 0))
        for b in bases
    ]  # index expressions are monotone in i and j: the corners bound them


def footprint(insn: Instruction, uop_buffer: Sequence[MicroOp | None], spec: AccelSpec) -> Footprint:
    """What `insn` reads and writes, as element ranges of the on-chip buffers
    (`uop_buffer`: the micro-op buffer's contents when it runs)."""
    module = module_of(insn)
    everything = tuple(Range(b, 0, 1 << 62) for b in BUFFERS)
    if isinstance(insn, Finish):
        return Footprint(module, everything, everything)
    if isinstance(insn, (Load, Store)):
        rows = insn.y_pad_0 + insn.y_size + insn.y_pad_1
        cols = insn.x_pad_0 + insn.x_size + insn.x_pad_1
        r = Range(_BUFFER_OF.get(insn.memory_type, "acc"), insn.sram_base, insn.sram_base + rows * cols)
        return Footprint(module, (r,), ()) if isinstance(insn, Store) else Footprint(module, (), (r,))
    if isinstance(insn, (Gemm, Alu)):
        uops = [u for u in uop_buffer[insn.uop_begin : insn.uop_end] if u is not None]
        reads = [Range("uop", insn.uop_begin, insn.uop_end)]
        dst = _loop_indices(insn, uops, "dst_idx", insn.dst_factor_out, insn.dst_factor_in)
        src = _loop_indices(insn, uops, "src_idx", insn.src_factor_out, insn.src_factor_in)
        writes = [*_span("acc", dst, 1), *_span("out", dst, 1)]
        if isinstance(insn, Gemm):
            wgt = _loop_indices(insn, uops, "wgt_idx", insn.wgt_factor_out, insn.wgt_factor_in)
            if not insn.reset:
                reads += [*_span("inp", src, 1), *_span("wgt", wgt, 1), *_span("acc", dst, 1)]
        else:
            reads += [*_span("acc", dst, 1)] + ([] if insn.use_imm else [*_span("acc", src, 1)])
        return Footprint(module, tuple(reads), tuple(writes))
    raise TypeError(f"not an instruction: {insn!r}")


def footprints(insns: Sequence[Instruction], read_uops: UopReader, spec: AccelSpec) -> list[Footprint]:
    """The footprint of each instruction, following the micro-op buffer's contents
    through the stream's LOAD UOPs."""
    uop_buffer: list[MicroOp | None] = [None] * spec.uop_depth
    found = []
    for insn in insns:
        found.append(footprint(insn, uop_buffer, spec))
        if isinstance(insn, Load) and insn.memory_type == MemoryType.UOP:
            count = insn.y_size * insn.x_size
            loaded = list(read_uops(insn.dram_base, count))
            for k, u in enumerate(loaded[:count]):
                if 0 <= insn.sram_base + k < len(uop_buffer):
                    uop_buffer[insn.sram_base + k] = u
    return found


def _conflict(a: Footprint, b: Footprint) -> bool:
    """Whether b (later) must wait for a (earlier)."""
    return (
        any(w.overlaps(r) for w in a.writes for r in b.reads)  # RAW
        or any(r.overlaps(w) for r in a.reads for w in b.writes)  # WAR
        or any(w.overlaps(v) for w in a.writes for v in b.writes)  # WAW
    )


# (producer, consumer) -> (producer's push flag, consumer's pop flag)
_QUEUES = {
    (LOAD, COMPUTE): ("push_next", "pop_prev"),
    (COMPUTE, LOAD): ("push_prev", "pop_next"),
    (COMPUTE, STORE): ("push_next", "pop_prev"),
    (STORE, COMPUTE): ("push_prev", "pop_next"),
}


def insert_dependences(
    insns: Sequence[Instruction], read_uops: UopReader, spec: AccelSpec, *, serial: bool = False
) -> list[Instruction]:
    """`insns` with the dependence flags that order every hazard between modules
    (existing flags are replaced)."""
    insns = [dataclasses.replace(i, pop_prev=False, pop_next=False, push_prev=False, push_next=False) for i in insns]
    prints = footprints(insns, read_uops, spec)
    # known[m][o]: the latest instruction of module o that module m has waited for,
    # directly or through another module; known_at[k]: that of k's module at k
    known = {m: dict.fromkeys(MODULES, -1) for m in MODULES}
    known_at: list[dict[str, int]] = []
    seen: dict[str, list[int]] = {m: [] for m in MODULES}
    flags: list[dict[str, bool]] = [{} for _ in insns]
    for k, fp in enumerate(prints):
        mine = known[fp.module]
        if _is_uop_load(insns[k]):
            known_at.append(dict(mine))
            continue  # only the compute module reads micro-ops: nothing to order across modules
        for other in MODULES:
            if other == fp.module:
                continue
            j = _latest_conflict(prints, seen[other], mine[other], fp, serial)
            if j is None:
                continue
            if (other, fp.module) not in _QUEUES:
                if serial:
                    continue  # serial: load and store take turns with compute, not with each other
                raise DependenceError(
                    f"instruction {k} ({_name(insns[k])}) depends on instruction {j} ({_name(insns[j])}) of "
                    f"the {other} module, and no queue joins the {other} and {fp.module} modules: "
                    "order them through a compute instruction"
                )
            push, pop = _QUEUES[(other, fp.module)]
            flags[j][push] = True
            flags[k][pop] = True
            for m, index in known_at[j].items():
                mine[m] = max(mine[m], index)
        mine[fp.module] = k
        known_at.append(dict(mine))
        seen[fp.module].append(k)
    return [dataclasses.replace(i, **f) if f else i for i, f in zip(insns, flags)]


def _latest_conflict(prints, indices: list[int], after: int, fp: Footprint, serial: bool) -> int | None:
    """The latest instruction among `indices` later than `after` that fp must wait for."""
    for j in reversed(indices):
        if j <= after:
            return None
        if serial or _conflict(prints[j], fp):
            return j
    return None


def _is_uop_load(insn: Instruction) -> bool:
    return isinstance(insn, Load) and insn.memory_type == MemoryType.UOP


def _name(insn: Instruction) -> str:
    return type(insn).__name__.upper()
