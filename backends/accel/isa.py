"""VTA's instruction set as plain dataclasses, with its 128-bit binary encoding.

Five instructions (`Load`, `Store`, `Gemm`, `Alu`, `Finish`) and the 32-bit `MicroOp`
that GEMM and ALU run. `encode(insn, spec)` gives the 128-bit word as a Python int,
`decode(word, spec)` the instruction back; `encode_stream`/`decode_stream` do the same
for bytes, each instruction 16 little-endian bytes (bit 0 is the lowest bit of the first
byte), as VTA's runtime writes them. Micro-ops: `encode_uop`, `decode_uop`, 4 bytes each.

Layout
------
VTA's `hw_spec.h` declares each instruction as C bit fields in two 64-bit words. The
fields are packed from bit 0 of their word in the order below; a word's unused high bits
are zero. Widths of index fields come from the spec (`AccelSpec.log_*_depth`), the
others are VTA's constants; a spec whose fields do not fit a word is a `SpecError`
(`check_layouts`). Bit positions at VTA's default spec (uop depth 2^13, input 2^11,
weight 2^10, accumulator 2^11 elements):

Every instruction, bits 0-6: opcode (3 bits: LOAD=0, STORE=1, GEMM=2, FINISH=3, ALU=4),
then the dependence flags pop_prev (3), pop_next (4), push_prev (5), push_next (6).
"prev"/"next" are the neighbouring module in load -> compute -> store.

LOAD / STORE (same layout)                      | width
  word 0:   7-9    memory_type                  | 3   UOP=0 WGT=1 INP=2 ACC=3 OUT=4 ACC_8BIT=5
           10-25   sram_base  (buffer element)  | 16
           26-57   dram_base  (DRAM element)    | 32
           58-63   zero
  word 1:  64-79   y_size     (rows)            | 16
           80-95   x_size     (elements a row)  | 16
           96-111  x_stride   (elements)        | 16
          112-115  y_pad_0  116-119 y_pad_1     | 4 each: rows of zeros before/after
          120-123  x_pad_0  124-127 x_pad_1     | 4 each: elements of zeros before/after

GEMM                                            | width (default)
  word 0:   7      reset (zero the accumulator) | 1
            8-20   uop_begin                    | log_uop_depth (13)
           21-34   uop_end (exclusive)          | log_uop_depth + 1 (14)
           35-48   iter_out  49-62 iter_in      | 14 each
           63      zero
  word 1:  64-74   dst_factor_out 75-85  dst_factor_in | log_acc_depth (11)
           86-96   src_factor_out 97-107 src_factor_in | log_inp_depth (11)
          108-117  wgt_factor_out 118-127 wgt_factor_in | log_wgt_depth (10)

ALU (word 0 as GEMM)                            | width (default)
  word 1:  64-74   dst_factor_out 75-85  dst_factor_in | log_acc_depth (11)
           86-96   src_factor_out 97-107 src_factor_in | log_acc_depth (11)
          108-110  alu_opcode                   | 3   MIN=0 MAX=1 ADD=2 SHR=3 MUL=4
          111      use_imm                      | 1
          112-127  imm (two's complement)       | 16, signed

FINISH: bits 0-6 only; the rest is zero.

Micro-op (32 bits)                              | width (default)
   0-10   dst_idx (accumulator)                 | log_acc_depth (11)
  11-21   src_idx (input for GEMM, acc for ALU) | max(log_acc_depth, log_inp_depth) (11)
  22-31   wgt_idx (weight)                      | log_wgt_depth (10)

GEMM and ALU run, for i < iter_out, j < iter_in, k in [uop_begin, uop_end):
dst = uop[k].dst_idx + i*dst_factor_out + j*dst_factor_in (likewise src and wgt).

A value that does not fit its field is an `EncodingError` naming instruction and field.
Field names follow `hw_spec.h` except uop_bgn -> uop_begin and reset_reg -> reset.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import IntEnum

from tilecraft.backends.accel.spec import (
    SRAM_ADDRESS_BITS,
    UOP_BITS,
    AccelSpec,
    SpecError,
)
from xdsl.utils.exceptions import DiagnosticException

INSTRUCTION_BITS = 128
WORD_BITS = 64
OPCODE_BITS = 3
MEMORY_TYPE_BITS = 3
DRAM_ADDRESS_BITS = 32
SIZE_BITS = 16
STRIDE_BITS = 16
PAD_BITS = 4
LOOP_ITER_BITS = 14
ALU_OPCODE_BITS = 3
ALU_IMM_BITS = 16


class Opcode(IntEnum):
    LOAD = 0
    STORE = 1
    GEMM = 2
    FINISH = 3
    ALU = 4


class MemoryType(IntEnum):
    UOP = 0
    WGT = 1
    INP = 2
    ACC = 3
    OUT = 4
    ACC_8BIT = 5


class AluOpcode(IntEnum):
    MIN = 0
    MAX = 1
    ADD = 2
    SHR = 3
    MUL = 4


class EncodingError(DiagnosticException):
    """A value does not fit its field, or a word is not an instruction."""


# -- the instructions ----------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Instruction:
    """The dependence flags every instruction carries: pop a token from the previous
    (next) module's queue before running, push one to it after."""

    pop_prev: bool = False
    pop_next: bool = False
    push_prev: bool = False
    push_next: bool = False


