"""The hardware spec of the VTA-like accelerator: its shape, buffers and cycle model.

A spec is a flat JSON (`.json`) or TOML (`.toml`) file of `KEY = integer` entries, read
into the frozen dataclass `AccelSpec` (field = key in lower case). Every key must be
given; `vta_default.json` next to this module mirrors VTA's default configuration and is
what `default_spec()` returns. A BLOCK-32 or BATCH-2 machine is another file: nothing in
tilecraft may assume 16.

VTA's parameters (all log2, as in VTA's `vta_config.json`):

| key               | default | meaning                                                   |
|-------------------|---------|-----------------------------------------------------------|
| LOG_INP_WIDTH     | 3       | input element: signed 8-bit integer                       |
| LOG_WGT_WIDTH     | 3       | weight element: signed 8-bit integer                      |
| LOG_ACC_WIDTH     | 5       | accumulator element: signed 32-bit integer                |
| LOG_BATCH         | 0       | GEMM tile rows A in (A, B) x (B, C): 1                    |
| LOG_BLOCK         | 4       | GEMM tile B = C: 16 (BATCH*BLOCK*BLOCK = 256 MACs/cycle)  |
| LOG_UOP_BUFF_SIZE | 15      | micro-op buffer: 32 KiB                                   |
| LOG_INP_BUFF_SIZE | 15      | input buffer: 32 KiB                                      |
| LOG_WGT_BUFF_SIZE | 18      | weight buffer: 256 KiB                                    |
| LOG_ACC_BUFF_SIZE | 17      | accumulator buffer: 128 KiB                               |

The cycle model's parameters (plain integers). These are tilecraft's model of the
machine, not numbers VTA publishes: the default bus is VTA's 64-bit AXI port.

| key                      | default | meaning                                            |
|--------------------------|---------|----------------------------------------------------|
| DMA_BYTES_PER_CYCLE      | 8       | bytes a LOAD/STORE moves per cycle once started    |
| DMA_LATENCY_CYCLES       | 64      | cycles from issuing a DMA to its first byte        |
| GEMM_INITIATION_INTERVAL | 1       | cycles between two GEMM micro-op executions        |
| ALU_INITIATION_INTERVAL  | 1       | cycles between two ALU micro-op executions         |
| COMMAND_QUEUE_DEPTH      | 512     | instructions each of load/compute/store can queue  |
| TOKEN_QUEUE_DEPTH        | 512     | dependence tokens each of the four queues can hold |
| CLOCK_MHZ (optional)     | 100     | the clock that turns cycles into seconds           |

CLOCK_MHZ is ours too: 100 MHz is the clock VTA's PYNQ-Z1 bitstream runs at. It only
converts simulated cycles into seconds (the tuner's cost, `seconds()`); nothing in the
machine depends on it, so it may be left out of a file (100) and is not part of the
binary format's spec block (`SPEC_KEYS`: a decoded program has the default clock).

Derived quantities follow VTA's `hw_spec_const.h`: an element of a buffer is one whole
tile (input BATCH x BLOCK, weight BLOCK x BLOCK, accumulator and output BATCH x BLOCK; a
micro-op is 32 bits), a buffer's depth is its size over its element size, and the index
fields of the instruction and micro-op layouts are log2 of those depths (see `isa`).
The output buffer has the accumulator's depth and the input's element width.

A bad file or value raises `SpecError`, one line `file:KEY: what is wrong`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException

DEFAULT_SPEC_PATH = Path(__file__).with_name("vta_default.json")

# Addresses in LOAD/STORE are VTA_MEMOP_SRAM_ADDR_BIT_WIDTH (16) bits wide: no buffer
# may hold more elements than that field can name.
SRAM_ADDRESS_BITS = 16
UOP_BITS = 32


class SpecError(DiagnosticException):
    """A spec file or value is wrong; `str()` is `file:KEY: message`."""

    def __init__(self, source: str, key: str | None, message: str):
        self.source = source
        self.key = key
        self.message = message
        where = f"{source}:{key}" if key else source
        super().__init__(f"{where}: {message}")


# Each key with the inclusive range it may take. Widths stop at 32 bits (the simulator
# holds elements in int32/int64); BATCH and BLOCK at 256.
_RANGES: dict[str, tuple[int, int]] = {
    "LOG_INP_WIDTH": (0, 5),
    "LOG_WGT_WIDTH": (0, 5),
    "LOG_ACC_WIDTH": (0, 5),
    "LOG_BATCH": (0, 8),
    "LOG_BLOCK": (0, 8),
    "LOG_UOP_BUFF_SIZE": (2, 31),
    "LOG_INP_BUFF_SIZE": (0, 31),
    "LOG_WGT_BUFF_SIZE": (0, 31),
    "LOG_ACC_BUFF_SIZE": (0, 31),
    "DMA_BYTES_PER_CYCLE": (1, 1 << 20),
    "DMA_LATENCY_CYCLES": (0, 1 << 20),
    "GEMM_INITIATION_INTERVAL": (1, 1 << 10),
    "ALU_INITIATION_INTERVAL": (1, 1 << 10),
    "COMMAND_QUEUE_DEPTH": (1, 1 << 20),
    "TOKEN_QUEUE_DEPTH": (1, 1 << 20),
    "CLOCK_MHZ": (1, 1 << 20),
}
# Keys a file may leave out, with their value then.
_OPTIONAL: dict[str, int] = {"CLOCK_MHZ": 100}


@dataclass(frozen=True)
class AccelSpec:
    """One accelerator configuration; see the module docstring for each key.

    Construct it with `load_spec(path)` or `default_spec()`; `dataclasses.replace`
    validates too (its errors name `source`, the file the spec was read from)."""

    log_inp_width: int
    log_wgt_width: int
    log_acc_width: int
    log_batch: int
    log_block: int
    log_uop_buff_size: int
    log_inp_buff_size: int
    log_wgt_buff_size: int
    log_acc_buff_size: int
    dma_bytes_per_cycle: int
    dma_latency_cycles: int
    gemm_initiation_interval: int
    alu_initiation_interval: int
    command_queue_depth: int
    token_queue_depth: int
    clock_mhz: int = _OPTIONAL["CLOCK_MHZ"]
    source: str = field(default="<spec>", compare=False)

    def __post_init__(self):
        for key, (low, high) in _RANGES.items():
            value = getattr(self, key.lower())
            if type(value) is not int:
                raise SpecError(self.source, key, f"expected an integer, got {value!r}")
            if not low <= value <= high:
                raise SpecError(self.source, key, f"{value} is out of range [{low}, {high}]")
        if self.log_acc_width < max(self.log_inp_width, self.log_wgt_width):
            raise SpecError(
                self.source,
                "LOG_ACC_WIDTH",
                f"the accumulator ({self.acc_width} bits) must be at least as wide as the "
                f"inputs ({self.inp_width} bits) and weights ({self.wgt_width} bits)",
            )
        for kind, bits, width_key in (
            ("input", self.inp_elem_bits, "LOG_INP_WIDTH"),
            ("weight", self.wgt_elem_bits, "LOG_WGT_WIDTH"),
            ("accumulator", self.acc_elem_bits, "LOG_ACC_WIDTH"),
        ):
            if bits % 8:
                raise SpecError(
                    self.source, width_key, f"the {kind} tile is {bits} bits, not a whole number of bytes"
                )
        for kind, log_depth, size_key in (
            ("micro-op", self.log_uop_depth, "LOG_UOP_BUFF_SIZE"),
            ("input", self.log_inp_depth, "LOG_INP_BUFF_SIZE"),
            ("weight", self.log_wgt_depth, "LOG_WGT_BUFF_SIZE"),
            ("accumulator", self.log_acc_depth, "LOG_ACC_BUFF_SIZE"),
        ):
            if log_depth < 0:
                raise SpecError(self.source, size_key, f"the {kind} buffer is smaller than one of its elements")
            if log_depth > SRAM_ADDRESS_BITS:
                raise SpecError(
                    self.source,
                    size_key,
                    f"the {kind} buffer holds 2^{log_depth} elements; a LOAD/STORE address "
                    f"has {SRAM_ADDRESS_BITS} bits",
                )
        from tilecraft.backends.accel.isa import check_layouts  # isa reads the spec

        check_layouts(self)

    # -- shape --------------------------------------------------------------------
    @property
    def batch(self) -> int:
        return 1 << self.log_batch

    @property
    def block(self) -> int:
        """BLOCK_IN = BLOCK_OUT: the GEMM tile is (batch, block) x (block, block)."""
        return 1 << self.log_block

    @property
    def macs_per_cycle(self) -> int:
        return self.batch * self.block * self.block

    @property
    def inp_width(self) -> int:
        return 1 << self.log_inp_width

    @property
    def wgt_width(self) -> int:
        return 1 << self.log_wgt_width

    @property
    def acc_width(self) -> int:
        return 1 << self.log_acc_width

    @property
    def out_width(self) -> int:
        return self.inp_width

    def seconds(self, cycles: int) -> float:
        """Wall time of `cycles` at the spec's clock."""
        return cycles / (self.clock_mhz * 1e6)

    # -- buffer elements (one tile each) -------------------------------------------
    @property
    def inp_elem_bits(self) -> int:
        return self.batch * self.block * self.inp_width

    @property
    def wgt_elem_bits(self) -> int:
        return self.block * self.block * self.wgt_width

    @property
    def acc_elem_bits(self) -> int:
        return self.batch * self.block * self.acc_width

    @property
    def out_elem_bits(self) -> int:
        return self.batch * self.block * self.out_width

    @property
    def uop_elem_bytes(self) -> int:
        return UOP_BITS // 8

    @property
    def inp_elem_bytes(self) -> int:
        return self.inp_elem_bits // 8

    @property
    def wgt_elem_bytes(self) -> int:
        return self.wgt_elem_bits // 8

    @property
    def acc_elem_bytes(self) -> int:
        return self.acc_elem_bits // 8

    @property
    def out_elem_bytes(self) -> int:
        return self.out_elem_bits // 8

    # -- buffer depths (elements) and the index widths that name them ----------------
    @property
    def log_uop_depth(self) -> int:
        return self.log_uop_buff_size - (UOP_BITS.bit_length() - 1) + 3

    @property
    def log_inp_depth(self) -> int:
        return self.log_inp_buff_size - self.log_batch - self.log_block - self.log_inp_width + 3

    @property
    def log_wgt_depth(self) -> int:
        return self.log_wgt_buff_size - 2 * self.log_block - self.log_wgt_width + 3

    @property
    def log_acc_depth(self) -> int:
        return self.log_acc_buff_size - self.log_batch - self.log_block - self.log_acc_width + 3

    @property
    def log_out_depth(self) -> int:
        return self.log_acc_depth

    @property
    def uop_depth(self) -> int:
        return 1 << self.log_uop_depth

    @property
    def inp_depth(self) -> int:
        return 1 << self.log_inp_depth

    @property
    def wgt_depth(self) -> int:
        return 1 << self.log_wgt_depth

    @property
    def acc_depth(self) -> int:
        return 1 << self.log_acc_depth

    @property
    def out_depth(self) -> int:
        return 1 << self.log_out_depth

    def to_dict(self) -> dict[str, int]:
        """The file's content: `{KEY: value}`, the inverse of `spec_from_dict`."""
        return {key: getattr(self, key.lower()) for key in _RANGES}

    def overrides(self) -> dict[str, int]:
        """The keys where this spec differs from VTA's default (`{}` for the default)."""
        default = default_spec().to_dict()
        return {k: v for k, v in self.to_dict().items() if default[k] != v}


