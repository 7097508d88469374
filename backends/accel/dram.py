"""The accelerator's DRAM: one flat byte-addressed memory, and VTA's tile layouts in it.

`Dram` is a numpy `uint8` array with a bump allocator. A LOAD or STORE names a DRAM
address in elements of its memory type (`dram_base`, as VTA's runtime does: the byte
address over the element's size), so data for the machine is laid out as whole tiles:

| memory type | one element (tile)                               | values          |
|-------------|--------------------------------------------------|-----------------|
| INP, OUT    | BATCH x BLOCK values of inp (= out) width bits   | signed          |
| WGT         | BLOCK_OUT x BLOCK_IN values of wgt width bits    | signed          |
| ACC         | BATCH x BLOCK values of acc width bits           | signed          |
| ACC_8BIT    | BATCH x BLOCK values of inp width bits, loaded   | signed, widened |
|             | into the accumulator                             |                 |
| UOP         | one 32-bit micro-op word (`isa.encode_uops`)      |                 |

Values are packed little-endian, value i of a tile at bit i*width of its bytes (VTA's
`BitPacker`), so 8-, 16- and 32-bit values are plain numpy integers and narrower ones
share bytes. `put_tiles` / `get_tiles` allocate, pack and unpack whole tensors of tiles;
`put_uops` writes a micro-op kernel. Errors are `DramError` (a `DiagnosticException`).
"""

from __future__ import annotations

import functools

import numpy as np
from tilecraft.backends.accel.isa import MemoryType, MicroOp, encode_uops
from tilecraft.backends.accel.spec import AccelSpec
from xdsl.utils.exceptions import DiagnosticException


class DramError(DiagnosticException):
    """An address outside the DRAM, a bad alignment, or values that do not fit."""


# -- tile layouts ------------------------------------------------------------------------
@functools.cache
def tile_shape(memory_type: MemoryType, spec: AccelSpec) -> tuple[int, ...]:
    """The shape of one element of `memory_type`: (BATCH, BLOCK) or (BLOCK, BLOCK); () for UOP."""
    if memory_type == MemoryType.WGT:
        return (spec.block, spec.block)
    if memory_type == MemoryType.UOP:
        return ()
    return (spec.batch, spec.block)


@functools.cache
def value_width(memory_type: MemoryType, spec: AccelSpec) -> int:
    """Bits of one value of `memory_type` in DRAM."""
    return {
        MemoryType.UOP: 32,
        MemoryType.WGT: spec.wgt_width,
        MemoryType.INP: spec.inp_width,
        MemoryType.ACC: spec.acc_width,
        MemoryType.OUT: spec.out_width,
        MemoryType.ACC_8BIT: spec.inp_width,
    }[MemoryType(memory_type)]


@functools.cache
def elem_bytes(memory_type: MemoryType, spec: AccelSpec) -> int:
    """Bytes of one DRAM element of `memory_type` (what `dram_base` and `x_stride` count)."""
    shape = tile_shape(memory_type, spec)
    return int(np.prod(shape, dtype=np.int64)) * value_width(memory_type, spec) // 8


def wrap_signed(values: np.ndarray, width: int) -> np.ndarray:
    """The low `width` bits of integer `values`, sign-extended, as int64."""
    values = np.asarray(values, dtype=np.int64)
    if width >= 64:
        return values
    half = np.int64(1) << np.int64(width - 1)
    return ((values + half) & ((half << 1) - 1)) - half


def pack_values(values: np.ndarray, width: int) -> np.ndarray:
    """Signed integers -> their low `width` bits packed little-endian into bytes."""
    flat = np.asarray(values).reshape(-1).astype(np.int64)
    if width in (8, 16, 32):
        return flat.astype(f"<i{width // 8}").view(np.uint8)
    per_byte = 8 // width  # width is 1, 2 or 4 (a tile is a whole number of bytes)
    lanes = (flat & ((1 << width) - 1)).astype(np.uint8).reshape(-1, per_byte)
    shifts = (np.arange(per_byte, dtype=np.uint8) * width).astype(np.uint8)
    return np.bitwise_or.reduce(lanes << shifts, axis=1).astype(np.uint8)


def unpack_values(data: np.ndarray, width: int) -> np.ndarray:
    """Bytes -> the signed `width`-bit values packed in them (int64)."""
    data = np.ascontiguousarray(data, dtype=np.uint8).reshape(-1)
    if width in (8, 16, 32):
        return data.view(f"<i{width // 8}").astype(np.int64)
    per_byte = 8 // width
    shifts = (np.arange(per_byte, dtype=np.uint8) * width).astype(np.uint8)
    lanes = ((data[:, None] >> shifts) & ((1 << width) - 1)).reshape(-1)
    return wrap_signed(lanes.astype(np.int64), width)


