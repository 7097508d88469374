"""The `accel` dialect: the instruction set of the VTA-like accelerator.

One op per instruction of `tilecraft.backends.accel.isa` (LOAD, STORE, GEMM, ALU, FINISH),
with the same field names; the bit layout of each instruction and micro-op, and the
meaning of every field, is the table in `isa`'s docstring (VTA's `hw_spec.h`), with field
widths derived from the spec. The ops live in an `accel.program`, which names its
hardware spec (`tilecraft.backends.accel.spec`; VTA's default when absent):

```mlir
accel.program @gemm spec {LOG_BLOCK = 5 : i64} {      // or spec "my_spec.json"
  accel.buffer @A inp dram(0) elems(64)                // DRAM layout table (optional)
  accel.uop_kernel @k {                                // micro-ops: dst, src, wgt
    accel.uop 0, 0, 0
    accel.uop 1, 1, 0
  }
  %t0 = accel.load inp sram(0) dram(0) size(4, 16) stride(16) pad(1, 1, 0, 0)
  %t1 = accel.load wgt sram(0) dram(0) size(1, 4) stride(4)
  %t2 = accel.gemm @k out 4 in 2 dst(2, 1) src(16, 1) wgt(0, 0) after %t0, %t1
  %t3 = accel.alu shr imm(3) @k out 1 in 1 dst(0, 0) src(0, 0)
  %t4 = accel.store out sram(0) dram(0) size(1, 16) stride(16) after %t3
  accel.finish after %t4
}
```

Instructions
------------
- `accel.load <type> sram(b) dram(d) size(y, x) stride(s) [pad(y0, y1, x0, x1)]` — LOAD:
  type `uop`, `inp`, `wgt` or `acc`. `accel.store out ...` — STORE (type `out`, no pad).
- `accel.gemm [reset] <uops> out N in M dst(o, i) src(o, i) wgt(o, i)` — GEMM; `<uops>`
  is a micro-op kernel `@k` (placed and loaded by the backend, see below) or an explicit
  uop-buffer range `uops(begin, end)`; `dst(o, i)` are dst_factor_out/in, and so on.
- `accel.alu [reset] <min|max|add|shr|mul> [imm(v)] <uops> out N in M dst(o, i) src(o, i)`
  — ALU; `imm(v)` sets use_imm (the tensor operand `src` is then ignored).
- `accel.finish` — FINISH.
- `accel.uop_kernel @k [dram(d)] { accel.uop dst, src, wgt ... }` — a named micro-op
  kernel; `dram(d)` pins its place in DRAM (uop elements), else the backend places it.
- `accel.buffer @A <type> dram(d) elems(n)` — a DRAM region of n elements of a memory type
  at element address d: the binary's DRAM layout table.

DRAM addresses and strides count elements of the memory type, SRAM bases buffer elements
(accel-plan conventions; `AccelSpec.*_elem_bytes`).

Tokens
------
The machine runs three modules, each in its own stream order: load (LOAD inp/wgt),
compute (LOAD uop/acc, GEMM, ALU, FINISH) and store (STORE). Every instruction but
FINISH yields a `!accel.token`; `after %a, %b` makes it wait for those instructions.
A token between two modules is a dependence carried by one of VTA's four queues
(load<->compute, compute<->store): `lower-accel-tokens` turns it into a push on the
producer and a pop on the consumer. A token inside one module is implied by stream order
and dropped; one between load and store directly is an error (no such queue).

After lowering, the flags are written `flags(pop_prev, push_next)`: pop before running,
push after, "prev"/"next" being the neighbour module in load -> compute -> store. A
program either uses tokens between modules or flags, never both. At flag level the
program verifier checks that the k-th pop of each queue has a k-th push and that the
three in-order modules cannot deadlock (`tilecraft.backends.accel.verify`).

Verification
------------
Each op checks what it can alone (a memory type the op cannot move, negative values,
empty loops). What needs the spec or the whole program is checked when `accel.program`
verifies, by `tilecraft.backends.accel.verify` (this module cannot import the backend
that reads specs; see `register_program_check`): values that do not fit their bit field
(isa's layout at the program's spec), SRAM ranges past a buffer's depth, micro-op
kernels by name, GEMM/ALU index ranges computed from micro-ops and loop factors, the uop
buffer's content at each GEMM, tokens and flags, DRAM overlap. Each error names the
instruction at fault.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import ClassVar

from xdsl.dialects.builtin import (
    DictionaryAttr,
    IntAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, NoTerminator, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


# -- attributes and types -------------------------------------------------------------
class MemoryType(StrEnum):
    """`isa.MemoryType` by name (in lower case), as the custom syntax writes it."""

    UOP = "uop"
    WGT = "wgt"
    INP = "inp"
    ACC = "acc"
    OUT = "out"
    ACC_8BIT = "acc_8bit"


class AluOpcode(StrEnum):
    MIN = "min"
    MAX = "max"
    ADD = "add"
    SHR = "shr"
    MUL = "mul"


@irdl_attr_definition
class MemoryTypeAttr(EnumAttribute[MemoryType], SpacedOpaqueSyntaxAttribute):
    name = "accel.memory_type"


@irdl_attr_definition
class AluOpcodeAttr(EnumAttribute[AluOpcode], SpacedOpaqueSyntaxAttribute):
    name = "accel.alu_opcode"


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """`!accel.token`: an instruction has run (what a later one may wait for)."""

    name = "accel.token"


class Unit(Enum):
    """The three modules of the machine, in pipeline order."""

    LOAD = 0
    COMPUTE = 1
    STORE = 2


FLAGS = ("pop_prev", "pop_next", "push_prev", "push_next")
LOAD_TYPES = (MemoryType.UOP, MemoryType.INP, MemoryType.WGT, MemoryType.ACC)


def _check_nonneg(**values: int) -> None:
    for name, value in values.items():
        if value < 0:
            raise VerifyException(f"{name} must not be negative, got {value}.")


# -- the program --------------------------------------------------------------------------
# The checks that need the hardware spec (field widths, buffer depths, index ranges, the
# uop buffer) and the whole program (tokens, flags) live in
# `tilecraft.backends.accel.verify`: the dialects sit below the backend that knows the
# spec. `tilecraft.backends.accel.program` installs that check here when it is imported
# (the registry's `accel` dialect, and every pass that builds accel IR, import it); an
# `accel.program` verified without it is an error, never a silent pass.
_PROGRAM_CHECKS: list[Callable[[ProgramOp], None]] = []


def register_program_check(check: Callable[[ProgramOp], None]) -> None:
    if check not in _PROGRAM_CHECKS:
        _PROGRAM_CHECKS.append(check)


# Likewise `ProgramOp.spec` is read by `tilecraft.backends.accel.program.spec_of`,
# installed here when that module is imported.
_SPEC_READERS: list[Callable[[ProgramOp], object]] = []


def register_spec_reader(reader: Callable[[ProgramOp], object]) -> None:
    _SPEC_READERS[:] = [reader]


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """`accel.program @name [spec "file.json" | spec {KEY = v, ...}] { ... }`: one
    instruction stream, in stream order, with its micro-op kernels and DRAM buffers.
    `spec` is a spec file's path or a dictionary of keys overriding VTA's default
    (`tilecraft.backends.accel.program.spec_of` reads it)."""

    name = "accel.program"
    sym_name = prop_def(StringAttr)
    spec_attr = opt_prop_def(Attribute, prop_name="spec")
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), SymbolOpInterface(), SymbolTable())

    def __init__(self, name: str, body: Region | None = None, spec: Attribute | None = None):
        properties: dict[str, Attribute] = {"sym_name": StringAttr(name)}
        if spec is not None:
            properties["spec"] = spec
        super().__init__(properties=properties, regions=[body or Region(Block())])

    @property
    def spec(self):
        """The program's `AccelSpec` (`SpecError` if its file or dictionary is bad)."""
        if not _SPEC_READERS:
            raise VerifyException("reading an accel.program's spec needs tilecraft.backends.accel.program imported.")
        return _SPEC_READERS[0](self)

    def verify_(self) -> None:
        attr = self.spec_attr
        is_path = isinstance(attr, StringAttr)
        is_table = isinstance(attr, DictionaryAttr) and all(isinstance(v, IntegerAttr) for v in attr.data.values())
        if attr is not None and not (is_path or is_table):
            raise VerifyException('spec is a path ("file.json") or a {KEY = integer} dictionary.')
        if not _PROGRAM_CHECKS:
            raise VerifyException(
                "the accel program checks are not loaded: import tilecraft.backends.accel.program "
                "(the registry's accel dialect does)."
            )
        for check in _PROGRAM_CHECKS:
            check(self)

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        if self.spec_attr is not None:
            printer.print_string(" spec ")
            printer.print_attribute(self.spec_attr)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name().data
        spec = parser.parse_attribute() if parser.parse_optional_keyword("spec") else None
        attributes = parser.parse_optional_attr_dict_with_keyword()
        op = cls(name, _parse_body(parser), spec)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


