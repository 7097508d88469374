"""`convert-loop-to-llvm`: the loop program as LLVM IR (xDSL's `llvm` dialect).

It runs after `loop-unroll`, `loop-outline-parallel` and `loop-vectorize` (see
the pipeline `loop-to-llvm`, `lowering/loop_to_llvm.py`): every loop left is serial,
parallel work is a `loop.launch` of an outlined function and vector code is
`vector`/`loop.gather`/`loop.scatter` ops and arith/math on vectors. One
conversion pattern per op kind, applied in one forward walk (parents before
their bodies, so every operand an op sees is already an LLVM value):

- `func.func` → `llvm.func`: memrefs become pointers (`noalias`, aligned to the
  element, `dereferenceable` for the whole buffer; distinct loop-level buffers
  never overlap), `index` becomes `i64`; private functions (outlined bodies) get
  internal linkage. Every function starts with a *prologue* block that holds the
  constants and `llvm.alloca`s (`backends/llvm/builder.py`);
- `loop.for` (serial): its body block moves into the function and branches back
  to itself, `br ^body(lb)` ... `cond_br %more, ^body(%next), ^exit`
  (bottom-tested: the extent is static and non-zero); `scf.for` (the dynamic
  chunk loop of an outlined body) the same with an entry test;
- `loop.guard`, `scf.if`: branches (a condition known to be constant is folded);
- `loop.alloc`: "local"/"shared" buffers up to 256 KiB are `llvm.alloca`s in the
  prologue, 64-byte aligned; larger ones and "global" ones come from
  `aligned_alloc(64, ...)` and are freed at the end of their block;
- `loop.view`: a GEP into the byte buffer; `func.call`: `llvm.call`;
- `loop.launch`: a task `@<body>_task(%ctx, %chunk, %chunks)` that unpacks the
  arguments from a context struct and calls the body on its chunk of the range,
  and `llvm.call @tilecraft_parallel_launch(@<body>_task, %ctx)`, which the
  backend's runtime (`backends/llvm/runtime.py`) runs on all cores;
- `memref.load`/`store`, `vector.load`/`store`, `vector.maskedload`/`maskedstore`,
  `loop.gather`/`scatter`: GEP addressing, vector and masked memory access
  (`backends/llvm/memory.py`); `vector.broadcast`: a splat;
  `arith`/`math`: one lowering per op kind in the table `HANDLERS` of
  `backends/llvm/ops.py`, applied by one pattern.

Float arithmetic carries the fast-math flags `contract` (so multiply-adds become
FMAs) and, unless the option `reassociate=false` is given, `reassoc` (so LLVM may
vectorize the reductions left in serial loops).

Patterns share one `FunctionBuilder` per function (a small piece of state: the
prologue's constants are made once per function and integer arithmetic on them
is folded in Python, which keeps unrolled code small for xDSL and LLVM). What
the patterns cannot convert is rejected before the walk by `check_convertible`,
at the op, so no pattern fails half way.

Where xDSL's `llvm` dialect has no op for an instruction (vector fcmp/select,
fptosi, masked and gather/scatter memory access), the small `llvmx` dialect in
`backends/llvm/llvmx.py` says it. `llvm`/`llvmx` ops already in the input (the
vector comparisons and casts `loop-vectorize` writes) are kept as they are.

```mlir
func.func @scale(%A: memref<64xf32> {tc.name = "A"}, %B: memref<64xf32>) {
  loop.for %i = 0 to 64 {
    %a = memref.load %A[%i] : memref<64xf32>
    %b = arith.mulf %a, %a : f32
    memref.store %b, %B[%i] : memref<64xf32>
  }
  func.return
}
```
becomes
```mlir
llvm.func @scale(%A: !llvm.ptr {llvm.noalias, llvm.align = 4 : i64, ...}, %B: ...) {
  %c0 = llvm.mlir.constant(0) : i64      // the prologue
  ...
  llvm.br ^bb1
^bb1:
  llvm.br ^bb2(%c0 : i64)
^bb2(%i: i64):
  %p = llvm.getelementptr inbounds %A[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %a = llvm.load %p {alignment = 4 : i64} : !llvm.ptr -> f32
  %b = llvm.fmul %a, %a {fastmathFlags = #llvm.fastmath<reassoc,contract>} : f32
  ...
  %more = llvm.icmp "slt" %next, %c64 : i64
  llvm.cond_br %more, ^bb2(%next : i64), ^bb3
^bb3:
  llvm.return
}
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from tilecraft.backends.llvm.builder import NSW, PTR, FunctionBuilder, scalar_type
from tilecraft.backends.llvm import memory
from tilecraft.backends.llvm.memory import element_bytes, memory_type
from tilecraft.backends.llvm.ops import HANDLERS, OpLowering
from tilecraft.backends.llvm.runtime import PARALLEL_LAUNCH
from tilecraft.dialects.loop import (
    AllocOp,
    ForOp,
    GatherOp,
    GuardOp,
    LaunchOp,
    LoopKind,
    ScatterOp,
    ViewOp,
    YieldOp,
)
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf, vector
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    UnrealizedConversionCastOp,
    VectorType,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

PASS = "convert-loop-to-llvm"
# "local" buffers larger than this go to the heap: worker threads have small stacks.
MAX_STACK_BYTES = 256 * 1024
BUFFER_ALIGNMENT = 64
# Small buffers get a stack slot per copy (SROA keeps them apart in registers);
# larger copies of one buffer (an unrolled body's) share one slot.
SHARED_SLOT_BYTES = 4096


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
        self, pointer: SSAValue, memref_type: Attribute, block: Block | None = None
    ) -> SSAValue:
        """`pointer` seen as a memref again by the ops not yet converted (see `_as_memref`)."""
        value = _as_memref(pointer, memref_type, block)
        self.casts.append(value.owner)  # type: ignore[arg-type]
        return value

    def erase_casts(self) -> None:
        """Drop the casts of `as_memref`, dead once every op is converted."""
        for cast in self.casts:
            assert not cast.results[0].uses, f"{PASS}: a converted memref is still used"
            cast.detach()
            cast.erase()
        self.casts.clear()

    def op_lowering(self, b: FunctionBuilder) -> OpLowering:
        return OpLowering(b, self.fastmath, self.declare)


# What can be converted (checked before any rewriting) -------------------------

SUPPORTED = (
    ForOp, GuardOp, AllocOp, ViewOp, LaunchOp, YieldOp, scf.IfOp, scf.ForOp, scf.YieldOp,
    func.CallOp, func.ReturnOp, memref.LoadOp, memref.StoreOp, arith.ConstantOp,
    vector.LoadOp, vector.StoreOp, vector.MaskedLoadOp, vector.MaskedStoreOp,
    vector.BroadcastOp, GatherOp, ScatterOp,
)  # fmt: skip


def check_convertible(module: ModuleOp) -> None:
    """Raise an `OpError` at the first op the patterns cannot convert."""
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            raise OpError(
                op,
                f"{PASS}: expected only func.func at module level, found '{op.name}'; "
                "lower it to loops first.",
            )
        _check_function(op)
        for inner in op.walk():
            if inner is not op:
                _check_op(inner)


def _check_function(op: func.FuncOp) -> None:
    name = op.sym_name.data
    if not op.body.blocks:
        raise OpError(
            op, f"{PASS}: function declarations are not supported; give '{name}' a body."
        )
    if op.function_type.outputs.data:
        raise OpError(
            op, f"{PASS}: functions return nothing; write results to output memref arguments."
        )
    for i, t in enumerate(op.function_type.inputs.data):
        if isinstance(t, MemRefType):
            ok = all(d >= 0 for d in t.get_shape())
        else:  # outlined bodies also take scalars
            ok = op.sym_visibility is not None and _is_scalar(t)
        if not ok:
            raise OpError(
                op,
                f"{PASS}: argument #{i + 1} of '{name}' has type {t}; "
                "only statically shaped memrefs are supported.",
            )


def _constant_ok(value: Attribute) -> bool:
    if isinstance(value, DenseIntOrFPElementsAttr):
        return isinstance(value.type, VectorType) and len(value.get_shape()) == 1
    return isinstance(value, IntegerAttr | FloatAttr)


def _is_scalar(t: Attribute) -> bool:
    return isinstance(t, IndexType) or scalar_type(t) is t and hasattr(t, "bitwidth")


def _check_op(op: Operation) -> None:
    if isinstance(op, ForOp) and op.kind.data == LoopKind.UNROLLED and op.extent > 1:
        raise OpError(op, f"{PASS}: an unrolled loop is left; run loop-unroll first.")
    if isinstance(op, ForOp) and op.kind.data == LoopKind.PARALLEL and op.extent > 1:
        raise OpError(
            op, f"{PASS}: a parallel loop is left; run loop-outline-parallel first."
        )
    if isinstance(op, ForOp) and op.kind.data == LoopKind.VECTORIZED and op.extent > 1:
        raise OpError(op, f"{PASS}: a vectorized loop is left; run loop-vectorize first.")
    if isinstance(op, func.CallOp) and (
        op.results or not all(isinstance(a.type, MemRefType) for a in op.arguments)
    ):
        raise OpError(
            op, f"{PASS}: a call passes memrefs and returns nothing (the loop calling convention)."
        )
    if isinstance(op, arith.ConstantOp) and not _constant_ok(op.value):
        raise OpError(
            op, f"{PASS}: only scalar and 1-D vector constants are supported, not {op.value}."
        )
    if isinstance(op, scf.ForOp) and (
        op.iter_args
        or not isinstance(step := op.step.owner, arith.ConstantOp)
        or step.value != IntegerAttr(1, IndexType())
    ):
        raise OpError(
            op, f"{PASS}: only scf.for with step 1 and no loop-carried values is supported."
        )
    if op.dialect_name() in ("llvm", "llvmx"):
        return
    if not isinstance(op, SUPPORTED) and type(op) not in HANDLERS:
        raise OpError(
            op,
            f"{PASS}: '{op.name}' is not supported; "
            "lower it to loop, memref, scf.if, arith or math ops first.",
        )


# Functions --------------------------------------------------------------------


@dataclass
class FuncLowering(RewritePattern):
    """`func.func @f(%A: memref<..>)` → `llvm.func @f(%A: !llvm.ptr {noalias ...})`
    with a prologue block that branches to the old body."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        inputs: list[Attribute] = []
        attrs: list[dict[str, Attribute]] = []
        for i, t in enumerate(op.function_type.inputs.data):
            arg: dict[str, Attribute] = {}
            if isinstance(t, MemRefType):
                size = element_bytes(t.element_type)
                arg = {
                    "llvm.noalias": UnitAttr(),
                    "llvm.nonnull": UnitAttr(),
                    "llvm.align": IntegerAttr(size, i64),
                    "llvm.dereferenceable": IntegerAttr(size * prod(t.get_shape()), i64),
                }
            if op.arg_attrs is not None:
                for key in ("tc.name", "tc.weight"):
                    if key in op.arg_attrs.data[i].data:
                        arg[key] = op.arg_attrs.data[i].data[key]
            inputs.append(scalar_type(t))
            attrs.append(arg)
        private = op.sym_visibility is not None and op.sym_visibility.data == "private"
        function = self.state.define(
            op.sym_name.data, inputs, "internal" if private else "external", attrs
        )
        body = op.body.detach_block(op.body.block)
        builder = FunctionBuilder(function, body)
        for old, new in zip(body.args, builder.args):
            new.name_hint = old.name_hint
            old.replace_all_uses_with(
                self.state.as_memref(new, old.type, body)
                if isinstance(old.type, MemRefType)
                else new
            )
        for old in reversed(body.args):
            body.erase_arg(old)
        self.state.builders[function] = builder
        rewriter.replace(op, function)


