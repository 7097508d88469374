"""The accel-bin file: one accelerator program, ready to load, and readable back.

Every integer is little-endian; the file is these parts in order:

| part              | bytes        | content                                                   |
|-------------------|--------------|-----------------------------------------------------------|
| magic             | 8            | `TCACCEL` and a zero byte                                 |
| version           | 4 (u32)      | `VERSION` (1)                                             |
| spec              | 4 + 4 x K    | K (u32), then the spec's K values (u32) in `SPEC_KEYS` order |
| counts            | 4 x 4        | instructions N, micro-ops U, DRAM table entries E, name bytes L |
| name              | L            | the program's name, UTF-8                                 |
| instructions      | 16 x N       | `isa.encode_stream` (VTA's layout at this spec)           |
| micro-ops         | 4 x U        | every kernel's micro-ops, in table order (`isa.encode_uops`) |
| DRAM table        | E entries    | kind (u8: 0 buffer, 1 micro-op kernel), memory type (u8), |
|                   |              | name bytes n (u16), dram_base (u64, elements of the type), |
|                   |              | elements (u64; a kernel's micro-op count), name (n, UTF-8) |
| checksum          | 4 (u32)      | CRC-32 (zlib) of every byte before it                     |

Buffers come first in the table, then kernels; a kernel's micro-ops are the next U_k
words of the micro-op part. `write_binary(program)` and `read_binary(data)` are inverse:
`read_binary(write_binary(p)) == p`. A file that is truncated, corrupt (checksum), of
another format (magic, version) or holds a value no instruction can have is a
`BinaryFormatError`, one line naming what is wrong and where.
"""

from __future__ import annotations

import struct
import zlib

from tilecraft.backends.accel import isa
from tilecraft.backends.accel.program import Buffer, Kernel, Program
from tilecraft.backends.accel.spec import SPEC_KEYS, SpecError, spec_from_dict
from xdsl.utils.exceptions import DiagnosticException

MAGIC = b"TCACCEL\x00"
VERSION = 1
KIND_BUFFER = 0
KIND_KERNEL = 1
INSTRUCTION_BYTES = isa.INSTRUCTION_BITS // 8
UOP_BYTES = isa.UOP_BITS // 8


class BinaryFormatError(DiagnosticException):
    """An accel-bin file that cannot be read; `str()` is one line."""


def write_binary(program: Program) -> bytes:
    spec = program.spec
    name = program.name.encode()
    values = spec.to_dict()
    uops = [uop for kernel in program.kernels for uop in kernel.uops]
    parts = [
        MAGIC,
        struct.pack("<II", VERSION, len(SPEC_KEYS)),
        struct.pack(f"<{len(SPEC_KEYS)}I", *(values[k] for k in SPEC_KEYS)),
        struct.pack("<4I", len(program.instructions), len(uops), len(program.buffers) + len(program.kernels), len(name)),
        name,
        isa.encode_stream(program.instructions, spec),
        isa.encode_uops(uops, spec),
    ]
    for buffer in program.buffers:
        parts.append(_entry(KIND_BUFFER, buffer.memory_type, buffer.name, buffer.dram_base, buffer.elems))
    for kernel in program.kernels:
        parts.append(_entry(KIND_KERNEL, isa.MemoryType.UOP, kernel.name, kernel.dram_base, len(kernel.uops)))
    data = b"".join(parts)
    return data + struct.pack("<I", zlib.crc32(data))


def _entry(kind: int, memory_type: isa.MemoryType, name: str, dram_base: int, count: int) -> bytes:
    encoded = name.encode()
    return struct.pack("<BBHQQ", kind, int(memory_type), len(encoded), dram_base, count) + encoded


class _Reader:
    def __init__(self, data: bytes, source: str):
        self.data = data
        self.source = source
        self.offset = 0

    def error(self, message: str) -> BinaryFormatError:
        return BinaryFormatError(f"{self.source}: not a valid accel-bin file: {message}")

    def take(self, size: int, what: str) -> bytes:
        if self.offset + size > len(self.data):
            raise self.error(
                f"truncated: {what} needs {size} bytes at offset {self.offset}, "
                f"{len(self.data) - self.offset} are left"
            )
        chunk = self.data[self.offset : self.offset + size]
        self.offset += size
        return chunk

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def text(self, size: int, what: str) -> str:
        try:
            return self.take(size, what).decode()
        except UnicodeDecodeError:
            raise self.error(f"{what} is not UTF-8") from None