# -- small parse/print helpers -----------------------------------------------------------
def _parse_body(parser: Parser) -> Region:
    """A single-block region; `{ }` gives one empty block (not zero blocks)."""
    region = parser.parse_region()
    if not region.blocks:
        region.add_block(Block())
    return region


def _parse_ints(parser: Parser, keyword: str | None, count: int) -> list[int]:
    """`keyword(v1, ..., vcount)`; `keyword` None when the caller has read it."""
    if keyword is not None:
        parser.parse_keyword(keyword)
    parser.parse_punctuation("(")
    values = [parser.parse_integer(allow_boolean=False)]
    for _ in range(count - 1):
        parser.parse_punctuation(",")
        values.append(parser.parse_integer(allow_boolean=False))
    parser.parse_punctuation(")")
    return values


def _parse_optional_ints(parser: Parser, keyword: str, count: int) -> list[int] | None:
    if parser.parse_optional_keyword(keyword) is None:
        return None
    return _parse_ints(parser, None, count)


def _print_ints(printer: Printer, keyword: str, *values: int) -> None:
    printer.print_string(f" {keyword}({', '.join(str(v) for v in values)})")


def _parse_tail(parser: Parser) -> tuple[list[SSAValue], dict[str, Attribute], dict[str, Attribute]]:
    """`[after %a, %b] [flags(pop_prev, ...)] attr-dict` -> (deps, flag props, attributes)."""
    deps: list[SSAValue] = []
    if parser.parse_optional_keyword("after"):
        deps = parser.parse_comma_separated_list(
            parser.Delimiter.NONE,
            lambda: parser.resolve_operand(parser.parse_unresolved_operand(), TokenType()),
        )
    flags: dict[str, Attribute] = {}
    if parser.parse_optional_keyword("flags"):
        names = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: _keyword_in(parser, FLAGS)
        )
        flags = {name: UnitAttr() for name in names}
    attributes = parser.parse_optional_attr_dict()
    return deps, flags, attributes