@dataclass
class ReturnLowering(RewritePattern):
    """`func.return` → `llvm.return`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, llvm.ReturnOp())


@dataclass
class CallLowering(RewritePattern):
    """`func.call @k(%A, %B)` → `llvm.call @k(%A, %B)` (pointers)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        b.call(op.callee.root_reference.data, [pointer_of(a) for a in op.arguments])
        rewriter.erase(op)


# Values -----------------------------------------------------------------------

# A converted memref (a pointer) reaches the ops that still use it through an
# `unrealized_conversion_cast` back to its memref type, which keeps the shape and
# element type visible to them; the casts are dead once every user is converted.


def _as_memref(pointer: SSAValue, memref_type: Attribute, block: Block | None = None) -> SSAValue:
    """`pointer` as a value of `memref_type` (a cast at the start of `block`, or
    right after the pointer's definition)."""
    cast = UnrealizedConversionCastOp.get([pointer], [memref_type])
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


def _replace(rewriter: PatternRewriter, op: Operation, values: list[SSAValue]) -> None:
    """Replace `op` (its new ops are already in place) by `values`."""
    for old, new in zip(op.results, values):
        if old.name_hint and new.owner is not None and not new.name_hint:
            new.name_hint = old.name_hint
        rewriter.replace_all_uses_with(old, new)
    rewriter.erase(op)