def read_binary(data: bytes, source: str = "<accel-bin>") -> Program:
    reader = _Reader(data, source)
    if data[: len(MAGIC)] != MAGIC:
        raise reader.error(f"wrong magic number (an accel-bin file starts with {MAGIC!r})")
    reader.offset = len(MAGIC)
    (version,) = reader.unpack("<I", "the version")
    if version != VERSION:
        raise reader.error(f"version {version}; this reader knows version {VERSION}")
    if len(data) < reader.offset + 4:
        raise reader.error("truncated: no checksum")
    (checksum,) = struct.unpack("<I", data[-4:])
    if zlib.crc32(data[:-4]) != checksum:
        raise reader.error("checksum mismatch: the file is corrupt or truncated")
    body = _Reader(data[:-4], source)
    body.offset = reader.offset
    (n_keys,) = body.unpack("<I", "the spec key count")
    if n_keys != len(SPEC_KEYS):
        raise body.error(f"the spec has {n_keys} keys; version {VERSION} has {len(SPEC_KEYS)}")
    values = body.unpack(f"<{n_keys}I", "the spec")
    try:
        spec = spec_from_dict(dict(zip(SPEC_KEYS, values)), f"{source}:spec")
    except SpecError as e:
        raise body.error(f"bad spec: {e}") from None
    n_insns, n_uops, n_entries, name_bytes = body.unpack("<4I", "the counts")
    name = body.text(name_bytes, "the program name")
    try:
        instructions = isa.decode_stream(body.take(n_insns * INSTRUCTION_BYTES, "the instructions"), spec)
        uops = isa.decode_uops(body.take(n_uops * UOP_BYTES, "the micro-ops"), spec)
    except isa.EncodingError as e:
        raise body.error(str(e)) from None
    buffers: list[Buffer] = []
    kernels: list[Kernel] = []
    used = 0
    for number in range(n_entries):
        kind, memory_type, name_size, dram_base, count = body.unpack("<BBHQQ", f"DRAM table entry {number}")
        entry_name = body.text(name_size, f"the name of DRAM table entry {number}")
        if memory_type not in isa.MemoryType._value2member_map_:
            raise body.error(f"DRAM table entry {number} (@{entry_name}): unknown memory type {memory_type}")
        if kind == KIND_BUFFER:
            if kernels:
                raise body.error(f"DRAM table entry {number} (@{entry_name}): a buffer after the kernels")
            buffers.append(Buffer(entry_name, isa.MemoryType(memory_type), dram_base, count))
        elif kind == KIND_KERNEL:
            if used + count > len(uops):
                raise body.error(
                    f"DRAM table entry {number} (@{entry_name}): {count} micro-ops, {len(uops) - used} are left"
                )
            kernels.append(Kernel(entry_name, dram_base, tuple(uops[used : used + count])))
            used += count
        else:
            raise body.error(f"DRAM table entry {number} (@{entry_name}): unknown kind {kind}")
    if used != len(uops):
        raise body.error(f"{len(uops) - used} micro-ops belong to no kernel of the DRAM table")
    if body.offset != len(body.data):
        raise body.error(f"{len(body.data) - body.offset} bytes after the DRAM table")
    return Program(name, spec, instructions, kernels, buffers)


def disassemble(data: bytes, source: str = "<accel-bin>"):
    """The verified `accel.program` (in a module) that an accel-bin file holds; it encodes
    back to the same bytes. A stream the IR verifier rejects (a pop without its push, an
    index past a buffer) is a `BinaryFormatError` naming the instruction."""
    from tilecraft.backends.accel.program import describe, program_to_ir
    from tilecraft.dialects.accel import InstructionOp
    from tilecraft.utils.diagnostics import OpError, verify_module
    from xdsl.dialects.builtin import ModuleOp

    program = read_binary(data, source)
    try:
        program_op = program_to_ir(program)
    except isa.EncodingError as e:
        raise BinaryFormatError(f"{source}: {e}") from None
    module = ModuleOp([program_op])
    index = {op: i for i, op in enumerate(o for o in program_op.body.block.ops if isinstance(o, InstructionOp))}
    try:
        verify_module(module)
    except OpError as e:
        where = source
        if e.op in index:
            where += f": instruction {index[e.op]} ({describe(program.instructions[index[e.op]])})"
        message = e.message.split(" op: ", 1)[-1]
        raise BinaryFormatError(f"{where}: {message}") from None
    return module
