"""The `loop` dialect: the loop program a schedule produces (TVM's TIR, MLIR-style).

Buffers are builtin memrefs; loads and stores are `memref.load`/`memref.store`;
scalar math is `arith`/`math`; a value-producing conditional is `scf.if`. This
dialect adds only what those lack:

- `loop.for`: a normalized loop `0 <= %i < extent` (static, as TVM normalizes
  its loops, or an `index` value known when the program runs: `0 to %n`) with a
  kind: serial, parallel, vectorized, unrolled or vthread (virtual threads,
  interleaved by `inject-virtual-threads`; serial on a CPU), or bound to a GPU
  index (`blockIdx.x`, `threadIdx.y`, ...: each iteration is one block or
  thread, outlined into a kernel by `convert-loop-to-gpu`). The kind is a
  decision the backend carries out, so the same IR can be tested with any kind;
  a loop to a run-time bound is serial or parallel.
- `loop.alloc`: a named buffer in a memory scope ("global" for heap-sized,
  "local" for small per-thread scratch, "inp_buffer"/"wgt_buffer"/"acc_buffer"
  for the accelerator's on-chip buffers), live until the end of its block.
- `loop.dma`: a 2-D strided copy of whole elements with padding between a
  global and an accelerator buffer (what `inject-dma` makes of a copy nest).
- `loop.guard`: run the body only where a condition holds (the tail of a split
  that does not divide its extent, the edge of a compute_at region).
- `loop.view`: a typed buffer at a static byte offset of an `i8` buffer (the
  arena a memory plan shares among a graph's intermediate values).
- `loop.launch`: run a function on chunks of an iteration range on all cores
  (what `loop-outline-parallel` makes of a parallel loop).
- `loop.gather`/`loop.scatter`: masked per-lane memory access at flat offsets
  (what `loop-vectorize` writes where `vector.load`/`store` cannot say it).

Loop kinds (`#loop.kind`) and memory scopes (`#loop.scope`) are enum attributes;
in the custom syntax they are bare keywords (`parallel`, `local`).

Why not upstream ops:
- `loop.for` vs `scf.for`: a `loop.for` carries a kind, and its bounds are static
  attributes unless its upper bound is a run-time value; the passes that carry
  the kinds out (`loop-unroll`, `loop-vectorize`, `loop-outline-parallel`) rely on
  a static extent and leave a run-time one alone (a parallel loop to `%n` runs on
  the calling thread until `loop.launch` takes a run-time range). The body of an
  outlined parallel loop, which runs a chunk `[%begin, %end)`, is an `scf.for`.
- `loop.view` vs `memref.view`: `memref.view` takes its byte shift as an SSA
  operand; the memory plan's offsets are static, and a static offset is what lets
  the verifier check alignment and bounds here (an out-of-arena view is an error,
  not a silent overlap).
- `loop.alloc` vs `memref.alloc`/`alloca`: a loop buffer has a name (the te stage
  it holds) and a scope that decides where it lives (heap, thread stack).
- `loop.for` and `loop.guard` keep a hand-written syntax: the declarative format
  cannot name a region's entry argument before the region (`%i = 0 to 8`) nor
  hide the implicit `loop.yield`. `loop.view` keeps its `%arena[256]` syntax by
  hand too: its offset is an `IntAttr` (read as `.offset.data` by the memory
  plan), which the declarative format would print as `#builtin.int<256>`.
  `loop.alloc` and `loop.launch` use `assembly_format`.

```mlir
func.func @add(%A: memref<100xf32>, %B: memref<100xf32>, %C: memref<100xf32>) {
  loop.for %io = 0 to 7 parallel {
    loop.for %ii = 0 to 16 vectorized {
      %c16 = arith.constant 16 : index
      %t = arith.muli %io, %c16 : index
      %i = arith.addi %t, %ii : index
      %c100 = arith.constant 100 : index
      %in = arith.cmpi slt, %i, %c100 : index
      loop.guard %in {
        %a = memref.load %A[%i] : memref<100xf32>
        ...
      }
    }
  }
  func.return
}
```
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    VectorType,
    i1,
    i8,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    SingleBlockImplicitTerminator,
    SymbolTable,
    ensure_terminator,
)
from xdsl.utils.exceptions import VerifyException
from tilecraft.utils.names import name_hint


class LoopKind(StrEnum):
    """How a `loop.for` runs; each kind but serial is carried out by one pass."""

    SERIAL = "serial"
    PARALLEL = "parallel"  # loop-outline-parallel
    VECTORIZED = "vectorized"  # loop-vectorize
    UNROLLED = "unrolled"  # loop-unroll
    VTHREAD = "vthread"  # inject-virtual-threads (on a CPU without it: serial)
    # Bound to a GPU block or thread index (convert-loop-to-gpu).
    BLOCK_X = "blockIdx.x"
    BLOCK_Y = "blockIdx.y"
    BLOCK_Z = "blockIdx.z"
    THREAD_X = "threadIdx.x"
    THREAD_Y = "threadIdx.y"
    THREAD_Z = "threadIdx.z"


class MemoryScope(StrEnum):
    """Where a `loop.alloc` buffer lives."""

    GLOBAL = "global"  # the heap
    LOCAL = "local"  # the stack of the thread running the block
    SHARED = "shared"  # shared by the threads of a block (on a CPU: like local)
    # The accelerator's on-chip buffers (VTA's input, weight and accumulator
    # SRAMs), which `inject-dma` fills and drains by DMA; on a CPU: like local.
    INP_BUFFER = "inp_buffer"
    WGT_BUFFER = "wgt_buffer"
    ACC_BUFFER = "acc_buffer"


@irdl_attr_definition
class LoopKindAttr(EnumAttribute[LoopKind], SpacedOpaqueSyntaxAttribute):
    name = "loop.kind"


@irdl_attr_definition
class MemoryScopeAttr(EnumAttribute[MemoryScope], SpacedOpaqueSyntaxAttribute):
    name = "loop.scope"


def _enum(attr_type, enum_type, value, what: str):
    """An enum attribute from a string, enum member or attribute (constructor helper)."""
    if isinstance(value, attr_type):
        return value
    try:
        return attr_type(enum_type(value))
    except ValueError:
        choices = ", ".join(member.value for member in enum_type)
        raise VerifyException(f"{what} must be one of {choices}, not '{value}'.") from None


LOOP_KINDS = tuple(kind.value for kind in LoopKind)
GPU_LOOP_KINDS = tuple(kind for kind in LOOP_KINDS if kind.startswith(("blockIdx.", "threadIdx.")))
BUFFER_SCOPES = tuple(scope.value for scope in MemoryScope)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a loop or guard body (implicit in the custom syntax)."""

    name = "loop.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ForOp, GuardOp)))
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class ForOp(IRDLOperation):
    """`loop.for %i = 0 to 64 parallel { ... }`: `%i` takes each value in [lb, ub).

    The upper bound may be an `index` value instead (`loop.for %i = 0 to %n
    parallel`), a size known when the program runs: the loop runs while
    `%i < %n` (not at all when `%n <= lb`). Such a loop is serial or parallel; the
    kinds that copy or widen the body per iteration (vectorized, unrolled,
    vthread) need a static extent. Passes that need one ask `is_static` first."""

    name = "loop.for"
    lb = prop_def(IntAttr)
    ub = prop_def(IntAttr)  # (the static bound; with `upper`, equal to lb and unused)
    kind = prop_def(LoopKindAttr)
    upper = opt_operand_def(IndexType())
    body = region_def("single_block")
    traits = traits_def(SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self,
        lb: int,
        ub: int | SSAValue,
        kind: str | LoopKind | LoopKindAttr = "serial",
        body: Region | None = None,
        var_name: str | None = None,
    ):
        if body is None:
            body = Region(Block([YieldOp()], arg_types=[IndexType()]))
        dynamic = isinstance(ub, SSAValue)
        super().__init__(
            operands=[[ub] if dynamic else []],
            properties={
                "lb": IntAttr(lb),
                "ub": IntAttr(lb if dynamic else ub),
                "kind": _enum(LoopKindAttr, LoopKind, kind, "loop.for kind"),
            },
            regions=[body],
        )
        if var_name is not None:
            self.var.name_hint = name_hint(var_name)

    @property
    def var(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def is_static(self) -> bool:
        return self.upper is None

    @property
    def extent(self) -> int:
        if self.upper is not None:
            raise VerifyException("loop.for has a dynamic extent here (a pass that needs a static one "
                                  "must check `is_static`)")  # fmt: skip
        return self.ub.data - self.lb.data

    def verify_(self) -> None:
        if self.upper is not None and self.kind.data not in (LoopKind.SERIAL, LoopKind.PARALLEL):
            raise VerifyException(
                f"a {self.kind.data.value} loop.for needs a static extent; "
                "a bound known only when the program runs takes a serial or parallel loop."
            )
        if self.ub.data < self.lb.data:
            raise VerifyException(
                f"loop.for has an upper bound {self.ub.data} below its lower "
                f"bound {self.lb.data}."
            )
        block = self.body.block
        if len(block.args) != 1 or not isinstance(block.args[0].type, IndexType):
            raise VerifyException("loop.for body takes one index argument.")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_ssa_value(self.var)
        printer.print_string(f" = {self.lb.data} to ")
        if self.upper is not None:
            printer.print_ssa_value(self.upper)
        else:
            printer.print_string(f"{self.ub.data}")
        if self.kind.data != LoopKind.SERIAL:
            printer.print_string(f" {self.kind.data.value}")
        printer.print_string(" ")
        printer.print_region(
            self.body, print_entry_block_args=False, print_block_terminators=False
        )
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        var = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lb = parser.parse_integer()
        parser.parse_keyword("to")
        upper = parser.parse_optional_unresolved_operand()
        ub = parser.resolve_operand(upper, IndexType()) if upper is not None else parser.parse_integer()
        pos = parser.pos
        kind = parser.parse_optional_identifier() or "serial"
        if kind not in LOOP_KINDS:
            parser.raise_error(
                f"loop.for kind must be one of {', '.join(LOOP_KINDS)}, not '{kind}'.",
                pos,
                parser.pos,
            )
        body = parser.parse_region([var.resolve(IndexType())])
        op = cls(lb, ub, kind, body)
        op.attributes |= parser.parse_optional_attr_dict()
        ensure_terminator(op, SingleBlockImplicitTerminator(YieldOp))
        return op


@irdl_op_definition
class GuardOp(IRDLOperation):
    """`loop.guard %cond { ... }`: the body runs only where `%cond` (i1) holds."""

    name = "loop.guard"
    cond = operand_def(i1)
    body = region_def("single_block")
    traits = traits_def(SingleBlockImplicitTerminator(YieldOp))

    def __init__(self, cond: SSAValue | Operation, body: Region | None = None):
        if body is None:
            body = Region(Block([YieldOp()]))
        super().__init__(operands=[cond], regions=[body])

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_ssa_value(self.cond)
        printer.print_string(" ")
        printer.print_region(self.body, print_block_terminators=False)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> GuardOp:
        cond = parser.resolve_operand(parser.parse_unresolved_operand(), i1)
        body = parser.parse_region()
        op = cls(cond, body)
        op.attributes |= parser.parse_optional_attr_dict()
        ensure_terminator(op, SingleBlockImplicitTerminator(YieldOp))
        return op


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A named buffer in a scope: `%CL = loop.alloc "C.local" local : memref<8x8xf32>`.

    It lives until the end of the enclosing block. The backend puts "local"
    buffers on the stack of the thread that runs the block, "global" ones on the heap.
    A `?` size is given as an `index` operand, one per `?` in order:
    `%B = loop.alloc "B" global (%n) : memref<?x64xf32>` (on the heap, whatever its scope).
    """

    name = "loop.alloc"
    buffer_name = prop_def(StringAttr, prop_name="name")
    scope = prop_def(MemoryScopeAttr)
    sizes = var_operand_def(IndexType())
    buffer = result_def(MemRefType)
    assembly_format = "$name $scope (`(` $sizes^ `)`)? attr-dict `:` type($buffer)"

    def __init__(
        self,
        name: str,
        scope: str | MemoryScope | MemoryScopeAttr,
        memref_type: MemRefType,
        sizes: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(
            operands=[sizes],
            properties={
                "name": StringAttr(name),
                "scope": _enum(MemoryScopeAttr, MemoryScope, scope, "loop.alloc scope"),
            },
            result_types=[memref_type],
        )

    def verify_(self) -> None:
        mtype = self.buffer.type
        assert isinstance(mtype, MemRefType)
        shape = mtype.get_shape()
        if any(d == 0 or d < 0 and d != DYNAMIC_INDEX for d in shape):
            raise VerifyException("loop.alloc needs positive extents (or '?' sizes given as operands).")
        dynamic = sum(d == DYNAMIC_INDEX for d in shape)
        if len(self.sizes) != dynamic:
            raise VerifyException(
                f"loop.alloc of {mtype} takes {dynamic} size operand(s), one per '?', not {len(self.sizes)}."
            )


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A buffer inside a byte buffer:
    `%t = loop.view %arena[256] : memref<4096xi8> to memref<8x8xf32>`."""

    name = "loop.view"
    source = operand_def(MemRefType)
    offset = prop_def(IntAttr)
    result = result_def(MemRefType)

    def __init__(self, source: SSAValue | Operation, offset: int, memref_type: MemRefType):
        super().__init__(
            operands=[source], properties={"offset": IntAttr(offset)}, result_types=[memref_type]
        )

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        assert isinstance(src, MemRefType) and isinstance(res, MemRefType)
        if len(src.get_shape()) != 1 or src.element_type != i8:
            raise VerifyException(f"loop.view reads a 1-D i8 buffer, not {src}.")
        if any(d <= 0 for d in res.get_shape()):
            raise VerifyException("loop.view needs a static shape with positive extents.")
        width = max(1, res.element_type.bitwidth // 8)  # type: ignore[attr-defined]
        start, size = self.offset.data, width * prod(res.get_shape())
        if start < 0 or start % width:
            raise VerifyException(
                f"loop.view offset {start} is not a non-negative multiple of the element size {width}."
            )
        if start + size > src.get_shape()[0]:
            raise VerifyException(
                f"loop.view of bytes [{start}, {start + size}) runs past the {src.get_shape()[0]}-byte buffer."
            )

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        printer.print_string(f"[{self.offset.data}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" to ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ViewOp:
        source = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        offset = parser.parse_integer()
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_keyword("to")
        op = cls(parser.resolve_operand(source, source_type), offset, parser.parse_type())
        op.attributes |= attrs
        return op


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run `@body(args..., %begin, %end)` on chunks `[begin, end)` of `[lb, ub)`,
    on all cores: `loop.launch @f_parallel0(%A, %B) 0 to 64 : memref<64xf32>, memref<64xf32>`.

    `@body` is a `func.func` taking `args` followed by two `index` values. The
    runtime (`backends/llvm/runtime.py`) decides how many chunks there are and
    which thread runs which; chunks are contiguous and balanced, and may be empty.
    The launch returns when every chunk has run. `{tc.max_threads = n}` lets at
    most `n` threads take part (`loop-outline-parallel` writes what the loop's work
    pays for); with `n` = 1 the body runs on `[lb, ub)` on the caller.

    The upper bound may be an `index` value (`loop.launch @f(%A) 0 to %n : ...`,
    the launch of a loop whose bound is known when it runs; empty when `%n <= lb`);
    then `{tc.iteration_cost = r}` (an iteration's work over a thread's cost)
    lets the launch cap its threads from the extent it gets.
    """

    name = "loop.launch"
    body = prop_def(SymbolRefAttr)
    lb = prop_def(IntegerAttr[I64])
    ub = prop_def(IntegerAttr[I64])  # (the static bound; with `upper`, equal to lb and unused)
    args = var_operand_def()
    upper = opt_operand_def(IndexType())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self, body: str, args: Sequence[SSAValue | Operation], lb: int, ub: int | SSAValue
    ):
        dynamic = isinstance(ub, SSAValue)
        super().__init__(
            operands=[args, [ub] if dynamic else []],
            properties={
                "body": SymbolRefAttr(body),
                "lb": IntegerAttr(lb, i64),
                "ub": IntegerAttr(lb if dynamic else ub, i64),
            },
        )

    @property
    def is_static(self) -> bool:
        return self.upper is None

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_attribute(self.body)
        printer.print_string("(")
        printer.print_list(self.args, printer.print_ssa_value)
        printer.print_string(f") {self.lb.value.data} to ")
        if self.upper is not None:
            printer.print_ssa_value(self.upper)
        else:
            printer.print_string(f"{self.ub.value.data}")
        printer.print_op_attributes(self.attributes)
        if self.args:
            printer.print_string(" : ")
            printer.print_list([a.type for a in self.args], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        start = parser.pos
        body = parser.parse_attribute()
        if not isinstance(body, SymbolRefAttr):
            parser.raise_error("expected the body's symbol (@name)")
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        lb = parser.parse_integer()
        parser.parse_keyword("to")
        upper = parser.parse_optional_unresolved_operand()
        ub = parser.resolve_operand(upper, IndexType()) if upper is not None else parser.parse_integer()
        attributes = parser.parse_optional_attr_dict()
        types = []
        if parser.parse_optional_punctuation(":") is not None:
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(args):
            parser.raise_error(
                f"loop.launch passes {len(args)} values but lists {len(types)} types", start, parser.pos
            )
        op = cls(body.root_reference.data, [parser.resolve_operand(a, t) for a, t in zip(args, types)], lb, ub)
        op.attributes |= attributes
        return op

    def verify_(self) -> None:
        if self.ub.value.data < self.lb.value.data:
            raise VerifyException(
                f"loop.launch has an upper bound {self.ub.value.data} below its lower "
                f"bound {self.lb.value.data}."
            )
        module = self.parent_op()
        while module is not None and not module.has_trait(SymbolTable):
            module = module.parent_op()
        if module is None:
            return
        callee = SymbolTable.lookup_symbol(module, self.body)
        name = self.body.root_reference.data
        ftype = getattr(callee, "function_type", None)
        if not isinstance(ftype, FunctionType):
            raise VerifyException(f"loop.launch body '@{name}' is not a function in this module.")
        expected = [*(a.type for a in self.args), IndexType(), IndexType()]
        if list(ftype.inputs.data) != expected or ftype.outputs.data:
            raise VerifyException(
                f"loop.launch body '@{name}' must take the launch's arguments and two "
                f"index values (the chunk) and return nothing; it has type {ftype}."
            )


def _lanes(t: Attribute) -> int | None:
    return t.get_shape()[0] if isinstance(t, VectorType) and len(t.get_shape()) == 1 else None


def _verify_lanes(
    op: IRDLOperation, ref: SSAValue, offsets: SSAValue, mask: SSAValue, data: Attribute
) -> None:
    mtype = ref.type
    assert isinstance(mtype, MemRefType)
    width = _lanes(data)
    if (
        width is None
        or offsets.type != VectorType(i64, [width])
        or mask.type != VectorType(i1, [width])
        or data.element_type != mtype.element_type  # type: ignore[attr-defined]
    ):
        raise VerifyException(
            f"{op.name} takes vector<W x i64> offsets and a vector<W x i1> mask for "
            f"vector<W x {mtype.element_type}> data; got {offsets.type}, {mask.type}, {data}."
        )


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Lane `l` reads the element at flat (row-major) offset `offsets[l]` of the
    buffer where `mask[l]` holds, and is 0 elsewhere:

        %v = loop.gather %A[%offsets], %mask
            : memref<8x8xf32>, vector<16xi64>, vector<16xi1> -> vector<16xf32>

    (xDSL 0.74 has no `vector.gather`; MLIR's takes per-dimension bases and an
    index vector into the innermost dimension, where `loop-vectorize` computes
    flat offsets.)"""

    name = "loop.gather"
    base = operand_def(MemRefType)
    offsets = operand_def(VectorType)
    mask = operand_def(VectorType)
    result = result_def(VectorType)
    assembly_format = (
        "$base `[` $offsets `]` `,` $mask attr-dict `:` type($base) `,` type($offsets) "
        "`,` type($mask) `->` type($result)"
    )

    def __init__(self, base: SSAValue, offsets: SSAValue, mask: SSAValue, result_type: VectorType):
        super().__init__(operands=[base, offsets, mask], result_types=[result_type])

    def verify_(self) -> None:
        _verify_lanes(self, self.base, self.offsets, self.mask, self.result.type)


@irdl_op_definition
class ScatterOp(IRDLOperation):
    """Lane `l` of `%v` is written to flat offset `offsets[l]` where `mask[l]`
    holds, lanes in order (the last active lane writing an address wins):

        loop.scatter %v, %A[%offsets], %mask
            : vector<16xf32>, memref<8x8xf32>, vector<16xi64>, vector<16xi1>
    """

    name = "loop.scatter"
    value = operand_def(VectorType)
    base = operand_def(MemRefType)
    offsets = operand_def(VectorType)
    mask = operand_def(VectorType)
    assembly_format = (
        "$value `,` $base `[` $offsets `]` `,` $mask attr-dict `:` type($value) `,` "
        "type($base) `,` type($offsets) `,` type($mask)"
    )

    def __init__(self, value: SSAValue, base: SSAValue, offsets: SSAValue, mask: SSAValue):
        super().__init__(operands=[value, base, offsets, mask])

    def verify_(self) -> None:
        _verify_lanes(self, self.base, self.offsets, self.mask, self.value.type)


@irdl_op_definition
class AssertOp(IRDLOperation):
    """`loop.assert %ok, "message"`: a run-time check. Where `%ok` (i1) is false the
    call fails: the compiled function records `message` and, when it returns, the
    caller raises it (the Python call an exception, the tools exit 1). The loop
    goes on (the code after a check keeps its indices in bounds by itself), so a
    check costs one branch. See `lowering/convert_loop_to_llvm/checks.py`.
    """

    name = "loop.assert"
    cond = operand_def(i1)
    message = prop_def(StringAttr)
    assembly_format = "$cond `,` $message attr-dict"

    def __init__(self, cond: SSAValue | Operation, message: str | StringAttr):
        if isinstance(message, str):
            message = StringAttr(message)
        super().__init__(operands=[cond], properties={"message": message})


@irdl_op_definition
class TensorIntrinOp(IRDLOperation):
    """A tensor intrinsic on regions of buffers (what `sched.tensorize` makes of a
    loop nest):

        loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%i0, %k0], %B[%k0, %j0])
            outs(%C[%i0, %j0]) : memref<64x32xf32>, memref<32x64xf32>, memref<64x64xf32>

    The intrinsic (registered by name, `tilecraft.dialects.tensor_intrin`) has one
    input per `ins` operand and one output. Each operand is a region of its buffer:
    the intrinsic operand's shape placed at the given base index (one per buffer
    dimension) in the buffer's trailing dimensions; leading dimensions stay at
    their base (strides are the buffer's, row-major). For a reducing intrinsic the
    output region is updated (`C op= reduce(...)`), else assigned. Each target
    lowers it in its own way: `lower-tensor-intrin` writes the intrinsic's loop
    nest for the CPU.
    """

    name = "loop.tensor_intrin"
    intrin = prop_def(StringAttr)
    num_inputs = prop_def(IntAttr)
    buffers = var_operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        intrin: str,
        inputs: Sequence[tuple[SSAValue, Sequence[SSAValue]]],
        outputs: Sequence[tuple[SSAValue, Sequence[SSAValue]]],
    ):
        operands = list(inputs) + list(outputs)
        super().__init__(
            operands=[[b for b, _ in operands], [i for _, idx in operands for i in idx]],
            properties={"intrin": StringAttr(intrin), "num_inputs": IntAttr(len(inputs))},
        )

    def operand_regions(self) -> list[tuple[SSAValue, list[SSAValue]]]:
        """(buffer, base indices) of each operand, inputs first."""
        out, pos = [], 0
        for b in self.buffers:
            rank = len(b.type.get_shape())  # type: ignore[attr-defined]
            out.append((b, list(self.indices[pos : pos + rank])))
            pos += rank
        return out

    def verify_(self) -> None:
        from tilecraft.dialects.tensor_intrin import lookup, unknown_message

        ranks = [len(b.type.get_shape()) for b in self.buffers]  # type: ignore[attr-defined]
        if sum(ranks) != len(self.indices):
            raise VerifyException(
                f"loop.tensor_intrin takes one base index per buffer dimension ({sum(ranks)}), "
                f"not {len(self.indices)}."
            )
        intrin = lookup(self.intrin.data)
        if intrin is None:
            raise VerifyException(f"loop.tensor_intrin: {unknown_message(self.intrin.data)}.")
        want = [*intrin.inputs, intrin.output]
        if self.num_inputs.data != len(intrin.inputs) or len(self.buffers) != len(want):
            raise VerifyException(
                f"loop.tensor_intrin '{intrin.name}' takes {len(intrin.inputs)} inputs and one output."
            )
        for b, operand in zip(self.buffers, want):
            t = b.type
            shape = t.get_shape()  # type: ignore[attr-defined]
            region = tuple(shape[len(shape) - len(operand.shape) :])
            if t.element_type != operand.element_type or len(shape) < len(operand.shape) or any(  # type: ignore[attr-defined]
                r < o for r, o in zip(region, operand.shape)
            ):
                raise VerifyException(
                    f"loop.tensor_intrin '{intrin.name}': operand {operand.name} is a "
                    f"{'x'.join(map(str, operand.shape))} region of {operand.element_type}, "
                    f"which {t} cannot hold."
                )

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_string_literal(self.intrin.data)
        regions = self.operand_regions()
        n = self.num_inputs.data
        for word, group in (("ins", regions[:n]), ("outs", regions[n:])):
            printer.print_string(f" {word}(")
            for k, (b, idx) in enumerate(group):
                if k:
                    printer.print_string(", ")
                printer.print_ssa_value(b)
                printer.print_string("[")
                printer.print_list(idx, printer.print_ssa_value)
                printer.print_string("]")
            printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([b.type for b in self.buffers], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> TensorIntrinOp:
        intrin = parser.parse_str_literal()

        def region():
            buf = parser.parse_unresolved_operand()
            idx = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: parser.parse_operand()
            )
            return buf, idx

        parser.parse_keyword("ins")
        ins = parser.parse_comma_separated_list(parser.Delimiter.PAREN, region)
        parser.parse_keyword("outs")
        outs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, region)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        pairs = ins + outs
        if len(types) != len(pairs):
            parser.raise_error(f"loop.tensor_intrin lists {len(pairs)} buffers and {len(types)} types")
        resolved = [(parser.resolve_operand(b, t), idx) for (b, idx), t in zip(pairs, types)]
        op = cls(intrin, resolved[: len(ins)], resolved[len(ins) :])
        op.attributes |= attrs
        return op


ACCEL_SCOPES = (MemoryScope.INP_BUFFER, MemoryScope.WGT_BUFFER, MemoryScope.ACC_BUFFER)


def buffer_scope(value: SSAValue) -> MemoryScope:
    """The scope of a buffer: its `loop.alloc`'s, "global" for anything else
    (a function argument, a `memref.alloc`)."""
    owner = value.owner
    return owner.scope.data if isinstance(owner, AllocOp) else MemoryScope.GLOBAL


@irdl_op_definition
class DmaOp(IRDLOperation):
    """A 2-D strided copy of whole elements between a global buffer and an
    accelerator buffer (VTA's LOAD/STORE), what `inject-dma` makes of a copy nest:

        loop.dma %A[%i, %c0, %c0] -> %A.inp[%c0, %c0, %c0]
            size(%y, %x) pad(%yp0, %yp1, %xp0, %xp1) stride 6 tile 5 x 8 elem 16
            : memref<6x6x16xi8> -> memref<5x8x16xi8>

    An element is `elem` consecutive scalars (an input BATCH x BLOCK vector, a
    weight BLOCK x BLOCK tile, ...). Both buffers are read as flat arrays of
    elements; the indices give the first scalar of each side (a multiple of
    `elem`). A load (global to inp/wgt/acc buffer) writes the `tile` rows x cols
    of elements contiguously from the buffer side's start: row r, column c is
    global element `r - y_pad_0` of `size`'s y rows, `c - x_pad_0` of its x
    columns (rows `stride` elements apart), and 0 in the padding around them
    (`y_pad_0 + y + y_pad_1 = rows`, likewise for x). A store (acc buffer to global,
    no padding) writes `y` rows of `x` elements `stride` apart from consecutive
    buffer elements, narrowing each scalar to the global element type if it is
    narrower (VTA's output buffer keeps the low bits).

    Sizes and pads are index values (they vary with the enclosing loops at the
    edges of a padded tensor); `tile`, `stride` and `elem` are static.
    `expand-dma` lowers it to loops on the CPU; convert-loop-to-accel (later)
    makes it one LOAD or STORE instruction.
    """

    name = "loop.dma"
    src = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    y_size = operand_def(IndexType)
    x_size = operand_def(IndexType)
    y_pad_0 = operand_def(IndexType)
    y_pad_1 = operand_def(IndexType)
    x_pad_0 = operand_def(IndexType)
    x_pad_1 = operand_def(IndexType)
    rows = prop_def(IntAttr)
    cols = prop_def(IntAttr)
    x_stride = prop_def(IntAttr)
    elem = prop_def(IntAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        src: SSAValue,
        src_indices: Sequence[SSAValue],
        dst: SSAValue,
        dst_indices: Sequence[SSAValue],
        sizes: Sequence[SSAValue],
        pads: Sequence[SSAValue],
        tile: tuple[int, int],
        x_stride: int,
        elem: int,
    ):
        super().__init__(
            operands=[src, src_indices, dst, dst_indices, *sizes, *pads],
            properties={
                "rows": IntAttr(tile[0]),
                "cols": IntAttr(tile[1]),
                "x_stride": IntAttr(x_stride),
                "elem": IntAttr(elem),
            },
        )

    @property
    def is_load(self) -> bool:
        return buffer_scope(self.src) == MemoryScope.GLOBAL

    @property
    def pads(self) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
        return (self.y_pad_0, self.y_pad_1, self.x_pad_0, self.x_pad_1)

    def verify_(self) -> None:
        src_t, dst_t = self.src.type, self.dst.type
        assert isinstance(src_t, MemRefType) and isinstance(dst_t, MemRefType)
        for what, t, idx in (("source", src_t, self.src_indices), ("destination", dst_t, self.dst_indices)):
            if len(idx) != len(t.get_shape()):
                raise VerifyException(f"loop.dma {what} {t} takes {len(t.get_shape())} indices, not {len(idx)}.")
        scopes = (buffer_scope(self.src), buffer_scope(self.dst))
        load = scopes[0] == MemoryScope.GLOBAL and scopes[1] in ACCEL_SCOPES
        store = scopes[0] == MemoryScope.ACC_BUFFER and scopes[1] == MemoryScope.GLOBAL
        if not (load or store):
            raise VerifyException(
                f"loop.dma copies global -> inp_buffer/wgt_buffer/acc_buffer or acc_buffer -> global, "
                f"not {scopes[0].value} -> {scopes[1].value}."
            )
        src_e, dst_e = src_t.element_type, dst_t.element_type
        narrowing = (
            store
            and isinstance(src_e, IntegerType)
            and isinstance(dst_e, IntegerType)
            and dst_e.width.data < src_e.width.data
        )
        if src_e != dst_e and not narrowing:
            raise VerifyException(
                f"loop.dma copies {src_e} to {dst_e}; only a store may narrow integers."
            )
        for name in ("rows", "cols", "x_stride", "elem"):
            if getattr(self, name).data <= 0:
                raise VerifyException(f"loop.dma {name} must be positive, not {getattr(self, name).data}.")
        sram_t = dst_t if load else src_t
        sram_elems = prod(sram_t.get_shape())
        tile = self.rows.data * self.cols.data * self.elem.data
        if tile > sram_elems:
            raise VerifyException(
                f"loop.dma tile of {self.rows.data} x {self.cols.data} elements of {self.elem.data} "
                f"does not fit its {sram_t} buffer."
            )
        if not load:
            for pad in self.pads:
                if isinstance(pad.owner, arith.ConstantOp) and pad.owner.value != IntegerAttr(0, IndexType()):
                    raise VerifyException("loop.dma stores have no padding (a pad is not 0).")

    def print(self, printer: Printer):
        def access(ref: SSAValue, idx: Sequence[SSAValue]):
            printer.print_string(" ")
            printer.print_ssa_value(ref)
            printer.print_string("[")
            printer.print_list(idx, printer.print_ssa_value)
            printer.print_string("]")

        access(self.src, self.src_indices)
        printer.print_string(" ->")
        access(self.dst, self.dst_indices)
        printer.print_string(" size(")
        printer.print_list((self.y_size, self.x_size), printer.print_ssa_value)
        printer.print_string(") pad(")
        printer.print_list(self.pads, printer.print_ssa_value)
        printer.print_string(
            f") stride {self.x_stride.data} tile {self.rows.data} x {self.cols.data} elem {self.elem.data}"
        )
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.src.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.dst.type)

    @classmethod
    def parse(cls, parser: Parser) -> DmaOp:
        def operands(delimiter=Parser.Delimiter.SQUARE):
            return parser.parse_comma_separated_list(delimiter, parser.parse_unresolved_operand)

        def resolve(values):
            return [parser.resolve_operand(v, IndexType()) for v in values]

        src = parser.parse_unresolved_operand()
        src_idx = operands()
        parser.parse_punctuation("->")
        dst = parser.parse_unresolved_operand()
        dst_idx = operands()
        parser.parse_keyword("size")
        sizes = operands(Parser.Delimiter.PAREN)
        parser.parse_keyword("pad")
        pads = operands(Parser.Delimiter.PAREN)
        parser.parse_keyword("stride")
        stride = parser.parse_integer()
        parser.parse_keyword("tile")
        rows = parser.parse_integer()
        parser.parse_keyword("x")
        cols = parser.parse_integer()
        parser.parse_keyword("elem")
        elem = parser.parse_integer()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_t = parser.parse_type()
        parser.parse_punctuation("->")
        dst_t = parser.parse_type()
        if len(sizes) != 2 or len(pads) != 4:
            parser.raise_error("loop.dma takes size(%y, %x) and pad(%y0, %y1, %x0, %x1).")
        op = cls(
            parser.resolve_operand(src, src_t),
            resolve(src_idx),
            parser.resolve_operand(dst, dst_t),
            resolve(dst_idx),
            resolve(sizes),
            resolve(pads),
            (rows, cols),
            stride,
            elem,
        )
        op.attributes |= attrs
        return op


def make_for(
    lb: int, ub: int, kind: str | LoopKind, var_name: str | None, ops: Sequence[Operation]
) -> ForOp:
    loop = ForOp(lb, ub, kind, var_name=var_name)
    loop.body.block.insert_ops_before(list(ops), loop.body.block.last_op)
    return loop


LOOP = Dialect(
    "loop",
    [ForOp, GuardOp, AllocOp, ViewOp, LaunchOp, GatherOp, ScatterOp, YieldOp, AssertOp, TensorIntrinOp, DmaOp],
    [LoopKindAttr, MemoryScopeAttr],
)