@dataclass(frozen=True, kw_only=True)
class _Memory(Instruction):
    """A 2-D strided DMA: y_size rows of x_size elements, rows x_stride elements apart
    in DRAM, with y_pad_0/y_pad_1 rows and x_pad_0/x_pad_1 elements of zeros around."""

    memory_type: MemoryType
    sram_base: int
    dram_base: int
    y_size: int
    x_size: int
    x_stride: int
    y_pad_0: int = 0
    y_pad_1: int = 0
    x_pad_0: int = 0
    x_pad_1: int = 0


@dataclass(frozen=True, kw_only=True)
class Load(_Memory):
    """DRAM -> the uop, weight, input or accumulator buffer."""


@dataclass(frozen=True, kw_only=True)
class Store(_Memory):
    """The output buffer -> DRAM."""

    memory_type: MemoryType = MemoryType.OUT


@dataclass(frozen=True, kw_only=True)
class _MicroOpLoop(Instruction):
    """Runs micro-ops [uop_begin, uop_end) in two loops of iter_out x iter_in."""

    reset: bool = False
    uop_begin: int
    uop_end: int
    iter_out: int
    iter_in: int
    dst_factor_out: int
    dst_factor_in: int
    src_factor_out: int
    src_factor_in: int


@dataclass(frozen=True, kw_only=True)
class Gemm(_MicroOpLoop):
    """acc[dst] += inp[src] x wgt[wgt]^T over BATCH x BLOCK by BLOCK x BLOCK tiles
    (or acc[dst] = 0 with `reset`)."""

    wgt_factor_out: int
    wgt_factor_in: int


@dataclass(frozen=True, kw_only=True)
class Alu(_MicroOpLoop):
    """acc[dst] = op(acc[dst], imm if use_imm else acc[src]), element-wise."""

    alu_opcode: AluOpcode
    use_imm: bool = False
    imm: int = 0


@dataclass(frozen=True, kw_only=True)
class Finish(Instruction):
    """The end of the stream."""


@dataclass(frozen=True)
class MicroOp:
    """Buffer indices of one GEMM/ALU step before the loop factors are added."""

    dst_idx: int
    src_idx: int
    wgt_idx: int = 0


# -- layouts -------------------------------------------------------------------------
@dataclass(frozen=True)
class BitField:
    name: str
    lsb: int  # position of its lowest bit in the whole instruction (or micro-op)
    width: int
    signed: bool = False

    @property
    def msb(self) -> int:
        return self.lsb + self.width - 1


_FLAGS = (("opcode", OPCODE_BITS), ("pop_prev", 1), ("pop_next", 1), ("push_prev", 1), ("push_next", 1))
_SIGNED = {"imm"}


def _pack(kind: str, words: tuple[tuple[tuple[str, int], ...], ...], word_bits: int, keys: tuple[str, ...], spec):
    """Lay the fields of each word out from its bit 0; a word that overflows is a
    SpecError naming the spec keys its index widths come from."""
    fields: list[BitField] = []
    for number, word in enumerate(words):
        position = number * word_bits
        for name, width in word:
            fields.append(BitField(name, position, width, name in _SIGNED))
            position += width
        used = position - number * word_bits
        if used > word_bits:
            raise SpecError(
                spec.source,
                ",".join(keys),
                f"the {kind} layout needs {used} bits in its word {number}, which has {word_bits}; "
                "make the buffers these keys size smaller",
            )
    return tuple(fields)


