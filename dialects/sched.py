"""The `sched` dialect: how a te function runs, written as a small program.

Like MLIR's transform dialect, a schedule is IR of its own that names the payload
it acts on. A `sched.schedule` sits in the te function it schedules, after the
computes, so its ops refer to the function's tensors by SSA value. Stages and axes
are SSA handles (`!sched.stage`, `!sched.axis`); each primitive consumes handles
and produces new ones, so the schedule reads top to bottom as TVM code does:

```mlir
sched.schedule {
  %s = sched.stage %C : tensor<64x64xf32>
  %i = sched.axis %s "i"
  %j = sched.axis %s "j"
  %io, %jo, %ii, %ji = sched.tile %i, %j by 32, 32
  sched.vectorize %ji
  sched.parallel %io
}
```

Each op checks what it can alone (factors > 0, ...). What needs the te program
(unknown axis names, vectorizing a reduce axis, compute_at into a loop that does
not enclose the consumer, ...) is checked by replaying the schedule
(`tilecraft.dialects.sched_replay`) when `sched.schedule` verifies; the error names the
op that is wrong.

Memory scopes are an enum attribute (`MemoryScopeAttr`), printed as the bare word
(`sched.cache_write %C local`; the quoted `"local"` of older text still parses);
`inp_buffer`, `wgt_buffer` and `acc_buffer` are the accelerator's buffers, which
`sched.set_scope` can also give a computed stage (VTA's padded input).
`sched.vthread` runs an axis as virtual threads (TVM's `cthread`); `sched.bind`
binds one to a GPU block or thread index (`sched.bind %bx to "blockIdx.x"`).
Ops use declarative assembly formats, except `sched.split` and `sched.tile`: their
factors are `IntAttr`s (read as `.data` by the schedule replay), which a
declarative `$factor` does not print as a bare integer.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr, TensorType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
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
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


class MemoryScope(StrEnum):
    """Where a cache stage's buffer lives."""

    GLOBAL = "global"
    LOCAL = "local"
    SHARED = "shared"
    # The accelerator's input, weight and accumulator buffers (see loop.MemoryScope).
    INP_BUFFER = "inp_buffer"
    WGT_BUFFER = "wgt_buffer"
    ACC_BUFFER = "acc_buffer"


@irdl_attr_definition
class MemoryScopeAttr(EnumAttribute[MemoryScope], SpacedOpaqueSyntaxAttribute):
    """`#sched<scope local>` in the generic form, `local` in the ops' custom forms."""

    name = "sched.scope"


MEMORY_SCOPES = tuple(s.value for s in MemoryScope)


@irdl_attr_definition
class StageType(ParametrizedAttribute, TypeAttribute):
    """A handle to one stage: a te.compute, an input tensor, or a cache stage."""

    name = "sched.stage"


@irdl_attr_definition
class AxisType(ParametrizedAttribute, TypeAttribute):
    """A handle to one loop axis of a stage (a root axis or one made by a primitive)."""

    name = "sched.axis"


def _axis_results(n: int) -> list[Attribute]:
    return [AxisType()] * n


@irdl_op_definition
class ScheduleOp(IRDLOperation):
    """The schedule of the enclosing te function: `sched.schedule { ... }`."""

    name = "sched.schedule"
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "attr-dict-with-keyword $body"

    def __init__(self, body: Region):
        super().__init__(regions=[body])

    def verify_(self) -> None:
        from tilecraft.dialects.sched_replay import ScheduleState

        block = self.parent_block()
        if block is not None:
            first = next(op for op in block.ops if isinstance(op, ScheduleOp))
            if first is not self:
                from tilecraft.utils.diagnostics import location_of

                raise VerifyException(
                    "a function holds one sched.schedule; this is a second one (the first is "
                    f"at {location_of(first)}): merge its primitives into the first"
                )
        ScheduleState.replay(self)