@dataclass
class ConstantLowering(RewritePattern):
    """`arith.constant` → one `llvm.mlir.constant` per value in the prologue."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter) -> None:
        value = op.value
        b = self.state.builder(op)
        if isinstance(value, DenseIntOrFPElementsAttr):
            lanes = [int(v) if isinstance(v, bool) else v for v in value.get_values()]
            vector_type = scalar_type(op.result.type)
            if all(v == lanes[0] for v in lanes):
                result = b.const(lanes[0], vector_type)
            else:
                result = b.const_vector(lanes, vector_type)  # type: ignore[arg-type]
            _replace(rewriter, op, [result])
            return
        assert isinstance(value, IntegerAttr | FloatAttr)
        _replace(rewriter, op, [b.const(value.value.data, scalar_type(op.result.type))])


@dataclass
class ArithMathLowering(RewritePattern):
    """An `arith`/`math` op → its LLVM instructions (`HANDLERS[type(op)]`)."""

    state: Conversion

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        handler = HANDLERS.get(type(op))
        if handler is None:
            return
        b = self.state.builder(op)
        result = op.results[0]
        value = handler(self.state.op_lowering(b), op, list(op.operands), scalar_type(result.type))
        _replace(rewriter, op, [value])


def _memref_type(value: SSAValue) -> MemRefType:
    mtype = value.type
    assert isinstance(mtype, MemRefType)
    return mtype


@dataclass
class LoadLowering(RewritePattern):
    """`memref.load %A[%i, %j]` → `llvm.getelementptr` + `llvm.load`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.memref), _memref_type(op.memref)
        _replace(rewriter, op, [memory.load(b, ref, mtype, list(op.indices))])


