"""Accel IR <-> the machine's instruction list: what the binary, the simulator and the
disassembler share.

`program_from_ir(op)` turns a flag-level `accel.program` into a `Program`: the `isa`
instructions in stream order, the micro-op kernels with their DRAM placement and the
DRAM buffer table. `program_to_ir(program)` is the inverse (the disassembler's second
half): every instruction becomes one op, micro-op ranges stay explicit (`uops(b, e)`),
kernels keep their DRAM address, so encoding the result again gives the same bytes.

Micro-op kernels
----------------
A kernel is placed in DRAM once: at its `dram(d)` when the IR pins it, else after
everything the IR places (buffers and pinned kernels), in IR order. A GEMM/ALU that names
a kernel (`@k`) gets a `LOAD uop` before it unless the kernel is still resident in the
uop buffer: `UopResidency` is that small cache. It allocates uop-buffer slots as a ring
(the next free slot after the last kernel loaded, back to 0 when the kernel would pass
the end), evicting the kernels it overwrites; an explicit `accel.load uop` evicts what it
overwrites too. The compute module runs its instructions in order, so reloading slots
that an earlier GEMM read is safe. The same model tells which micro-ops a GEMM with an
explicit range runs, so its index ranges can be checked (`check_micro_op_loop`).

`spec_of(program_op)` reads a program's spec and `instruction_of(op)` gives the `isa`
instruction of one op; `format_asm(program)` is the objdump-like listing behind
`--emit=accel-asm`.

A token-level program is lowered first: `LowerAccelTokensPass().apply(ctx, module)`,
then `verify_module(module)` and `program_from_ir(find_program(module))` (what
`tilecraft-translate --emit=accel-bin` does).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from tilecraft.backends.accel import isa
from tilecraft.backends.accel.spec import (
    AccelSpec,
    SpecError,
    default_spec,
    load_spec,
    spec_from_dict,
)
from tilecraft.utils.diagnostics import OpError
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.utils.exceptions import DiagnosticException

UOP_BYTES = isa.UOP_BITS // 8


@dataclass(frozen=True)
class Kernel:
    """A micro-op kernel placed at `dram_base` (uop elements, 4 bytes each)."""

    name: str
    dram_base: int
    uops: tuple[isa.MicroOp, ...]

    @property
    def byte_address(self) -> int:
        return self.dram_base * UOP_BYTES

    @property
    def nbytes(self) -> int:
        return len(self.uops) * UOP_BYTES


@dataclass(frozen=True)
class Buffer:
    """A DRAM region of `elems` elements of `memory_type` at element address `dram_base`."""

    name: str
    memory_type: isa.MemoryType
    dram_base: int
    elems: int

    def elem_bytes(self, spec: AccelSpec) -> int:
        return elem_bytes(self.memory_type, spec)

    def byte_address(self, spec: AccelSpec) -> int:
        return self.dram_base * self.elem_bytes(spec)

    def nbytes(self, spec: AccelSpec) -> int:
        return self.elems * self.elem_bytes(spec)


def elem_bytes(memory_type: isa.MemoryType, spec: AccelSpec) -> int:
    """Bytes of one DRAM element of a memory type (what dram_base and x_stride count)."""
    return {
        isa.MemoryType.UOP: spec.uop_elem_bytes,
        isa.MemoryType.INP: spec.inp_elem_bytes,
        isa.MemoryType.WGT: spec.wgt_elem_bytes,
        isa.MemoryType.ACC: spec.acc_elem_bytes,
        isa.MemoryType.OUT: spec.out_elem_bytes,
        isa.MemoryType.ACC_8BIT: spec.batch * spec.block,
    }[memory_type]


@dataclass
class Program:
    """One instruction stream with what it needs in DRAM."""

    name: str
    spec: AccelSpec
    instructions: list[isa.Instruction]
    kernels: list[Kernel] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=list)

    def uop_segments(self) -> list[tuple[int, bytes]]:
        """(byte address, encoded micro-ops) of each kernel: what goes into DRAM."""
        return [(k.byte_address, isa.encode_uops(list(k.uops), self.spec)) for k in self.kernels]

    def dram_bytes(self) -> int:
        """The end of the highest region the program places (kernels and buffers)."""
        ends = [k.byte_address + k.nbytes for k in self.kernels]
        ends += [b.byte_address(self.spec) + b.nbytes(self.spec) for b in self.buffers]
        return max(ends, default=0)

    def buffer(self, name: str) -> Buffer:
        return next(b for b in self.buffers if b.name == name)


# -- ops -> isa ---------------------------------------------------------------------------
@functools.cache
def _spec_from_path(path: str) -> AccelSpec:
    return load_spec(path)


@functools.cache
def _spec_from_overrides(items: tuple[tuple[str, int], ...]) -> AccelSpec:
    return spec_from_dict({**default_spec().to_dict(), **dict(items)}, "accel.program spec")


def spec_of(program_op) -> AccelSpec:
    """The `AccelSpec` an `accel.program` names: VTA's default, a spec file's path, or a
    dictionary of keys overriding the default; `SpecError` if it is bad."""
    from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr

    attr = program_op.spec_attr
    if attr is None:
        return default_spec()
    if isinstance(attr, StringAttr):
        return _spec_from_path(attr.data)
    if isinstance(attr, DictionaryAttr):
        items = []
        for key, value in attr.data.items():
            if not isinstance(value, IntegerAttr):
                raise SpecError("accel.program spec", key, "expected an integer")
            items.append((key, value.value.data))
        return _spec_from_overrides(tuple(sorted(items)))
    raise SpecError("accel.program spec", None, "a path string or a {KEY = integer} dictionary")


def micro_op(indices: tuple[int, int, int]) -> isa.MicroOp:
    return isa.MicroOp(*indices)


def instruction_of(op, uop_begin: int | None = None, uop_end: int | None = None) -> isa.Instruction:
    """The `isa` instruction of an accel instruction op. A GEMM/ALU runs uop slots
    [uop_begin, uop_end): its own `uops(b, e)` unless given (a kernel placed by
    `program_from_ir`)."""
    from tilecraft.dialects.accel import AluOp, FinishOp, GemmOp, LoadOp, StoreOp

    flags = op.flag_values()
    if isinstance(op, (LoadOp, StoreOp)):
        cls = isa.Load if isinstance(op, LoadOp) else isa.Store
        return cls(memory_type=isa.MemoryType[op.mem.name], **op.fields(), **flags)
    if isinstance(op, FinishOp):
        return isa.Finish(**flags)
    if uop_begin is None:
        uop_begin, uop_end = op.uop_range()
    common = dict(reset=op.reset is not None, uop_begin=uop_begin, uop_end=uop_end, **op.loop_fields(), **flags)
    if isinstance(op, GemmOp):
        return isa.Gemm(**common, wgt_factor_out=op.field("wgt_factor_out"), wgt_factor_in=op.field("wgt_factor_in"))
    assert isinstance(op, AluOp)
    return isa.Alu(
        **common,
        alu_opcode=isa.AluOpcode[op.opcode.name],
        use_imm=op.imm is not None,
        imm=op.imm.data if op.imm is not None else 0,
    )


# -- the uop buffer ------------------------------------------------------------------------
class UopResidency:
    """What the uop buffer holds as the compute module runs the stream (see module doc)."""

    def __init__(self, spec: AccelSpec, dram_uops: dict[int, isa.MicroOp]):
        self.depth = spec.uop_depth
        self.dram_uops = dram_uops  # uop element address -> micro-op of a placed kernel
        self.slots: dict[int, isa.MicroOp] = {}
        self.resident: dict[str, int] = {}  # kernel name -> first slot
        self.sizes: dict[str, int] = {}
        self.next = 0

    def _evict(self, begin: int, end: int) -> None:
        for name, first in list(self.resident.items()):
            if first < end and begin < first + self.sizes[name]:
                del self.resident[name]

    def load(self, insn: isa.Load) -> None:
        """An explicit LOAD uop: slots take the micro-ops at the DRAM addresses read."""
        rows, cols = insn.y_size, insn.x_size
        self._evict(insn.sram_base, insn.sram_base + rows * cols)
        for r in range(rows):
            for c in range(cols):
                slot, address = insn.sram_base + r * cols + c, insn.dram_base + r * insn.x_stride + c
                uop = self.dram_uops.get(address)
                if uop is None:
                    self.slots.pop(slot, None)
                else:
                    self.slots[slot] = uop

    def ensure(self, kernel: Kernel) -> tuple[int, isa.Load | None]:
        """The first slot of `kernel` in the uop buffer, and the LOAD that puts it there
        (None when it is resident already)."""
        if kernel.name in self.resident:
            return self.resident[kernel.name], None
        size = len(kernel.uops)
        begin = self.next if self.next + size <= self.depth else 0
        load = isa.Load(
            memory_type=isa.MemoryType.UOP,
            sram_base=begin,
            dram_base=kernel.dram_base,
            y_size=1,
            x_size=size,
            x_stride=size,
        )
        self.load(load)
        self.resident[kernel.name], self.sizes[kernel.name] = begin, size
        self.next = begin + size
        return begin, load

    def uops(self, begin: int, end: int) -> list[isa.MicroOp] | int:
        """The micro-ops in slots [begin, end), or the first slot holding none known."""
        found = []
        for slot in range(begin, end):
            if slot not in self.slots:
                return slot
            found.append(self.slots[slot])
        return found


def check_micro_op_loop(op, insn: isa.Gemm | isa.Alu, uops: list[isa.MicroOp], spec: AccelSpec) -> None:
    """The largest index a GEMM/ALU reaches in each buffer stays below its depth."""
    last_out, last_in = insn.iter_out - 1, insn.iter_in - 1
    is_gemm = isinstance(insn, isa.Gemm)
    checks = [("dst", "acc", spec.acc_depth, max(u.dst_idx for u in uops), insn.dst_factor_out, insn.dst_factor_in)]
    if is_gemm or not insn.use_imm:
        src_buffer, src_depth = ("inp", spec.inp_depth) if is_gemm else ("acc", spec.acc_depth)
        checks.append(("src", src_buffer, src_depth, max(u.src_idx for u in uops), insn.src_factor_out, insn.src_factor_in))
    if is_gemm:
        checks.append(("wgt", "wgt", spec.wgt_depth, max(u.wgt_idx for u in uops), insn.wgt_factor_out, insn.wgt_factor_in))
    for index, buffer, depth, base, factor_out, factor_in in checks:
        reach = base + last_out * factor_out + last_in * factor_in
        if reach >= depth:
            raise OpError(
                op,
                f"'{op.name}' op: the {index} index reaches {reach} (micro-op {index} up to {base}, "
                f"+ {last_out} x {factor_out} + {last_in} x {factor_in}), past the {buffer} buffer's "
                f"depth {depth}.",
            )


# -- IR -> Program ----------------------------------------------------------------------------
def place_kernels(program_op) -> dict[str, int]:
    """Every kernel's DRAM address (uop elements): pinned ones where they are, the others
    after all pinned regions, in IR order."""
    from tilecraft.dialects.accel import BufferOp, UopKernelOp

    spec = spec_of(program_op)
    end = 0
    placement: dict[str, int] = {}
    for op in program_op.body.block.ops:
        if isinstance(op, BufferOp):
            size = elem_bytes(isa.MemoryType[op.mem.name], spec)
            end = max(end, (op.dram_base.data + op.elems.data) * size)
        elif isinstance(op, UopKernelOp) and op.dram_base is not None:
            placement[op.sym_name.data] = op.dram_base.data
            end = max(end, (op.dram_base.data + len(op.uops())) * UOP_BYTES)
    next_free = -(-end // UOP_BYTES)
    for op in program_op.body.block.ops:
        if isinstance(op, UopKernelOp) and op.dram_base is None:
            placement[op.sym_name.data] = next_free
            next_free += len(op.uops())
    return placement


def program_from_ir(program_op, *, require_flags: bool = True) -> Program:
    """The `Program` of a verified, flag-level `accel.program` (`OpError` on an op the
    machine cannot run: a token between modules left, an index range past a buffer)."""
    from tilecraft.dialects.accel import (
        AluOp,
        BufferOp,
        GemmOp,
        InstructionOp,
        LoadOp,
        MemoryType,
        UopKernelOp,
    )

    spec = spec_of(program_op)
    placement = place_kernels(program_op)
    kernels: dict[str, Kernel] = {}
    buffers: list[Buffer] = []
    for op in program_op.body.block.ops:
        if isinstance(op, UopKernelOp):
            name = op.sym_name.data
            kernels[name] = Kernel(name, placement[name], tuple(micro_op(u) for u in op.uops()))
        elif isinstance(op, BufferOp):
            buffers.append(Buffer(op.sym_name.data, isa.MemoryType[op.mem.name], op.dram_base.data, op.elems.data))
    dram_uops = {k.dram_base + i: uop for k in kernels.values() for i, uop in enumerate(k.uops)}
    residency = UopResidency(spec, dram_uops)
    instructions: list[isa.Instruction] = []
    for op in program_op.body.block.ops:
        if not isinstance(op, InstructionOp):
            continue
        if require_flags:
            for dep in op.deps:
                producer = dep.owner
                if isinstance(producer, InstructionOp) and producer.unit != op.unit:
                    raise OpError(
                        op,
                        f"'{op.name}' op: waits on a token from the {producer.unit.name.lower()} module; "
                        "run lower-accel-tokens to turn tokens into dependence flags first",
                    )
        if isinstance(op, (GemmOp, AluOp)):
            if op.kernel is not None:
                kernel = kernels.get(op.kernel.data)
                if kernel is None:
                    raise OpError(op, f"'{op.name}' op: no accel.uop_kernel @{op.kernel.data} in this program.")
                if len(kernel.uops) > spec.uop_depth:
                    raise OpError(
                        op,
                        f"'{op.name}' op: kernel @{kernel.name} has {len(kernel.uops)} micro-ops; "
                        f"the uop buffer holds {spec.uop_depth}.",
                    )
                begin, load = residency.ensure(kernel)
                if load is not None:
                    instructions.append(load)
                insn = instruction_of(op, begin, begin + len(kernel.uops))
                uops: list[isa.MicroOp] | int = list(kernel.uops)
            else:
                begin, end = op.uop_range()
                insn = instruction_of(op)
                uops = residency.uops(begin, end)
                if isinstance(uops, int):
                    raise OpError(
                        op,
                        f"'{op.name}' op: uop slot {uops} holds no micro-op of a placed kernel here; "
                        "load a kernel there first (accel.load uop ... from its dram address).",
                    )
            check_micro_op_loop(op, insn, uops, spec)
        else:
            insn = instruction_of(op)
            if isinstance(op, LoadOp) and op.mem == MemoryType.UOP:
                residency.load(insn)
        instructions.append(insn)
    return Program(program_op.sym_name.data, spec, instructions, list(kernels.values()), buffers)


def find_program(module: ModuleOp, name: str | None = None):
    """The one `accel.program` in a module (or the one called `name`)."""
    from tilecraft.dialects.accel import ProgramOp

    programs = [op for op in module.walk() if isinstance(op, ProgramOp)]
    if name is not None:
        programs = [p for p in programs if p.sym_name.data == name]
    if len(programs) != 1:
        what = f"accel.program @{name}" if name else "accel.program"
        found = "none" if not programs else f"{len(programs)}"
        raise ProgramNotFoundError(f"expected one {what} in the input, found {found}")
    return programs[0]


class ProgramNotFoundError(DiagnosticException):
    """`find_program` found no accel.program, or several."""


# -- Program -> IR (the disassembler) -------------------------------------------------------------
def spec_attribute(spec: AccelSpec) -> DictionaryAttr | None:
    """The keys where `spec` differs from VTA's default, as `accel.program`'s spec."""
    default = default_spec().to_dict()
    changed = {k: v for k, v in spec.to_dict().items() if default[k] != v}
    if not changed:
        return None
    return DictionaryAttr({k: IntegerAttr(v, i64) for k, v in changed.items()})


def program_to_ir(program: Program):
    """An `accel.program` that encodes to exactly `program` (kernels pinned, uop ranges
    and uop loads explicit, flags as flags)."""
    from tilecraft.dialects.accel import (
        AluOp,
        BufferOp,
        FinishOp,
        GemmOp,
        LoadOp,
        MemoryType,
        ProgramOp,
        StoreOp,
        UopKernelOp,
    )

    program_op = ProgramOp(program.name, spec=spec_attribute(program.spec))
    block = program_op.body.block
    for buffer in program.buffers:
        block.add_op(BufferOp(buffer.name, MemoryType[buffer.memory_type.name], buffer.dram_base, buffer.elems))
    for kernel in program.kernels:
        uops = [(u.dst_idx, u.src_idx, u.wgt_idx) for u in kernel.uops]
        block.add_op(UopKernelOp(kernel.name, uops, dram_base=kernel.dram_base))
    for index, insn in enumerate(program.instructions):
        flags = [name for name in ("pop_prev", "pop_next", "push_prev", "push_next") if getattr(insn, name)]
        if isinstance(insn, (isa.Load, isa.Store)):
            cls = LoadOp if isinstance(insn, isa.Load) else StoreOp
            op = cls(
                MemoryType[insn.memory_type.name],
                sram_base=insn.sram_base,
                dram_base=insn.dram_base,
                y_size=insn.y_size,
                x_size=insn.x_size,
                x_stride=insn.x_stride,
                pads=(insn.y_pad_0, insn.y_pad_1, insn.x_pad_0, insn.x_pad_1),
                flags=flags,
            )
        elif isinstance(insn, isa.Gemm):
            op = GemmOp(
                uops=(insn.uop_begin, insn.uop_end),
                iter_out=insn.iter_out,
                iter_in=insn.iter_in,
                dst=(insn.dst_factor_out, insn.dst_factor_in),
                src=(insn.src_factor_out, insn.src_factor_in),
                wgt=(insn.wgt_factor_out, insn.wgt_factor_in),
                reset=insn.reset,
                flags=flags,
            )
        elif isinstance(insn, isa.Alu):
            if not insn.use_imm and insn.imm != 0:
                raise isa.EncodingError(
                    f"ALU instruction {index}: imm is {insn.imm} but use_imm "
                    "is 0; accel IR cannot say that"
                )
            op = AluOp(
                insn.alu_opcode.name.lower(),
                imm=insn.imm if insn.use_imm else None,
                uops=(insn.uop_begin, insn.uop_end),
                iter_out=insn.iter_out,
                iter_in=insn.iter_in,
                dst=(insn.dst_factor_out, insn.dst_factor_in),
                src=(insn.src_factor_out, insn.src_factor_in),
                reset=insn.reset,
                flags=flags,
            )
        else:
            op = FinishOp(flags=flags)
        block.add_op(op)
    return program_op


# -- the listing -------------------------------------------------------------------------------
_FLAG_NAMES = ("pop_prev", "pop_next", "push_prev", "push_next")


def describe(insn: isa.Instruction) -> str:
    """One instruction as `MNEMONIC field=value ... [flags]` (no address, no word)."""
    if isinstance(insn, (isa.Load, isa.Store)):
        text = (
            f"{'LOAD' if isinstance(insn, isa.Load) else 'STORE'} {insn.memory_type.name.lower()} "
            f"sram={insn.sram_base} dram={insn.dram_base} y={insn.y_size} x={insn.x_size} "
            f"stride={insn.x_stride}"
        )
        pads = (insn.y_pad_0, insn.y_pad_1, insn.x_pad_0, insn.x_pad_1)
        if any(pads):
            text += " pad={},{},{},{}".format(*pads)
    elif isinstance(insn, (isa.Gemm, isa.Alu)):
        if isinstance(insn, isa.Gemm):
            text = "GEMM"
        else:
            text = f"ALU {insn.alu_opcode.name.lower()}" + (f" imm={insn.imm}" if insn.use_imm else "")
        if insn.reset:
            text += " reset"
        text += (
            f" uops=[{insn.uop_begin},{insn.uop_end}) out={insn.iter_out} in={insn.iter_in}"
            f" dst={insn.dst_factor_out},{insn.dst_factor_in} src={insn.src_factor_out},{insn.src_factor_in}"
        )
        if isinstance(insn, isa.Gemm):
            text += f" wgt={insn.wgt_factor_out},{insn.wgt_factor_in}"
    else:
        text = "FINISH"
    flags = [name for name in _FLAG_NAMES if getattr(insn, name)]
    return text + (f"  [{' '.join(flags)}]" if flags else "")


def format_asm(program: Program) -> str:
    """objdump-style: a header of comments (spec, DRAM table), then per instruction its
    index, its 128-bit word in hex (most significant digit first) and its fields."""
    spec = program.spec
    n_uops = sum(len(k.uops) for k in program.kernels)
    lines = [
        f"; accel program @{program.name}: {len(program.instructions)} instructions, {n_uops} micro-ops",
        (
            f"; spec: BATCH {spec.batch}, BLOCK {spec.block}, widths inp {spec.inp_width} "
            f"wgt {spec.wgt_width} acc {spec.acc_width}; depths uop {spec.uop_depth} inp {spec.inp_depth} "
            f"wgt {spec.wgt_depth} acc {spec.acc_depth}"
        ),
    ]
    for buffer in program.buffers:
        lines.append(
            f"; buffer @{buffer.name} {buffer.memory_type.name.lower()} bytes "
            f"[{buffer.byte_address(spec):#x}, {buffer.byte_address(spec) + buffer.nbytes(spec):#x})"
        )
    for kernel in program.kernels:
        lines.append(
            f"; kernel @{kernel.name} bytes [{kernel.byte_address:#x}, {kernel.byte_address + kernel.nbytes:#x}): "
            + " ".join(f"({u.dst_idx},{u.src_idx},{u.wgt_idx})" for u in kernel.uops)
        )
    width = len(str(max(len(program.instructions) - 1, 0)))
    for index, insn in enumerate(program.instructions):
        word = isa.encode(insn, spec)
        lines.append(f"{index:>{width}}: {word:032x}  {describe(insn)}")
    return "\n".join(lines) + "\n"


def _install() -> None:
    """Give the accel dialect what it cannot import itself (the dialects layer sits below
    this backend): the spec reader behind `ProgramOp.spec` and the program verifier
    (`verify.check_program`). Whatever builds or reads accel IR imports this module."""
    from tilecraft.backends.accel import verify  # noqa: F401  (registers check_program)
    from tilecraft.dialects.accel import register_spec_reader

    register_spec_reader(spec_of)


_install()
