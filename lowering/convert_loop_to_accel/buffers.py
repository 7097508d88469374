"""convert-loop-to-accel's buffers: the function's arguments in the DRAM layout
(`_Arg`), the memory type of each accelerator scope, element sizes and strides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from xdsl.dialects.builtin import IntegerType, MemRefType
from tilecraft.backends.accel import isa
from tilecraft.dialects.loop import MemoryScope


PASS = "convert-loop-to-accel"

_MEMORY_TYPE = {
    MemoryScope.INP_BUFFER: isa.MemoryType.INP,
    MemoryScope.WGT_BUFFER: isa.MemoryType.WGT,
    MemoryScope.ACC_BUFFER: isa.MemoryType.ACC,
}


def accel_gemm_lowering() -> str:
    """The value an intrinsic's "accel" lowering has when it is the GEMM unit."""
    return "gemm"


@dataclass
class _Arg:
    name: str
    memory_type: isa.MemoryType
    byte_base: int
    scalar_bytes: int
    nbytes: int


def _scalar_bytes(t: MemRefType) -> int:
    element = t.element_type
    width = element.width.data if isinstance(element, IntegerType) else element.bitwidth  # type: ignore[attr-defined]
    return max(1, width // 8)


def _strides(t: MemRefType) -> list[int]:
    shape = list(t.get_shape())
    return [math.prod(shape[k + 1 :]) for k in range(len(shape))]