def _keyword_in(parser: Parser, keywords: Sequence[str]) -> str:
    found = parser.parse_optional_keyword_in(keywords)
    if found is None:
        parser.raise_error(f"expected one of {', '.join(keywords)}")
    return found


def _print_tail(printer: Printer, op: InstructionOp) -> None:
    if op.deps:
        printer.print_string(" after ")
        printer.print_list(op.deps, printer.print_ssa_value)
    flags = op.flags()
    if flags:
        printer.print_string(f" flags({', '.join(flags)})")
    printer.print_op_attributes(op.attributes)


# -- instructions --------------------------------------------------------------------------
class InstructionOp(IRDLOperation):
    """What every instruction has: the tokens it waits for and its dependence flags."""

    deps = var_operand_def(TokenType)
    pop_prev = opt_prop_def(UnitAttr)
    pop_next = opt_prop_def(UnitAttr)
    push_prev = opt_prop_def(UnitAttr)
    push_next = opt_prop_def(UnitAttr)

    traits = lazy_traits_def(lambda: (HasParent(ProgramOp),))

    def flags(self) -> list[str]:
        """The flags set, in `FLAGS` order."""
        return [name for name in FLAGS if name in self.properties]

    def set_flags(self, names: Sequence[str]) -> None:
        for name in FLAGS:
            if name in names:
                self.properties[name] = UnitAttr()
            else:
                self.properties.pop(name, None)

    def flag_values(self) -> dict[str, bool]:
        return {name: name in self.properties for name in FLAGS}

    @property
    def unit(self) -> Unit:
        raise NotImplementedError


