"""What the patterns of `convert-loop-to-llvm` share: the conversion state
(one builder per function, the declared externals, the memref casts) and the
helpers that replace an op by LLVM values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tilecraft.backends.llvm.builder import NSW, FunctionBuilder
from tilecraft.backends.llvm.memory import row_major_strides

# The i32 a failed run-time check sets to its code, and the messages by code
# (read by backends/llvm/jit.py, `RuntimeErrors`).
from tilecraft.backends.llvm.names import RUNTIME_ERROR, RUNTIME_ERROR_MESSAGES
from tilecraft.backends.llvm.ops import HANDLERS, Handler, OpLowering
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
    i8,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter


PASS = "convert-loop-to-llvm"


# The shared state ------------------------------------------------------------


@dataclass
class Conversion:
    """What the patterns of one run share: the module, the fast-math flags, one
    builder per function and the external functions declared so far."""

    module: ModuleOp
    fastmath: llvm.FastMathAttr
    builders: dict[llvm.FuncOp, FunctionBuilder] = field(default_factory=dict)
    declared: set[str] = field(default_factory=set)
    stack_slots: dict[tuple, SSAValue] = field(default_factory=dict)
    casts: list[Operation] = field(default_factory=list)
    dynamic_strides: dict[SSAValue, list[int | SSAValue]] = field(default_factory=dict)
    error_messages: list[str] = field(default_factory=list)
    handlers: Mapping[type[Operation], Handler] = field(default_factory=lambda: HANDLERS)
    """How each `arith`/`math` op becomes LLVM (the GPU path swaps in its own math)."""

    def error_code(self, message: str) -> int:
        """The code (from 1) that a failed `loop.assert` with `message` stores in
        the module's error word (`RUNTIME_ERROR`, made on first use)."""
        if not self.error_messages:
            self.module.body.block.add_op(
                llvm.GlobalOp(i32, RUNTIME_ERROR, "external", value=IntegerAttr(0, i32), alignment=4)
            )
        if message not in self.error_messages:
            self.error_messages.append(message)
        return self.error_messages.index(message) + 1

    def finish_errors(self) -> None:
        """The messages, in code order, as the constant `RUNTIME_ERROR_MESSAGES`
        (NUL-separated), so a compiled library explains its own errors."""
        if not self.error_messages:
            return
        text = "\0".join(self.error_messages) + "\0"
        data = text.encode()
        self.module.body.block.add_op(
            llvm.GlobalOp(
                llvm.LLVMArrayType(len(data), i8),
                RUNTIME_ERROR_MESSAGES,
                "external",
                constant=True,
                value=StringAttr(text),
            )
        )

    def builder(self, op: Operation) -> FunctionBuilder:
        """The builder of the function holding `op`, inserting before `op`."""
        function = op.parent_op()
        while not isinstance(function, llvm.FuncOp):
            assert function is not None, "a loop-level op outside a function"
            function = function.parent_op()
        return self.builders[function].at(op)

    def declare(self, name: str, inputs, output: Attribute | None) -> None:
        """Declare external function `name` (libc, libm, the runtime) once."""
        if name not in self.declared:
            self.declared.add(name)
            ftype = llvm.LLVMFunctionType(list(inputs), output)
            self.module.body.block.add_op(
                llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external"))
            )

    def define(
        self,
        name: str,
        inputs: list[Attribute],
        linkage: str,
        arg_attrs: list[dict[str, Attribute]] | None = None,
    ) -> llvm.FuncOp:
        """A new `void` function (not yet in the module); `nounwind`: nothing throws."""
        props: dict[str, Attribute | None] = {"no_unwind": UnitAttr()}
        if arg_attrs is not None:
            props["arg_attrs"] = ArrayAttr([DictionaryAttr(a) for a in arg_attrs])
        return llvm.FuncOp(
            name,
            llvm.LLVMFunctionType(inputs, None),
            linkage=llvm.LinkageAttr(linkage),
            other_props=props,
        )

    def as_memref(
        self,
        pointer: SSAValue,
        memref_type: Attribute,
        block: Block | None = None,
        sizes: Sequence[SSAValue] = (),
    ) -> SSAValue:
        """`pointer` seen as a memref again by the ops not yet converted (see
        `_as_memref`); `sizes` are the i64 sizes of its `?` dimensions, in order."""
        value = _as_memref(pointer, memref_type, block, sizes)
        self.casts.append(value.owner)  # type: ignore[arg-type]
        return value

    def strides(self, memref: SSAValue, b: FunctionBuilder) -> list[int | SSAValue]:
        """The row-major strides (in elements) of a converted memref: ints where
        the trailing sizes are static, else i64 products of its sizes, computed
        once in the function's prologue (where the sizes, its arguments, are)."""
        mtype = memref.type
        assert isinstance(mtype, MemRefType)
        shape = mtype.get_shape()
        if all(d >= 0 for d in shape[1:]):
            return row_major_strides(shape)
        if memref in self.dynamic_strides:
            return self.dynamic_strides[memref]
        dims = dims_of(memref)
        # Sizes that are the function's arguments: strides once, in the prologue;
        # others (a buffer allocated with computed sizes): where they are used.
        hoist = all(isinstance(d, int) or d in b.prologue.args for d in dims)
        strides: list[int | SSAValue] = [1] * len(dims)
        for d in range(len(dims) - 2, -1, -1):
            strides[d] = _times(b, strides[d + 1], dims[d + 1], hoist)
        if hoist:
            self.dynamic_strides[memref] = strides
        return strides

    def erase_casts(self) -> None:
        """Drop the casts of `as_memref`, dead once every op is converted."""
        for cast in self.casts:
            assert not cast.results[0].uses, f"{PASS}: a converted memref is still used"
            cast.detach()
            cast.erase()
        self.casts.clear()

    def op_lowering(self, b: FunctionBuilder) -> OpLowering:
        return OpLowering(b, self.fastmath, self.declare)