@dataclass
class StoreLowering(RewritePattern):
    """`memref.store %v, %A[%i, %j]` → `llvm.getelementptr` + `llvm.store`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.memref), _memref_type(op.memref)
        memory.store(b, op.value, ref, mtype, list(op.indices))
        rewriter.erase(op)


def _width(t: Attribute) -> int:
    assert isinstance(t, VectorType)
    return t.get_shape()[0]


@dataclass
class VectorLoadLowering(RewritePattern):
    """`vector.load %A[%i, %j]` → one `<W x T>` load from the address of `A[i, j]`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.LoadOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        value = memory.load(b, ref, mtype, list(op.indices), _width(op.result.type))
        _replace(rewriter, op, [value])


@dataclass
class VectorStoreLowering(RewritePattern):
    """`vector.store %v, %A[%i, %j]` → one `<W x T>` store."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.StoreOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        memory.store(b, op.vector, ref, mtype, list(op.indices))
        rewriter.erase(op)


@dataclass
class MaskedLoadLowering(RewritePattern):
    """`vector.maskedload` → `llvmx.masked_load` (masked-off lanes are 0: the
    pass-through `loop-vectorize` writes)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.MaskedLoadOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        width = _width(op.result.type)
        value = memory.load(b, ref, mtype, list(op.indices), width, op.mask)
        if b.known.get(op.pass_thru) != 0:
            value = b.select(op.mask, value, op.pass_thru)
        _replace(rewriter, op, [value])