@irdl_op_definition
class StageOp(IRDLOperation):
    """The stage of a tensor: `%s = sched.stage %C : tensor<64x64xf32>`."""

    name = "sched.stage"
    tensor = operand_def(TensorType)
    stage = result_def(StageType)
    assembly_format = "$tensor attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue):
        super().__init__(operands=[tensor], result_types=[StageType()])


@irdl_op_definition
class AxisOp(IRDLOperation):
    """A root axis of a stage, by name: `%i = sched.axis %s "i"` (spatial or reduce)."""

    name = "sched.axis"
    stage = operand_def(StageType)
    axis_name = prop_def(StringAttr, prop_name="axis")
    axis = result_def(AxisType)
    assembly_format = "$stage $axis attr-dict"

    def __init__(self, stage: SSAValue, axis: str):
        super().__init__(
            operands=[stage],
            properties={"axis": StringAttr(axis)},
            result_types=[AxisType()],
        )


@irdl_op_definition
class SplitOp(IRDLOperation):
    """Split an axis in two: `%o, %i = sched.split %x by 32` (inner extent) or
    `%o, %i = sched.split %x into 4` (outer extent). A split that does not divide
    the extent is guarded.
    """

    name = "sched.split"
    axis = operand_def(AxisType)
    factor = opt_prop_def(IntAttr)
    nparts = opt_prop_def(IntAttr)
    outer = result_def(AxisType)
    inner = result_def(AxisType)

    def __init__(self, axis: SSAValue, factor: int | None = None, nparts: int | None = None):
        props: dict[str, Attribute] = {}
        if factor is not None:
            props["factor"] = IntAttr(factor)
        if nparts is not None:
            props["nparts"] = IntAttr(nparts)
        super().__init__(
            operands=[axis], properties=props, result_types=[AxisType(), AxisType()]
        )

    def verify_(self) -> None:
        if (self.factor is None) == (self.nparts is None):
            raise VerifyException("sched.split takes exactly one of a factor or nparts.")
        # Not `factor or nparts`: IntAttr(0) is falsy.
        value = (self.factor if self.factor is not None else self.nparts).data
        if value <= 0:
            what = "factor" if self.factor is not None else "nparts"
            raise VerifyException(f"sched.split {what} must be positive, not {value}.")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_ssa_value(self.axis)
        if self.factor is not None:
            printer.print_string(f" by {self.factor.data}")
        else:
            printer.print_string(f" into {self.nparts.data}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> SplitOp:
        axis = parser.resolve_operand(parser.parse_unresolved_operand(), AxisType())
        if parser.parse_optional_keyword("by"):
            op = cls(axis, factor=parser.parse_integer())
        else:
            parser.parse_keyword("into")
            op = cls(axis, nparts=parser.parse_integer())
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class TileOp(IRDLOperation):
    """Split two axes and order the four: `%xo, %yo, %xi, %yi = sched.tile %x, %y by 32, 8`."""

    name = "sched.tile"
    x = operand_def(AxisType)
    y = operand_def(AxisType)
    factors = prop_def(ArrayAttr[IntAttr])
    xo = result_def(AxisType)
    yo = result_def(AxisType)
    xi = result_def(AxisType)
    yi = result_def(AxisType)

    def __init__(self, x: SSAValue, y: SSAValue, fx: int, fy: int):
        super().__init__(
            operands=[x, y],
            properties={"factors": ArrayAttr([IntAttr(fx), IntAttr(fy)])},
            result_types=_axis_results(4),
        )

    def verify_(self) -> None:
        values = [f.data for f in self.factors.data]
        if len(values) != 2:
            raise VerifyException("sched.tile takes two factors.")
        for v in values:
            if v <= 0:
                raise VerifyException(f"sched.tile factor must be positive, not {v}.")

    def print(self, printer: Printer):
        printer.print_string(" ")
        printer.print_ssa_value(self.x)
        printer.print_string(", ")
        printer.print_ssa_value(self.y)
        fx, fy = (f.data for f in self.factors.data)
        printer.print_string(f" by {fx}, {fy}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> TileOp:
        x = parser.resolve_operand(parser.parse_unresolved_operand(), AxisType())
        parser.parse_punctuation(",")
        y = parser.resolve_operand(parser.parse_unresolved_operand(), AxisType())
        parser.parse_keyword("by")
        fx = parser.parse_integer()
        parser.parse_punctuation(",")
        fy = parser.parse_integer()
        op = cls(x, y, fx, fy)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class ReorderOp(IRDLOperation):
    """Put axes of one stage in this relative order: `sched.reorder %jo, %io, %k`."""

    name = "sched.reorder"
    axes = var_operand_def(AxisType)
    assembly_format = "$axes attr-dict"

    def __init__(self, axes: Sequence[SSAValue]):
        super().__init__(operands=[axes])

    def verify_(self) -> None:
        if len(set(self.axes)) != len(self.axes):
            raise VerifyException("sched.reorder names an axis twice.")


@irdl_op_definition
class FuseOp(IRDLOperation):
    """Fuse adjacent axes, outer first, into one: `%f = sched.fuse %io, %jo`."""

    name = "sched.fuse"
    axes = var_operand_def(AxisType)
    fused = result_def(AxisType)
    assembly_format = "$axes attr-dict"

    def __init__(self, axes: Sequence[SSAValue]):
        super().__init__(operands=[axes], result_types=[AxisType()])

    def verify_(self) -> None:
        if len(self.axes) < 2:
            raise VerifyException("sched.fuse takes at least two axes.")


@irdl_op_definition
class ComputeAtOp(IRDLOperation):
    """Compute a producer inside a consumer's loop: `sched.compute_at %p, %axis`.

    The axis belongs to the consumer stage; the producer is computed, for each
    iteration of that loop, over just the region the loop body reads.
    """

    name = "sched.compute_at"
    stage = operand_def(StageType)
    axis = operand_def(AxisType)
    assembly_format = "$stage `,` $axis attr-dict"

    def __init__(self, stage: SSAValue, axis: SSAValue):
        super().__init__(operands=[stage, axis])


@irdl_op_definition
class ComputeInlineOp(IRDLOperation):
    """Substitute an injective stage's expression into its readers: `sched.compute_inline %p`."""

    name = "sched.compute_inline"
    stage = operand_def(StageType)
    assembly_format = "$stage attr-dict"

    def __init__(self, stage: SSAValue):
        super().__init__(operands=[stage])


@irdl_op_definition
class CacheReadOp(IRDLOperation):
    """Copy a tensor into a buffer of a memory scope for some readers:
    `%AA = sched.cache_read %A local for %C`. The readers then read the copy.
    """

    name = "sched.cache_read"
    stage = operand_def(StageType)
    scope = prop_def(MemoryScopeAttr)
    readers = var_operand_def(StageType)
    cache = result_def(StageType)
    assembly_format = "$stage $scope `for` $readers attr-dict"

    def __init__(self, stage: SSAValue, scope: str, readers: Sequence[SSAValue]):
        super().__init__(
            operands=[stage, readers],
            properties={"scope": MemoryScopeAttr(MemoryScope(scope))},
            result_types=[StageType()],
        )

    def verify_(self) -> None:
        if not self.readers:
            raise VerifyException("sched.cache_read needs at least one reader stage.")


@irdl_op_definition
class CacheWriteOp(IRDLOperation):
    """Compute a stage into a buffer of a memory scope, then copy it out:
    `%CL = sched.cache_write %C local`. The result is the stage that computes;
    the original stage becomes the copy, with fresh axes.
    """

    name = "sched.cache_write"
    stage = operand_def(StageType)
    scope = prop_def(MemoryScopeAttr)
    cache = result_def(StageType)
    assembly_format = "$stage $scope attr-dict"

    def __init__(self, stage: SSAValue, scope: str):
        super().__init__(
            operands=[stage],
            properties={"scope": MemoryScopeAttr(MemoryScope(scope))},
            result_types=[StageType()],
        )


class _AnnotateOp(IRDLOperation):
    axis = operand_def(AxisType)
    assembly_format = "$axis attr-dict"

    def __init__(self, axis: SSAValue):
        super().__init__(operands=[axis])


@irdl_op_definition
class VectorizeOp(_AnnotateOp):
    """Run an axis as SIMD lanes: `sched.vectorize %ji` (spatial axes, constant extent)."""

    name = "sched.vectorize"


@irdl_op_definition
class ParallelOp(_AnnotateOp):
    """Run an axis's iterations on all cores: `sched.parallel %io` (spatial axes)."""

    name = "sched.parallel"


@irdl_op_definition
class UnrollOp(_AnnotateOp):
    """Unroll an axis completely: `sched.unroll %ii`."""

    name = "sched.unroll"


@irdl_op_definition
class TensorizeOp(IRDLOperation):
    """Replace the loops under an axis by a tensor intrinsic:
    `sched.tensorize %ii with "gemm_4x16x8_f32"`.

    The loops of the axis's stage from `%ii` inwards must compute what the
    intrinsic (registered by name, `tilecraft.dialects.tensor_intrin`) computes;
    the schedule replay checks it and names the index, extent or type that differs.
    """

    name = "sched.tensorize"
    axis = operand_def(AxisType)
    intrin = prop_def(StringAttr)
    assembly_format = "$axis `with` $intrin attr-dict"

    def __init__(self, axis: SSAValue, intrin: str):
        super().__init__(operands=[axis], properties={"intrin": StringAttr(intrin)})


@irdl_op_definition
class VThreadOp(_AnnotateOp):
    """Run an axis as virtual threads: `sched.vthread %oc.outer` (spatial axes; TVM's
    `bind(axis, thread_axis("cthread"))`). `inject-virtual-threads` interleaves
    the threads' statements in one program, so one thread's loads can overlap
    another's compute on the accelerator."""

    name = "sched.vthread"


GPU_THREAD_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


@irdl_op_definition
class BindOp(IRDLOperation):
    """Run each iteration of an axis as one GPU block or thread:
    `sched.bind %i.outer to "blockIdx.x"` (TVM's `s[C].bind(axis,
    te.thread_axis("blockIdx.x"))`; spatial axes with a constant extent).
    `convert-loop-to-gpu` outlines the bound loops into a kernel."""

    name = "sched.bind"
    axis = operand_def(AxisType)
    thread = prop_def(StringAttr)
    assembly_format = "$axis `to` $thread attr-dict"

    def __init__(self, axis: SSAValue, thread: str):
        super().__init__(operands=[axis], properties={"thread": StringAttr(thread)})

    def verify_(self) -> None:
        if self.thread.data not in GPU_THREAD_TAGS:
            raise VerifyException(
                f"sched.bind binds to one of {', '.join(GPU_THREAD_TAGS)}, not '{self.thread.data}'."
            )


@irdl_op_definition
class SetScopeOp(IRDLOperation):
    """Keep a computed stage's buffer in a memory scope: `sched.set_scope %pad inp_buffer`
    (TVM's `s[T].set_scope`; VTA computes its padded input straight into the input
    buffer this way, so `inject-dma` folds the padding into the load)."""

    name = "sched.set_scope"
    stage = operand_def(StageType)
    scope = prop_def(MemoryScopeAttr)
    assembly_format = "$stage $scope attr-dict"

    def __init__(self, stage: SSAValue, scope: str):
        super().__init__(
            operands=[stage], properties={"scope": MemoryScopeAttr(MemoryScope(scope))}
        )


SCHED = Dialect(
    "sched",
    [
        ScheduleOp,
        StageOp,
        AxisOp,
        SplitOp,
        TileOp,
        ReorderOp,
        FuseOp,
        ComputeAtOp,
        ComputeInlineOp,
        CacheReadOp,
        CacheWriteOp,
        VectorizeOp,
        ParallelOp,
        UnrollOp,
        TensorizeOp,
        VThreadOp,
        BindOp,
        SetScopeOp,
    ],
    [StageType, AxisType, MemoryScopeAttr],
)