# Values -----------------------------------------------------------------------

# A converted memref (a pointer) reaches the ops that still use it through an
# `unrealized_conversion_cast` back to its memref type, which keeps the shape and
# element type visible to them; the casts are dead once every user is converted.


def _as_memref(
    pointer: SSAValue, memref_type: Attribute, block: Block | None, sizes: Sequence[SSAValue]
) -> SSAValue:
    """`pointer` (and the sizes of the `?` dimensions) as a value of
    `memref_type` (a cast at the start of `block`, or right after the pointer's
    definition)."""
    cast = UnrealizedConversionCastOp.get([pointer, *sizes], [memref_type])
    if block is not None:
        block.insert_op_before(cast, block.first_op) if block.first_op else block.add_op(cast)
    else:
        owner = pointer.owner
        assert isinstance(owner, Operation)
        owner.parent_block().insert_op_after(cast, owner)  # type: ignore[union-attr]
    cast.results[0].name_hint = pointer.name_hint
    return cast.results[0]


def pointer_of(value: SSAValue) -> SSAValue:
    """The LLVM value behind a converted memref (see `_as_memref`)."""
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp):
        return owner.inputs[0]
    return value


def dims_of(value: SSAValue) -> list[int | SSAValue]:
    """The sizes of a converted memref: ints where static, the i64 values its
    cast carries where `?`."""
    mtype = value.type
    assert isinstance(mtype, MemRefType)
    owner = value.owner
    dynamic = iter(owner.inputs[1:] if isinstance(owner, UnrealizedConversionCastOp) else ())
    dims: list[int | SSAValue] = []
    for d in mtype.get_shape():
        dims.append(d if d >= 0 else next(dynamic))
    return dims


def expanded(value: SSAValue) -> list[SSAValue]:
    """What a converted memref is passed as (the calling convention): its
    pointer, then the i64 size of each `?` dimension, in order."""
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp):
        return list(owner.inputs)
    return [value]


def _times(b: FunctionBuilder, a: int | SSAValue, c: int | SSAValue, hoist: bool) -> int | SSAValue:
    if isinstance(a, int) and isinstance(c, int):
        return a * c
    if isinstance(a, int):
        a, c = c, a
    if c == 1:
        return a
    other = c if not isinstance(c, int) else b.index(c)
    if not hoist:
        return b.imul(a, other, nsw=True)  # type: ignore[arg-type]
    return b.hoist(llvm.MulOp(a, other, overflow=NSW))  # type: ignore[arg-type]


def replace_with(rewriter: PatternRewriter, op: Operation, values: list[SSAValue]) -> None:
    """Replace `op` (its new ops are already in place) by `values`."""
    for old, new in zip(op.results, values):
        if old.name_hint and new.owner is not None and not new.name_hint:
            new.name_hint = old.name_hint
        rewriter.replace_all_uses_with(old, new)
    rewriter.erase(op)