@dataclass
class MaskedStoreLowering(RewritePattern):
    """`vector.maskedstore` → `llvmx.masked_store`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.MaskedStoreOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        memory.store(b, op.value_to_store, ref, mtype, list(op.indices), op.mask)
        rewriter.erase(op)


@dataclass
class GatherLowering(RewritePattern):
    """`loop.gather` → `llvmx.masked_gather` from the buffer's base pointer."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GatherOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        _replace(rewriter, op, [memory.gather(b, ref, mtype, op.offsets, op.mask)])


@dataclass
class ScatterLowering(RewritePattern):
    """`loop.scatter` → `llvmx.masked_scatter`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScatterOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        memory.scatter(b, op.value, ref, mtype, op.offsets, op.mask)
        rewriter.erase(op)


@dataclass
class BroadcastLowering(RewritePattern):
    """`vector.broadcast %x` → `%x` in every lane (insertelement + shufflevector)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        _replace(rewriter, op, [b.splat(op.source, _width(op.vector.type))])


# Buffers ----------------------------------------------------------------------


@dataclass
class AllocLowering(RewritePattern):
    """`loop.alloc` → a prologue `llvm.alloca` (small, not global) or
    `aligned_alloc` here and `free` at the end of the block."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AllocOp, rewriter: PatternRewriter) -> None:
        mtype = op.buffer.type
        assert isinstance(mtype, MemRefType)
        stored = memory_type(mtype.element_type)
        count = prod(mtype.get_shape())
        size = count * element_bytes(mtype.element_type)
        b = self.state.builder(op)
        if op.scope.data.value != "global" and size <= MAX_STACK_BYTES:
            # Large copies of one buffer (an unrolled body allocates one per
            # iteration) share a stack slot: each copy is used by its iteration only.
            if size <= SHARED_SLOT_BYTES:
                pointer = b.alloca(stored, count, BUFFER_ALIGNMENT)
            else:
                key = (b.func, op.buffer_name.data, mtype)
                if key not in self.state.stack_slots:
                    self.state.stack_slots[key] = b.alloca(stored, count, BUFFER_ALIGNMENT)
                pointer = self.state.stack_slots[key]
            _replace(rewriter, op, [self.state.as_memref(pointer, mtype)])
            return
        self.state.declare("aligned_alloc", [i64, i64], PTR)
        self.state.declare("free", [PTR], None)
        rounded = -(-size // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT  # aligned_alloc wants a multiple
        pointer = b.call("aligned_alloc", [b.index(BUFFER_ALIGNMENT), b.index(rounded)], PTR)
        assert pointer is not None
        block = op.parent_block()
        assert block is not None and block.last_op is not None
        # Freed before the block's terminator: it moves with the terminator
        # when a later op of the block is split off into new blocks.
        rewriter.insert(llvm.CallOp("free", pointer), InsertPoint.before(block.last_op))
        _replace(rewriter, op, [self.state.as_memref(pointer, mtype)])


@dataclass
class ViewLowering(RewritePattern):
    """`loop.view %arena[256]` → `llvm.getelementptr inbounds i8, %arena[256]`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ViewOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        pointer = b.gep(pointer_of(op.source), b.index(op.offset.data), i8)
        _replace(rewriter, op, [self.state.as_memref(pointer, op.result.type)])


# Control flow -----------------------------------------------------------------


def _split(op: Operation) -> tuple[Block, Block]:
    """Split `op`'s block before `op`: (the block before, the block from `op` on)."""
    before = op.parent_block()
    assert before is not None
    return before, before.split_before(op)


def _insert_block_before(block: Block, after: Block) -> None:
    region = after.parent
    assert region is not None
    region.insert_block_before(block, after)


