"""The accelerator's on-chip state and the data effect of each instruction, bit-exact.

`Machine` holds the SRAM buffers (`Buffers`) and runs one instruction's data effect
against a `dram.Dram`; the simulator calls it in simulated start order. Semantics
(checked against VTA's functional simulator, `sim_driver.cc`):

- LOAD copies y_size rows of x_size elements, x_stride elements apart in DRAM, into the
  buffer from sram_base, with y_pad_0/y_pad_1 rows and x_pad_0/x_pad_1 elements of zeros
  around them (row length x_pad_0 + x_size + x_pad_1). ACC_8BIT elements are BATCH x
  BLOCK values of input width, sign-extended into the accumulator. x_size 0: nothing.
- GEMM runs, for i < iter_out, j < iter_in, micro-op k in [uop_begin, uop_end):
  dst = uop[k].dst_idx + i*dst_factor_out + j*dst_factor_in (src, wgt alike) and
  acc[dst] += inp[src] (BATCH x BLOCK_IN) times wgt[wgt]^T (BLOCK_IN x BLOCK_OUT) in
  integers wrapped to the accumulator width, or acc[dst] = 0 with `reset`.
- ALU computes acc[dst] = op(acc[dst], imm or acc[src]) per value, wrapped to the
  accumulator width: MIN, MAX, ADD, MUL, and SHR, an arithmetic right shift whose
  negative amount shifts left (VTA); a shift by the width or more gives the sign
  (right) or 0 (left), where VTA's C++ is undefined.
- GEMM and ALU also write each result's low out-width bits to the output buffer at the
  same index; STORE copies the output buffer to DRAM (no padding). This is the
  hardware's output buffer. VTA's functional simulator has none: its STORE truncates
  the accumulator, so there a STORE right after a LOAD ACC works; here it reads an
  output element nothing has written, an error.

Checks, each a `SimulationError` naming the instruction and field: an index past a
buffer's depth; reading an element nothing has written (padding counts as written);
and races: an instruction of one module touching buffer elements an instruction of
another module is still writing (or still reading, when it writes) in simulated time,
which means a dependence token is missing. Only the input and weight buffers (load ->
compute) and the output buffer (compute -> store) are shared between modules.

Speed: a GEMM gathers its (dst, src, wgt) indices for up to 2^16 steps at a time and
does one batched product (float32 or float64 where that is exact at the spec's widths,
int64 otherwise) and one `np.add.at`; an ALU chunk is one vector op when its
destinations are distinct and no step reads what an earlier step of it wrote, else it
runs step by step.

Where VTA's functional simulator differs, besides the output buffer above: it aborts
(CHECK) on a STORE with padding, an index past a buffer and an unknown memory type,
and never notices uninitialized reads or races; it counts FINISH and goes on, where
here a FINISH must end the stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    Finish,
    Gemm,
    Instruction,
    Load,
    MemoryType,
    Store,
    layouts,
)
from tilecraft.backends.accel.spec import AccelSpec
from xdsl.utils.exceptions import DiagnosticException

if TYPE_CHECKING:
    from tilecraft.backends.accel.simulator import SimStats

_CHUNK = 1 << 16  # GEMM/ALU steps handled at once (bounds the index arrays and temporaries)
BUFFER_NAMES = {
    MemoryType.UOP: "micro-op",
    MemoryType.INP: "input",
    MemoryType.WGT: "weight",
    MemoryType.ACC: "accumulator",
    MemoryType.ACC_8BIT: "accumulator",
    MemoryType.OUT: "output",
}


def buffer_depth(memory_type: MemoryType, spec: AccelSpec) -> int:
    """Elements in the buffer a memory type loads into or stores from."""
    return {
        MemoryType.UOP: spec.uop_depth,
        MemoryType.INP: spec.inp_depth,
        MemoryType.WGT: spec.wgt_depth,
        MemoryType.ACC: spec.acc_depth,
        MemoryType.ACC_8BIT: spec.acc_depth,
        MemoryType.OUT: spec.out_depth,
    }[memory_type]


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


class RaceError(SimulationError):
    """Two modules touch the same buffer elements at once: a dependence token is missing."""


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


class _Accesses:
    """For each element of a buffer two modules share: until which cycle, and by which
    instruction, it was last being written and last being read."""

    def __init__(self, depth: int):
        self.write_end = np.zeros(depth, np.int64)
        self.write_insn = np.zeros(depth, np.int64)
        self.read_end = np.zeros(depth, np.int64)
        self.read_insn = np.zeros(depth, np.int64)


class Machine:
    """The buffers, and the data effect of one instruction at a time (`run`), called in
    simulated start order with each instruction's start and end cycle."""

    def __init__(self, spec: AccelSpec, dram: Dram, stats: SimStats, insns: list[Instruction]):
        self.spec = spec
        self.dram = dram
        self.stats = stats
        self.insns = insns
        self.buffers = Buffers(spec)
        # the buffers one module writes and another reads: input and weight (load ->
        # compute), output (compute -> store); the others belong to the compute module
        self.accesses = {t: _Accesses(buffer_depth(t, spec)) for t in (MemoryType.INP, MemoryType.WGT, MemoryType.OUT)}
        self.start = self.end = 0

    def run(self, index: int, insn: Instruction, start: int, end: int) -> None:
        self.start, self.end = start, end
        if isinstance(insn, Load):
            self.load(index, insn)
        elif isinstance(insn, Store):
            self.store(index, insn)
        elif isinstance(insn, Gemm):
            self.gemm(index, insn)
        elif isinstance(insn, Alu):
            self.alu(index, insn)

    def _touch(self, index: int, insn: Instruction, memory_type: MemoryType, idx, write: bool, what: str) -> None:
        """Record that `insn` (running [self.start, self.end)) reads or writes elements
        `idx` (an index array or a slice); a `RaceError` if another module's instruction
        is still writing them, or still reading them when this one writes."""
        accesses = self.accesses.get(memory_type)
        if accesses is None:
            return
        conflicts = [("writing", accesses.write_end, accesses.write_insn)]
        if write:
            conflicts.append(("reading", accesses.read_end, accesses.read_insn))
        for doing, until, by in conflicts:
            busy = (until[idx] > self.start) & (by[idx] != index)  # this instruction's own chunks do not race
            if busy.any():
                element = int(np.arange(until.size)[idx][int(np.argmax(busy))])
                other = int(by[element])
                raise RaceError(
                    f"{what}: {'writes' if write else 'reads'} {BUFFER_NAMES[memory_type]} element {element} at "
                    f"cycle {self.start} while insn #{other} `{format_insn(self.insns[other])}` is still {doing} it "
                    f"(until cycle {int(until[element])}): a dependence token between them is missing",
                    index,
                    insn,
                )
        if write:
            accesses.write_end[idx] = self.end
            accesses.write_insn[idx] = index
        else:
            later = accesses.read_end[idx] < self.end
            chosen = np.arange(accesses.read_end.size)[idx][later]
            accesses.read_end[chosen] = self.end
            accesses.read_insn[chosen] = index

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
        self._touch(index, insn, target_type, slice(first, stop), True, "field sram_base")
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
        self._check_written(index, insn, MemoryType.OUT, np.arange(first, first + count), "field sram_base")
        self._touch(index, insn, MemoryType.OUT, slice(first, first + count), False, "field sram_base")
        size = elem_bytes(MemoryType.OUT, spec)
        raw = pack_values(wrap_signed(b.out[first : first + count], spec.out_width), spec.out_width)
        self.dram.data[self._dram_bytes(insn, size)] = raw.reshape(insn.y_size, insn.x_size * size)
        self.stats.bytes_stored["out"] += raw.size

    # -- micro-op loops ----------------------------------------------------------------------
    def _factors(self, insn: Gemm | Alu, name: str) -> tuple[np.ndarray, int, int]:
        b = self.buffers
        uop_field = {"dst": b.uop_dst, "src": b.uop_src, "wgt": b.uop_wgt}[name]
        out_factor, in_factor = getattr(insn, f"{name}_factor_out"), getattr(insn, f"{name}_factor_in")
        return uop_field[insn.uop_begin : insn.uop_end], out_factor, in_factor

    def _check_bounds(self, index: int, insn: Gemm | Alu, name: str, depth: int, buffer: str) -> None:
        """The largest `name` (dst/src/wgt) index of the loop must be inside its buffer."""
        if insn.iter_out * insn.iter_in * (insn.uop_end - insn.uop_begin) == 0:
            return
        base, out_factor, in_factor = self._factors(insn, name)
        k = int(np.argmax(base))
        i, j = insn.iter_out - 1, insn.iter_in - 1
        top = int(base[k]) + i * out_factor + j * in_factor
        if top >= depth:
            raise BufferOverflowError(
                f"field {name}_factor_out/{name}_factor_in: {name} index {top} = micro-op {insn.uop_begin + k} "
                f"{name}_idx {int(base[k])} + i={i} x {out_factor} + j={j} x {in_factor} "
                f"is past the {buffer} buffer's depth {depth}",
                index,
                insn,
            )

    def _indices(self, insn: Gemm | Alu, name: str, first: int, stop: int) -> np.ndarray:
        """The `name` index of steps [first, stop) in execution order (i, then j, then k)."""
        base, out_factor, in_factor = self._factors(insn, name)
        steps = np.arange(first, stop, dtype=np.int64)
        loop, k = np.divmod(steps, base.size)
        i, j = np.divmod(loop, insn.iter_in)
        return base[k] + i * out_factor + j * in_factor

    def _check_written(self, index, insn, memory_type: MemoryType, idx: np.ndarray, what: str) -> None:
        written = self.buffers.written[memory_type]
        ok = written[idx]
        if not ok.all():
            step = int(np.argmin(ok))
            raise UninitializedReadError(
                f"{what}: reads {BUFFER_NAMES[memory_type]} element {int(idx[step])}, which nothing has written",
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
        self._check_bounds(index, insn, "dst", spec.acc_depth, "accumulator")
        if not insn.reset:
            self._check_bounds(index, insn, "src", spec.inp_depth, "input")
            self._check_bounds(index, insn, "wgt", spec.wgt_depth, "weight")
        touched = np.zeros(spec.acc_depth, bool)
        for first in range(0, steps, _CHUNK):
            stop = min(first + _CHUNK, steps)
            dst = self._indices(insn, "dst", first, stop)
            self._touch(index, insn, MemoryType.OUT, dst, True, "dst")
            touched[dst] = True
            if insn.reset:
                b.acc[dst] = 0
                b.written[MemoryType.ACC][dst] = True
                continue
            src = self._indices(insn, "src", first, stop)
            wgt = self._indices(insn, "wgt", first, stop)
            self._check_written(index, insn, MemoryType.ACC, dst, "dst")
            self._check_written(index, insn, MemoryType.INP, src, "src")
            self._check_written(index, insn, MemoryType.WGT, wgt, "wgt")
            self._touch(index, insn, MemoryType.INP, src, False, "src")
            self._touch(index, insn, MemoryType.WGT, wgt, False, "wgt")
            products = np.einsum("nbk,nok->nbo", b.inp[src], b.wgt[wgt])
            np.add.at(b.acc, dst, products.astype(np.int64))
        touched = np.flatnonzero(touched)
        b.acc[touched] = wrap_signed(b.acc[touched], spec.acc_width)
        b.out[touched] = wrap_signed(b.acc[touched], spec.out_width)
        b.written[MemoryType.OUT][touched] = True
        if not insn.reset:
            self.stats.gemm_ops += steps
            self.stats.macs += steps * spec.macs_per_cycle

    def alu(self, index: int, insn: Alu) -> None:
        spec, b = self.spec, self.buffers
        steps = self._steps(index, insn)
        self._check_bounds(index, insn, "dst", spec.acc_depth, "accumulator")
        if not insn.use_imm:
            self._check_bounds(index, insn, "src", spec.acc_depth, "accumulator")
        op = _ALU_OPS[AluOpcode(insn.alu_opcode)]
        for first in range(0, steps, _CHUNK):
            stop = min(first + _CHUNK, steps)
            dst = self._indices(insn, "dst", first, stop)
            self._check_written(index, insn, MemoryType.ACC, dst, "dst")
            src = None if insn.use_imm else self._indices(insn, "src", first, stop)
            if src is not None:
                self._check_written(index, insn, MemoryType.ACC, src, "src")
            self._touch(index, insn, MemoryType.OUT, dst, True, "dst")
            if _independent(dst, src, spec.acc_depth):
                operand = np.int64(insn.imm) if src is None else b.acc[src]
                result = wrap_signed(op(b.acc[dst], operand), spec.acc_width)
                b.acc[dst] = result
                b.out[dst] = wrap_signed(result, spec.out_width)
            else:  # a step reads what an earlier one wrote: run them in order
                for t in range(dst.size):
                    d = dst[t]
                    value = np.int64(insn.imm) if src is None else b.acc[src[t]]
                    b.acc[d] = wrap_signed(op(b.acc[d], value), spec.acc_width)
                    b.out[d] = wrap_signed(b.acc[d], spec.out_width)
            b.written[MemoryType.OUT][dst] = True
        self.stats.alu_ops += steps


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