class _MemoryOp(InstructionOp):
    memory_type = prop_def(MemoryTypeAttr)
    sram_base = prop_def(IntAttr)
    dram_base = prop_def(IntAttr)
    y_size = prop_def(IntAttr)
    x_size = prop_def(IntAttr)
    x_stride = prop_def(IntAttr)
    y_pad_0 = prop_def(IntAttr)
    y_pad_1 = prop_def(IntAttr)
    x_pad_0 = prop_def(IntAttr)
    x_pad_1 = prop_def(IntAttr)
    token = result_def(TokenType)

    FIELDS: ClassVar[tuple[str, ...]] = ("sram_base", "dram_base", "y_size", "x_size", "x_stride", "y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1")

    def __init__(
        self,
        memory_type: str | MemoryType,
        *,
        sram_base: int,
        dram_base: int,
        y_size: int,
        x_size: int,
        x_stride: int,
        pads: Sequence[int] = (0, 0, 0, 0),
        deps: Sequence[SSAValue] = (),
        flags: Sequence[str] = (),
    ):
        values = dict(zip(self.FIELDS, (sram_base, dram_base, y_size, x_size, x_stride, *pads)))
        properties: dict[str, Attribute] = {k: IntAttr(v) for k, v in values.items()}
        properties["memory_type"] = MemoryTypeAttr(MemoryType(memory_type))
        properties |= {name: UnitAttr() for name in flags}
        super().__init__(operands=[deps], properties=properties, result_types=[TokenType()])

    def field(self, name: str) -> int:
        return self.properties[name].data  # type: ignore[union-attr]

    @property
    def pads(self) -> tuple[int, int, int, int]:
        return tuple(self.field(n) for n in ("y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1"))  # type: ignore[return-value]

    @property
    def mem(self) -> MemoryType:
        return self.memory_type.data

    def sram_extent(self) -> int:
        """Buffer elements written (LOAD, padding included) or read (STORE)."""
        y0, y1, x0, x1 = self.pads
        y, x = self.field("y_size"), self.field("x_size")
        if y == 0 or x == 0:
            return 0
        return (y0 + y + y1) * (x0 + x + x1)

    def fields(self) -> dict[str, int]:
        return {name: self.field(name) for name in self.FIELDS}

    def verify_(self) -> None:
        _check_nonneg(**self.fields())

    def print(self, printer: Printer):
        printer.print_string(f" {self.mem.value}")
        _print_ints(printer, "sram", self.field("sram_base"))
        _print_ints(printer, "dram", self.field("dram_base"))
        _print_ints(printer, "size", self.field("y_size"), self.field("x_size"))
        _print_ints(printer, "stride", self.field("x_stride"))
        if any(self.pads):
            _print_ints(printer, "pad", *self.pads)
        _print_tail(printer, self)

    @classmethod
    def parse(cls, parser: Parser):
        memory_type = _keyword_in(parser, [m.value for m in MemoryType])
        (sram,) = _parse_ints(parser, "sram", 1)
        (dram,) = _parse_ints(parser, "dram", 1)
        y, x = _parse_ints(parser, "size", 2)
        (stride,) = _parse_ints(parser, "stride", 1)
        pads = _parse_optional_ints(parser, "pad", 4) or (0, 0, 0, 0)
        deps, flags, attributes = _parse_tail(parser)
        op = cls(
            memory_type, sram_base=sram, dram_base=dram, y_size=y, x_size=x, x_stride=stride,
            pads=pads, deps=deps, flags=list(flags),
        )
        op.attributes |= attributes
        return op