def _loop_body(
    rewriter: PatternRewriter,
    b: FunctionBuilder,
    op: Operation,
    body: Block,
    lb: SSAValue,
    ub: SSAValue,
    maybe_empty: bool,
) -> None:
    """Turn `op` (a loop whose single body block has the induction variable as
    its argument) into a bottom-tested counted loop `[lb, ub)` with step 1."""
    before, after = _split(op)
    body.parent.detach_block(body)  # type: ignore[union-attr]
    _insert_block_before(body, after)
    iv = rewriter.replace_value_with_new_type(body.args[0], i64)
    yield_op = body.last_op
    assert yield_op is not None
    following = llvm.AddOp(iv, b.index(1), overflow=NSW)
    more = llvm.ICmpOp(following.res, ub, IntegerAttr(llvm.ICmpPredicateFlag("slt").to_int(), i64))
    latch = llvm.CondBrOp(more.res, body, [following.res], after, [])
    for new in (following, more, latch):
        body.insert_op_before(new, yield_op)
    rewriter.erase(yield_op)
    if maybe_empty:
        enter = llvm.ICmpOp(lb, ub, IntegerAttr(llvm.ICmpPredicateFlag("slt").to_int(), i64))
        before.add_op(enter)
        before.add_op(llvm.CondBrOp(enter.res, body, [lb], after, []))
    else:
        before.add_op(llvm.BrOp(body, lb))
    rewriter.erase(op)


@dataclass
class ForLowering(RewritePattern):
    """A serial `loop.for` → a counted loop."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.extent == 0:
            rewriter.erase(op)
            return
        b = self.state.builder(op)
        lb, ub = b.index(op.lb.data), b.index(op.ub.data)
        _loop_body(rewriter, b, op, op.body.block, lb, ub, maybe_empty=False)


@dataclass
class ScfForLowering(RewritePattern):
    """`scf.for %i = %begin to %end step %c1` (an outlined chunk) → a counted
    loop with an entry test (a chunk may be empty)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        _loop_body(rewriter, b, op, op.body.block, op.lb, op.ub, maybe_empty=True)


@dataclass
class GuardLowering(RewritePattern):
    """`loop.guard %c { body }` → `cond_br %c, ^body, ^after` (or the body alone,
    or nothing, when `%c` is a constant)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GuardOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        body = op.body.block
        assert body.last_op is not None
        if op.cond in b.known:
            if b.known[op.cond]:
                rewriter.erase(body.last_op)
                rewriter.inline_block(body, InsertPoint.before(op))
            rewriter.erase(op)
            return
        before, after = _split(op)
        op.body.detach_block(body)
        _insert_block_before(body, after)
        rewriter.replace(body.last_op, llvm.BrOp(after))
        before.add_op(llvm.CondBrOp(op.cond, body, [], after, []))
        rewriter.erase(op)


@dataclass
class IfLowering(RewritePattern):
    """`scf.if` → `cond_br` to the two regions, which branch to a merge block
    whose arguments are the results."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.IfOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        result_types = [scalar_type(r.type) for r in op.results]
        if op.cond in b.known:
            region = op.true_region if b.known[op.cond] else op.false_region
            if not region.blocks:
                rewriter.erase(op)
                return
            block = region.block
            yielded = block.last_op
            assert yielded is not None
            values = list(yielded.operands)
            rewriter.erase(yielded)
            rewriter.inline_block(block, InsertPoint.before(op))
            _replace(rewriter, op, values)
            return
        before = op.parent_block()
        assert before is not None
        after = before.split_before(op, arg_types=result_types)
        targets = []
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                targets.append(after)
                continue
            block = region.block
            region.detach_block(block)
            _insert_block_before(block, after)
            yielded = block.last_op
            assert yielded is not None
            rewriter.replace(yielded, llvm.BrOp(after, *yielded.operands))
            targets.append(block)
        before.add_op(llvm.CondBrOp(op.cond, targets[0], [], targets[1], []))
        _replace(rewriter, op, list(after.args))


# Parallel launches ------------------------------------------------------------