@dataclass(frozen=True)
class Layouts:
    memory: tuple[BitField, ...]
    gemm: tuple[BitField, ...]
    alu: tuple[BitField, ...]
    finish: tuple[BitField, ...]
    uop: tuple[BitField, ...]


@functools.cache
def layouts(spec: AccelSpec) -> Layouts:
    """The bit fields of each instruction kind and of the micro-op at `spec`."""
    memory = _pack(
        "LOAD/STORE",
        (
            (
                *_FLAGS,
                ("memory_type", MEMORY_TYPE_BITS),
                ("sram_base", SRAM_ADDRESS_BITS),
                ("dram_base", DRAM_ADDRESS_BITS),
            ),
            (
                ("y_size", SIZE_BITS),
                ("x_size", SIZE_BITS),
                ("x_stride", STRIDE_BITS),
                ("y_pad_0", PAD_BITS),
                ("y_pad_1", PAD_BITS),
                ("x_pad_0", PAD_BITS),
                ("x_pad_1", PAD_BITS),
            ),
        ),
        WORD_BITS,
        (),
        spec,
    )
    loop_word = (
        *_FLAGS,
        ("reset", 1),
        ("uop_begin", spec.log_uop_depth),
        ("uop_end", spec.log_uop_depth + 1),
        ("iter_out", LOOP_ITER_BITS),
        ("iter_in", LOOP_ITER_BITS),
    )
    acc, inp, wgt = spec.log_acc_depth, spec.log_inp_depth, spec.log_wgt_depth
    gemm = _pack(
        "GEMM",
        (
            loop_word,
            (
                ("dst_factor_out", acc),
                ("dst_factor_in", acc),
                ("src_factor_out", inp),
                ("src_factor_in", inp),
                ("wgt_factor_out", wgt),
                ("wgt_factor_in", wgt),
            ),
        ),
        WORD_BITS,
        ("LOG_UOP_BUFF_SIZE", "LOG_ACC_BUFF_SIZE", "LOG_INP_BUFF_SIZE", "LOG_WGT_BUFF_SIZE"),
        spec,
    )
    alu = _pack(
        "ALU",
        (
            loop_word,
            (
                ("dst_factor_out", acc),
                ("dst_factor_in", acc),
                ("src_factor_out", acc),
                ("src_factor_in", acc),
                ("alu_opcode", ALU_OPCODE_BITS),
                ("use_imm", 1),
                ("imm", ALU_IMM_BITS),
            ),
        ),
        WORD_BITS,
        ("LOG_UOP_BUFF_SIZE", "LOG_ACC_BUFF_SIZE"),
        spec,
    )
    finish = _pack("FINISH", (_FLAGS,), WORD_BITS, (), spec)
    uop = _pack(
        "micro-op",
        ((("dst_idx", acc), ("src_idx", max(acc, inp)), ("wgt_idx", wgt)),),
        UOP_BITS,
        ("LOG_ACC_BUFF_SIZE", "LOG_INP_BUFF_SIZE", "LOG_WGT_BUFF_SIZE"),
        spec,
    )
    return Layouts(memory, gemm, alu, finish, uop)


def check_layouts(spec: AccelSpec) -> None:
    """Raise `SpecError` unless every layout fits its words at `spec`."""
    layouts(spec)


# -- encode / decode -------------------------------------------------------------------
_OPCODE_OF = {Load: Opcode.LOAD, Store: Opcode.STORE, Gemm: Opcode.GEMM, Finish: Opcode.FINISH, Alu: Opcode.ALU}
_CLASS_OF = {opcode: cls for cls, opcode in _OPCODE_OF.items()}
_ENUM_OF = {"memory_type": MemoryType, "alu_opcode": AluOpcode}


def _layout_of(opcode: Opcode, spec: AccelSpec) -> tuple[BitField, ...]:
    all_layouts = layouts(spec)
    if opcode in (Opcode.LOAD, Opcode.STORE):
        return all_layouts.memory
    return {Opcode.GEMM: all_layouts.gemm, Opcode.ALU: all_layouts.alu, Opcode.FINISH: all_layouts.finish}[opcode]


def _put(word: int, value: object, bit_field: BitField, what: str) -> int:
    if type(value) is bool or isinstance(value, IntEnum):
        value = int(value)
    if type(value) is not int:
        raise EncodingError(f"{what} field {bit_field.name}: expected an integer, got {value!r}")
    if bit_field.signed:
        low, high = -(1 << (bit_field.width - 1)), (1 << (bit_field.width - 1)) - 1
    else:
        low, high = 0, (1 << bit_field.width) - 1
    if not low <= value <= high:
        kind = "signed" if bit_field.signed else "unsigned"
        raise EncodingError(
            f"{what} field {bit_field.name}: {value} does not fit in {bit_field.width} {kind} bits "
            f"(bits {bit_field.lsb}-{bit_field.msb}, range [{low}, {high}])"
        )
    return word | ((value & ((1 << bit_field.width) - 1)) << bit_field.lsb)