@irdl_op_definition
class LoadOp(_MemoryOp):
    """LOAD: DRAM -> a buffer, `%t = accel.load inp sram(0) dram(8) size(2, 4) stride(16)
    pad(1, 1, 0, 0)`. uop and acc loads run on the compute module, inp and wgt on load."""

    name = "accel.load"

    @property
    def unit(self) -> Unit:
        return Unit.LOAD if self.mem in (MemoryType.INP, MemoryType.WGT) else Unit.COMPUTE

    def verify_(self) -> None:
        if self.mem not in LOAD_TYPES:
            raise VerifyException(
                f"accel.load moves uop, inp, wgt or acc elements, not {self.mem.value}."
            )
        if self.mem == MemoryType.UOP and any(self.pads):
            raise VerifyException("a uop load has no padding.")
        super().verify_()


@irdl_op_definition
class StoreOp(_MemoryOp):
    """STORE: the output buffer -> DRAM, `%t = accel.store out sram(0) dram(0) size(1, 16)
    stride(16)` (store module)."""

    name = "accel.store"

    @property
    def unit(self) -> Unit:
        return Unit.STORE

    def verify_(self) -> None:
        if self.mem != MemoryType.OUT:
            raise VerifyException(f"accel.store moves out elements, not {self.mem.value}.")
        if any(self.pads):
            raise VerifyException("a store has no padding.")
        super().verify_()


class _MicroOpLoopOp(InstructionOp):
    """Shared by GEMM and ALU: micro-ops (a kernel by name or a uop-buffer range) run in
    two loops `out` x `in`, each index advanced by its factors."""

    reset = opt_prop_def(UnitAttr)
    kernel = opt_prop_def(StringAttr)  # a symbol in the program (printed @k)
    uop_begin = opt_prop_def(IntAttr)
    uop_end = opt_prop_def(IntAttr)
    iter_out = prop_def(IntAttr)
    iter_in = prop_def(IntAttr)
    dst_factor_out = prop_def(IntAttr)
    dst_factor_in = prop_def(IntAttr)
    src_factor_out = prop_def(IntAttr)
    src_factor_in = prop_def(IntAttr)
    token = result_def(TokenType)

    LOOP_FIELDS: ClassVar[tuple[str, ...]] = ("iter_out", "iter_in", "dst_factor_out", "dst_factor_in", "src_factor_out", "src_factor_in")
    EXTRA_FIELDS: ClassVar[tuple[str, ...]] = ()

    @property
    def unit(self) -> Unit:
        return Unit.COMPUTE

    def field(self, name: str) -> int:
        return self.properties[name].data  # type: ignore[union-attr]

    def loop_fields(self) -> dict[str, int]:
        return {name: self.field(name) for name in self.LOOP_FIELDS}

    def uop_range(self) -> tuple[int, int] | None:
        if self.uop_begin is None or self.uop_end is None:
            return None
        return self.uop_begin.data, self.uop_end.data

    def _common_properties(self, reset, kernel, uops, loop, flags) -> dict[str, Attribute]:
        properties: dict[str, Attribute] = {name: IntAttr(value) for name, value in loop.items()}
        if reset:
            properties["reset"] = UnitAttr()
        if kernel is not None:
            properties["kernel"] = StringAttr(kernel)
        if uops is not None:
            properties["uop_begin"], properties["uop_end"] = IntAttr(uops[0]), IntAttr(uops[1])
        properties |= {name: UnitAttr() for name in flags}
        return properties

    def verify_(self) -> None:
        if (self.kernel is None) == (self.uop_range() is None):
            raise VerifyException(
                f"{self.name} runs either a micro-op kernel (@k) or a uop range (uops(begin, end)), exactly one."
            )
        fields = {name: self.field(name) for name in self.LOOP_FIELDS + self.EXTRA_FIELDS}
        if (uops := self.uop_range()) is not None:
            fields |= {"uop_begin": uops[0], "uop_end": uops[1]}
        _check_nonneg(**fields)
        for name in ("iter_out", "iter_in"):
            if self.field(name) < 1:
                raise VerifyException(f"{name} must be at least 1, got {self.field(name)}.")
        if uops is not None and uops[1] <= uops[0]:
            raise VerifyException(f"the uop range [{uops[0]}, {uops[1]}) is empty.")

    def _print_head(self, printer: Printer) -> None:
        if self.kernel is not None:
            printer.print_string(" ")
            printer.print_symbol_name(self.kernel.data)
        else:
            _print_ints(printer, "uops", *self.uop_range())  # type: ignore[misc]
        printer.print_string(f" out {self.field('iter_out')} in {self.field('iter_in')}")
        _print_ints(printer, "dst", self.field("dst_factor_out"), self.field("dst_factor_in"))
        _print_ints(printer, "src", self.field("src_factor_out"), self.field("src_factor_in"))

    @staticmethod
    def _parse_head(parser: Parser) -> tuple[str | None, tuple[int, int] | None, dict[str, int]]:
        kernel = parser.parse_optional_symbol_name()
        uops = None if kernel is not None else tuple(_parse_ints(parser, "uops", 2))
        parser.parse_keyword("out")
        iter_out = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("in")
        iter_in = parser.parse_integer(allow_boolean=False)
        dst = _parse_ints(parser, "dst", 2)
        src = _parse_ints(parser, "src", 2)
        loop = dict(zip(_MicroOpLoopOp.LOOP_FIELDS, (iter_out, iter_in, *dst, *src)))
        return (kernel.data if kernel is not None else None), uops, loop  # type: ignore[return-value]