# The keys every file gives (the binary format's spec block, in this order).
SPEC_KEYS: tuple[str, ...] = tuple(k for k in _RANGES if k not in _OPTIONAL)


def spec_from_dict(values: object, source: str = "<spec>") -> AccelSpec:
    """Build a spec from `{KEY: value}`; every key but the optional ones is required,
    no other is allowed."""
    if not isinstance(values, dict):
        raise SpecError(source, None, "a spec is a table of KEY: integer entries")
    unknown = [k for k in values if k not in _RANGES]
    if unknown:
        raise SpecError(source, str(unknown[0]), f"unknown key (the keys are {', '.join(SPEC_KEYS)})")
    missing = [k for k in SPEC_KEYS if k not in values]
    if missing:
        raise SpecError(source, missing[0], "missing (every key must be given)")
    return AccelSpec(**{k.lower(): v for k, v in {**_OPTIONAL, **values}.items()}, source=source)


def load_spec(path: str | Path) -> AccelSpec:
    """Read a `.json` or `.toml` spec file."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise SpecError(source, None, f"cannot read the spec file: {e.strerror or e}") from None
    if path.suffix == ".json":
        try:
            values = json.loads(text)
        except json.JSONDecodeError as e:
            raise SpecError(f"{source}:{e.lineno}:{e.colno}", None, f"not valid JSON: {e.msg}") from None
    elif path.suffix == ".toml":
        try:
            import tomllib  # Python 3.11+
        except ImportError:
            raise SpecError(source, None, "reading TOML needs Python 3.11; use a .json spec") from None
        try:
            values = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SpecError(source, None, f"not valid TOML: {e}") from None
    else:
        raise SpecError(source, None, "a spec file ends in .json or .toml")
    return spec_from_dict(values, source)


@functools.cache
def default_spec() -> AccelSpec:
    """VTA's default configuration (`vta_default.json`)."""
    return load_spec(DEFAULT_SPEC_PATH)


def buffer_use(data_shape: Sequence[int], kernel_shape: Sequence[int], strides: Sequence[int],
               config: dict, spec) -> dict[str, tuple[int, int]]:
    """{buffer: (elements the config's tiles take, elements it holds)} for the input,
    weight and accumulator buffers: every virtual thread holds its own input tile
    (tile_ic channel blocks of the window under tile_h x tile_w outputs), its weights
    (tile_oc x tile_ic blocks of KH x KW taps), and its accumulator, epilogue result
    (tile_oc blocks of the output tile each) and bias (tile_oc elements)."""
    kh, kw = kernel_shape[2:]
    sh, sw = strides
    threads, tile_oc, tile_ic = config["threads"], config["tile_oc"], config["tile_ic"]
    th, tw = config["tile_h"], config["tile_w"]
    window = ((th - 1) * sh + kh) * ((tw - 1) * sw + kw)
    return {
        "inp_buffer": (threads * tile_ic * window, spec.inp_depth),
        "wgt_buffer": (threads * tile_oc * tile_ic * kh * kw, spec.wgt_depth),
        "acc_buffer": (threads * tile_oc * (2 * th * tw + 1), spec.acc_depth),
    }