@dataclass
class LaunchLowering(RewritePattern):
    """`loop.launch @body(args) lb to ub` → a task `@body_task(%ctx, %chunk,
    %chunks)` and a call of the runtime with the task and a context struct.

    The task only knows how to split: chunk `c` of `n` is `[lb + c * extent / n,
    lb + (c + 1) * extent / n)`, contiguous and balanced (chunks differ by at most
    one iteration), so the body's vector and unrolled code is the same whatever
    the split. How many chunks and which thread runs which is the runtime's
    decision; a chunk may be empty (the body's entry test covers it)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LaunchOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        body = op.body.root_reference.data
        args = [pointer_of(a) for a in op.args]
        types: list[Attribute] = [a.type for a in args]
        context_type = llvm.LLVMStructType.from_type_list(types)
        name = f"{body}_task"

        # The task: unpack the context, compute the chunk's range, call the body.
        task_function = self.state.define(name, [PTR, i32, i32], "internal")
        task = FunctionBuilder(task_function)
        context, chunk, chunks = task.args
        unpacked = []
        for index, field_type in enumerate(types):
            pointer = task.add(llvm.GEPOp(context, [0, index], context_type))
            unpacked.append(task.add(llvm.LoadOp(pointer, field_type)))
        chunk64 = task.add(llvm.ZExtOp(chunk, i64))
        chunks64 = task.add(llvm.ZExtOp(chunks, i64))
        lb, ub = op.lb.value.data, op.ub.value.data
        extent = task.index(ub - lb)

        def chunk_start(c: SSAValue) -> SSAValue:
            start = task.add(llvm.UDivOp(task.imul(c, extent, nsw=True), chunks64))
            return task.iadd(start, task.index(lb), nsw=True)

        next_chunk = task.iadd(chunk64, task.index(1), nsw=True)
        task.call(body, [*unpacked, chunk_start(chunk64), chunk_start(next_chunk)])
        task.add(llvm.ReturnOp())
        task.finish()
        function = b.func
        rewriter.insert(task_function, InsertPoint.after(function))

        # The launch, where the loop was.
        self.state.declare(PARALLEL_LAUNCH, [PTR, PTR], None)
        context = b.hoist(llvm.AllocaOp(b.index(1), context_type, alignment=8))
        for index, value in enumerate(args):
            pointer = b.add(llvm.GEPOp(context, [0, index], context_type))
            b.add(llvm.StoreOp(value, pointer))
        task_pointer = b.add(llvm.AddressOfOp(name, PTR))
        b.call(PARALLEL_LAUNCH, [task_pointer, context])
        rewriter.erase(op)


def loop_to_llvm_patterns(state: Conversion) -> list[RewritePattern]:
    return [
        FuncLowering(state),
        ReturnLowering(),
        CallLowering(state),
        ConstantLowering(state),
        ArithMathLowering(state),
        LoadLowering(state),
        StoreLowering(state),
        AllocLowering(state),
        ViewLowering(state),
        VectorLoadLowering(state),
        VectorStoreLowering(state),
        MaskedLoadLowering(state),
        MaskedStoreLowering(state),
        GatherLowering(state),
        ScatterLowering(state),
        BroadcastLowering(state),
        ForLowering(state),
        ScfForLowering(state),
        GuardLowering(state),
        IfLowering(state),
        LaunchLowering(state),
    ]


@dataclass(frozen=True)
class ConvertLoopToLlvmPass(ModulePass):
    """Lower loop-level functions to xDSL's llvm dialect (plus `llvmx`)."""

    name = "convert-loop-to-llvm"

    reassociate: bool = True
    """Let LLVM reassociate float arithmetic (needed to vectorize reductions)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_convertible(op)
        flags = ["contract", "reassoc"] if self.reassociate else ["contract"]
        state = Conversion(op, llvm.FastMathAttr([llvm.FastMathFlag(f) for f in flags]))
        PatternRewriteWalker(
            GreedyRewritePatternApplier(loop_to_llvm_patterns(state)),
            apply_recursively=False,
        ).rewrite_module(op)
        state.erase_casts()
        for builder in state.builders.values():
            builder.finish()