def pack_tiles(values: np.ndarray, memory_type: MemoryType, spec: AccelSpec) -> np.ndarray:
    """Tiles `(..., *tile_shape)` of signed values -> DRAM bytes. Values must fit the width."""
    memory_type = MemoryType(memory_type)
    shape = tile_shape(memory_type, spec)
    values = np.asarray(values)
    if shape and tuple(values.shape[-len(shape) :]) != shape:
        raise DramError(f"{memory_type.name} tiles end in shape {shape}; got an array of shape {values.shape}")
    if values.dtype.kind not in "iub":
        raise DramError(f"{memory_type.name} tiles hold integers; got dtype {values.dtype}")
    width = value_width(memory_type, spec)
    if values.size:
        low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
        v_min, v_max = int(values.min()), int(values.max())
        if v_min < low or v_max > high:
            raise DramError(
                f"{memory_type.name} values are {width}-bit signed, in [{low}, {high}]; "
                f"got values in [{v_min}, {v_max}]"
            )
    return pack_values(values, width)


def unpack_tiles(data: np.ndarray, memory_type: MemoryType, spec: AccelSpec) -> np.ndarray:
    """DRAM bytes of whole tiles -> int64 values of shape (count, *tile_shape)."""
    memory_type = MemoryType(memory_type)
    values = unpack_values(data, value_width(memory_type, spec))
    return values.reshape(-1, *tile_shape(memory_type, spec))


# -- the memory ----------------------------------------------------------------------------
class Dram:
    """Flat byte-addressed memory. `size=None` grows as `alloc` hands out space; a fixed
    size refuses allocations past it. Address 0 is an ordinary address."""

    def __init__(self, size: int | None = None):
        self.fixed = size is not None
        self.data = np.zeros(size or 0, dtype=np.uint8)
        self.top = 0  # the next free byte of the bump allocator

    @property
    def size(self) -> int:
        return int(self.data.size)

    # -- raw bytes ---------------------------------------------------------------------
    def alloc(self, nbytes: int, align: int = 64) -> int:
        """Reserve `nbytes` (zeroed) at a multiple of `align`; return the byte address."""
        if nbytes < 0 or align < 1:
            raise DramError(f"cannot allocate {nbytes} bytes aligned to {align}")
        addr = -(-self.top // align) * align
        end = addr + nbytes
        if end > self.size:
            if self.fixed:
                raise DramError(f"out of DRAM: {nbytes} bytes at {addr:#x} pass the end of the {self.size}-byte memory")
            grown = np.zeros(max(end, 2 * self.size), dtype=np.uint8)
            grown[: self.size] = self.data
            self.data = grown
        self.top = end
        return addr

    def check_range(self, addr: int, nbytes: int, what: str = "access") -> None:
        if addr < 0 or addr + nbytes > self.size:
            raise DramError(f"DRAM {what} of {nbytes} bytes at {addr:#x} is outside the {self.size}-byte memory")

    def write(self, addr: int, array: np.ndarray | bytes) -> None:
        """Copy the bytes of `array` (C order) to `addr`."""
        raw = (
            np.frombuffer(array, dtype=np.uint8)
            if isinstance(array, bytes | bytearray)
            else (np.ascontiguousarray(array).reshape(-1).view(np.uint8))
        )
        self.check_range(addr, raw.size, "write")
        self.data[addr : addr + raw.size] = raw

    def read(self, addr: int, shape: tuple[int, ...] | int, dtype=np.uint8) -> np.ndarray:
        """A copy of the array of `shape` and `dtype` stored at `addr`."""
        dtype = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        self.check_range(addr, count * dtype.itemsize, "read")
        return self.data[addr : addr + count * dtype.itemsize].view(dtype).reshape(shape).copy()

    # -- tiles -----------------------------------------------------------------------------
    def alloc_tiles(self, memory_type: MemoryType, count: int, spec: AccelSpec) -> int:
        """Room for `count` elements of `memory_type`; returns the element address (`dram_base`)."""
        size = elem_bytes(memory_type, spec)
        return self.alloc(count * size, align=max(size, 64)) // size

    def write_tiles(self, memory_type: MemoryType, base: int, values: np.ndarray, spec: AccelSpec) -> None:
        """Pack `values` (..., *tile_shape) to consecutive elements from element address `base`."""
        self.write(base * elem_bytes(memory_type, spec), pack_tiles(values, memory_type, spec))

    def put_tiles(self, memory_type: MemoryType, values: np.ndarray, spec: AccelSpec) -> int:
        """Allocate and write `values` (..., *tile_shape); returns the element address."""
        shape = tile_shape(MemoryType(memory_type), spec)
        count = int(np.prod(np.shape(values)[: np.ndim(values) - len(shape)], dtype=np.int64))
        base = self.alloc_tiles(memory_type, count, spec)
        self.write_tiles(memory_type, base, values, spec)
        return base

    def get_tiles(self, memory_type: MemoryType, base: int, count: int, spec: AccelSpec) -> np.ndarray:
        """`count` elements from element address `base`, as int64 (count, *tile_shape)."""
        size = elem_bytes(memory_type, spec)
        return unpack_tiles(self.read(base * size, count * size), memory_type, spec)

    def put_uops(self, uops: list[MicroOp], spec: AccelSpec) -> int:
        """Allocate and write a micro-op kernel; returns its element address (UOP elements)."""
        base = self.alloc_tiles(MemoryType.UOP, len(uops), spec)
        self.write(base * elem_bytes(MemoryType.UOP, spec), encode_uops(uops, spec))
        return base