def _get(word: int, bit_field: BitField) -> int:
    value = (word >> bit_field.lsb) & ((1 << bit_field.width) - 1)
    if bit_field.signed and value >> (bit_field.width - 1):
        value -= 1 << bit_field.width
    return value


def encode(insn: Instruction, spec: AccelSpec) -> int:
    """The 128-bit word of `insn` at `spec` (bit i of the int is bit i of the layout)."""
    opcode = _OPCODE_OF.get(type(insn))
    if opcode is None:
        raise EncodingError(f"{insn!r} is not an accelerator instruction")
    what = opcode.name
    word = 0
    for bit_field in _layout_of(opcode, spec):
        value = opcode if bit_field.name == "opcode" else getattr(insn, bit_field.name)
        word = _put(word, value, bit_field, what)
    return word


def decode(word: int, spec: AccelSpec) -> Instruction:
    """The instruction a 128-bit word encodes; unknown opcodes or enum values are errors."""
    if not 0 <= word < 1 << INSTRUCTION_BITS:
        raise EncodingError(f"an instruction is {INSTRUCTION_BITS} bits; got {word:#x}")
    raw_opcode = word & ((1 << OPCODE_BITS) - 1)
    if raw_opcode not in Opcode._value2member_map_:
        raise EncodingError(f"unknown opcode {raw_opcode} in instruction {word:#034x}")
    opcode = Opcode(raw_opcode)
    values: dict[str, object] = {}
    for bit_field in _layout_of(opcode, spec):
        if bit_field.name == "opcode":
            continue
        value = _get(word, bit_field)
        if bit_field.name in _ENUM_OF:
            enum = _ENUM_OF[bit_field.name]
            if value not in enum._value2member_map_:
                raise EncodingError(f"{opcode.name} field {bit_field.name}: unknown value {value}")
            value = enum(value)
        elif bit_field.width == 1 and not bit_field.signed:
            value = bool(value)
        values[bit_field.name] = value
    insn = _CLASS_OF[opcode](**values)
    if encode(insn, spec) != word:
        raise EncodingError(f"{opcode.name} instruction {word:#034x} has bits set outside its fields")
    return insn


def encode_uop(uop: MicroOp, spec: AccelSpec) -> int:
    """The 32-bit word of a micro-op at `spec`."""
    word = 0
    for bit_field in layouts(spec).uop:
        word = _put(word, getattr(uop, bit_field.name), bit_field, "micro-op")
    return word


def decode_uop(word: int, spec: AccelSpec) -> MicroOp:
    if not 0 <= word < 1 << UOP_BITS:
        raise EncodingError(f"a micro-op is {UOP_BITS} bits; got {word:#x}")
    return MicroOp(**{f.name: _get(word, f) for f in layouts(spec).uop})


def encode_stream(insns: list[Instruction], spec: AccelSpec) -> bytes:
    """Instructions as VTA's runtime lays them in DRAM: 16 little-endian bytes each."""
    return b"".join(encode(insn, spec).to_bytes(INSTRUCTION_BITS // 8, "little") for insn in insns)


def decode_stream(data: bytes, spec: AccelSpec) -> list[Instruction]:
    size = INSTRUCTION_BITS // 8
    if len(data) % size:
        raise EncodingError(f"an instruction stream is a multiple of {size} bytes; got {len(data)}")
    return [decode(int.from_bytes(data[i : i + size], "little"), spec) for i in range(0, len(data), size)]


def encode_uops(uops: list[MicroOp], spec: AccelSpec) -> bytes:
    return b"".join(encode_uop(uop, spec).to_bytes(UOP_BITS // 8, "little") for uop in uops)


def decode_uops(data: bytes, spec: AccelSpec) -> list[MicroOp]:
    size = UOP_BITS // 8
    if len(data) % size:
        raise EncodingError(f"a micro-op stream is a multiple of {size} bytes; got {len(data)}")
    return [decode_uop(int.from_bytes(data[i : i + size], "little"), spec) for i in range(0, len(data), size)]