@irdl_op_definition
class GemmOp(_MicroOpLoopOp):
    """GEMM: `%t = accel.gemm [reset] @k out 4 in 14 dst(14, 1) src(16, 1) wgt(0, 0)`."""

    name = "accel.gemm"
    EXTRA_FIELDS: ClassVar[tuple[str, ...]] = ("wgt_factor_out", "wgt_factor_in")
    wgt_factor_out = prop_def(IntAttr)
    wgt_factor_in = prop_def(IntAttr)

    def __init__(
        self,
        *,
        kernel: str | None = None,
        uops: tuple[int, int] | None = None,
        iter_out: int,
        iter_in: int,
        dst: tuple[int, int],
        src: tuple[int, int],
        wgt: tuple[int, int],
        reset: bool = False,
        deps: Sequence[SSAValue] = (),
        flags: Sequence[str] = (),
    ):
        loop = dict(zip(self.LOOP_FIELDS, (iter_out, iter_in, *dst, *src)))
        properties = self._common_properties(reset, kernel, uops, loop, flags)
        properties["wgt_factor_out"], properties["wgt_factor_in"] = IntAttr(wgt[0]), IntAttr(wgt[1])
        super().__init__(operands=[deps], properties=properties, result_types=[TokenType()])

    def print(self, printer: Printer):
        if self.reset is not None:
            printer.print_string(" reset")
        self._print_head(printer)
        _print_ints(printer, "wgt", self.field("wgt_factor_out"), self.field("wgt_factor_in"))
        _print_tail(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> GemmOp:
        reset = parser.parse_optional_keyword("reset") is not None
        kernel, uops, loop = cls._parse_head(parser)
        wgt = _parse_ints(parser, "wgt", 2)
        deps, flags, attributes = _parse_tail(parser)
        op = cls(
            kernel=kernel, uops=uops, iter_out=loop["iter_out"], iter_in=loop["iter_in"],
            dst=(loop["dst_factor_out"], loop["dst_factor_in"]),
            src=(loop["src_factor_out"], loop["src_factor_in"]),
            wgt=tuple(wgt), reset=reset, deps=deps, flags=list(flags),
        )  # fmt: skip
        op.attributes |= attributes
        return op


@irdl_op_definition
class AluOp(_MicroOpLoopOp):
    """ALU: `%t = accel.alu max imm(0) @k out 1 in 16 dst(1, 0) src(1, 0)` (relu), or
    without `imm(...)` the tensor operand acc[src]: `accel.alu add uops(0, 1) ...`."""

    name = "accel.alu"
    alu_opcode = prop_def(AluOpcodeAttr)
    imm = opt_prop_def(IntAttr)  # present = use_imm

    def __init__(
        self,
        opcode: str | AluOpcode,
        *,
        imm: int | None = None,
        kernel: str | None = None,
        uops: tuple[int, int] | None = None,
        iter_out: int,
        iter_in: int,
        dst: tuple[int, int],
        src: tuple[int, int],
        reset: bool = False,
        deps: Sequence[SSAValue] = (),
        flags: Sequence[str] = (),
    ):
        loop = dict(zip(self.LOOP_FIELDS, (iter_out, iter_in, *dst, *src)))
        properties = self._common_properties(reset, kernel, uops, loop, flags)
        properties["alu_opcode"] = AluOpcodeAttr(AluOpcode(opcode))
        if imm is not None:
            properties["imm"] = IntAttr(imm)
        super().__init__(operands=[deps], properties=properties, result_types=[TokenType()])

    @property
    def opcode(self) -> AluOpcode:
        return self.alu_opcode.data

    def print(self, printer: Printer):
        if self.reset is not None:
            printer.print_string(" reset")
        printer.print_string(f" {self.opcode.value}")
        if self.imm is not None:
            _print_ints(printer, "imm", self.imm.data)
        self._print_head(printer)
        _print_tail(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> AluOp:
        reset = parser.parse_optional_keyword("reset") is not None
        opcode = _keyword_in(parser, [o.value for o in AluOpcode])
        imm = _parse_optional_ints(parser, "imm", 1)
        kernel, uops, loop = cls._parse_head(parser)
        deps, flags, attributes = _parse_tail(parser)
        op = cls(
            opcode, imm=imm[0] if imm else None, kernel=kernel, uops=uops,
            iter_out=loop["iter_out"], iter_in=loop["iter_in"],
            dst=(loop["dst_factor_out"], loop["dst_factor_in"]),
            src=(loop["src_factor_out"], loop["src_factor_in"]),
            reset=reset, deps=deps, flags=list(flags),
        )  # fmt: skip
        op.attributes |= attributes
        return op


@irdl_op_definition
class FinishOp(InstructionOp):
    """FINISH: the end of the stream (compute module), `accel.finish after %t`."""

    name = "accel.finish"

    def __init__(self, deps: Sequence[SSAValue] = (), flags: Sequence[str] = ()):
        super().__init__(operands=[deps], properties={name: UnitAttr() for name in flags})

    @property
    def unit(self) -> Unit:
        return Unit.COMPUTE

    def print(self, printer: Printer):
        _print_tail(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> FinishOp:
        deps, flags, attributes = _parse_tail(parser)
        op = cls(deps, list(flags))
        op.attributes |= attributes
        return op


# -- micro-op kernels and DRAM buffers ------------------------------------------------------
def _indices(uop) -> tuple[int, int, int]:
    """(dst, src, wgt) of a 3-tuple or of an `isa.MicroOp`-like object."""
    if isinstance(uop, tuple):
        return uop
    return uop.dst_idx, uop.src_idx, uop.wgt_idx


@irdl_op_definition
class UopKernelOp(IRDLOperation):
    """A named micro-op kernel: `accel.uop_kernel @k [dram(d)] { accel.uop 0, 0, 0 ... }`;
    built from (dst, src, wgt) tuples or `isa.MicroOp`s.
    The backend places it in DRAM once (at `d` uop elements when given) and loads it into
    the uop buffer before a GEMM/ALU that names it, unless it is still resident."""

    name = "accel.uop_kernel"
    sym_name = prop_def(StringAttr)
    dram_base = opt_prop_def(IntAttr)
    body = region_def("single_block")
    traits = lazy_traits_def(lambda: (NoTerminator(), SymbolOpInterface(), HasParent(ProgramOp)))

    def __init__(
        self,
        name: str,
        uops: Sequence = (),
        dram_base: int | None = None,
        body: Region | None = None,
    ):
        properties: dict[str, Attribute] = {"sym_name": StringAttr(name)}
        if dram_base is not None:
            properties["dram_base"] = IntAttr(dram_base)
        if body is None:
            body = Region(Block([UopOp(*_indices(u)) for u in uops]))
        super().__init__(properties=properties, regions=[body])

    def uops(self) -> list[tuple[int, int, int]]:
        """(dst, src, wgt) of each micro-op, in order."""
        return [op.indices() for op in self.body.block.ops if isinstance(op, UopOp)]

    def verify_(self) -> None:
        if not any(isinstance(op, UopOp) for op in self.body.block.ops):
            raise VerifyException("a micro-op kernel holds at least one accel.uop.")
        if self.dram_base is not None and self.dram_base.data < 0:
            raise VerifyException(f"dram must not be negative, got {self.dram_base.data}.")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        if self.dram_base is not None:
            _print_ints(printer, "dram", self.dram_base.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> UopKernelOp:
        name = parser.parse_symbol_name().data
        dram = _parse_optional_ints(parser, "dram", 1)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        op = cls(name, dram_base=dram[0] if dram else None, body=_parse_body(parser))
        if attributes is not None:
            op.attributes |= attributes.data
        return op


@irdl_op_definition
class UopOp(IRDLOperation):
    """One micro-op: `accel.uop dst, src, wgt` (buffer indices before loop factors)."""

    name = "accel.uop"
    dst_idx = prop_def(IntAttr)
    src_idx = prop_def(IntAttr)
    wgt_idx = prop_def(IntAttr)
    traits = lazy_traits_def(lambda: (HasParent(UopKernelOp),))

    def __init__(self, dst: int, src: int, wgt: int = 0):
        super().__init__(properties={"dst_idx": IntAttr(dst), "src_idx": IntAttr(src), "wgt_idx": IntAttr(wgt)})

    def indices(self) -> tuple[int, int, int]:
        return self.dst_idx.data, self.src_idx.data, self.wgt_idx.data

    def verify_(self) -> None:
        dst, src, wgt = self.indices()
        _check_nonneg(dst=dst, src=src, wgt=wgt)

    def print(self, printer: Printer):
        printer.print_string(f" {self.dst_idx.data}, {self.src_idx.data}, {self.wgt_idx.data}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> UopOp:
        values = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, lambda: parser.parse_integer(allow_boolean=False)
        )
        if len(values) != 3:
            parser.raise_error(f"accel.uop takes dst, src, wgt: 3 integers, got {len(values)}")
        op = cls(*values)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class BufferOp(IRDLOperation):
    """A DRAM region: `accel.buffer @A inp dram(0) elems(64)` (element units of its type),
    an entry of the binary's DRAM layout table, where tests and the runtime put data."""

    name = "accel.buffer"
    sym_name = prop_def(StringAttr)
    memory_type = prop_def(MemoryTypeAttr)
    dram_base = prop_def(IntAttr)
    elems = prop_def(IntAttr)
    traits = lazy_traits_def(lambda: (SymbolOpInterface(), HasParent(ProgramOp)))

    def __init__(self, name: str, memory_type: str | MemoryType, dram_base: int, elems: int):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "memory_type": MemoryTypeAttr(MemoryType(memory_type)),
                "dram_base": IntAttr(dram_base),
                "elems": IntAttr(elems),
            }
        )

    @property
    def mem(self) -> MemoryType:
        return self.memory_type.data

    def verify_(self) -> None:
        _check_nonneg(dram=self.dram_base.data, elems=self.elems.data)

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(f" {self.mem.value}")
        _print_ints(printer, "dram", self.dram_base.data)
        _print_ints(printer, "elems", self.elems.data)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> BufferOp:
        name = parser.parse_symbol_name().data
        memory_type = _keyword_in(parser, [m.value for m in MemoryType])
        (dram,) = _parse_ints(parser, "dram", 1)
        (elems,) = _parse_ints(parser, "elems", 1)
        op = cls(name, memory_type, dram, elems)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


INSTRUCTION_OPS = (LoadOp, StoreOp, GemmOp, AluOp, FinishOp)

ACCEL = Dialect(
    "accel",
    [ProgramOp, LoadOp, StoreOp, GemmOp, AluOp, FinishOp, UopKernelOp, UopOp, BufferOp],
    [TokenType, MemoryTypeAttr, AluOpcodeAttr],
)
