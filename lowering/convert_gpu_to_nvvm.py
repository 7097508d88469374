"""`convert-gpu-to-nvvm`: the kernels of each `gpu.module` in LLVM IR for NVIDIA GPUs.

A kernel's body is loop IR like any CPU function's, so it goes through the
patterns of `convert-loop-to-llvm` (each `gpu.func` taken as a private
`func.func`: memrefs become pointers, loops branches), plus one pattern that
reads the GPU indices from PTX's special registers:

  gpu.thread_id x  →  llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32, zext to i64
  gpu.block_id y   →  ... "llvm.nvvm.read.ptx.sreg.ctaid.y" ...
  gpu.block_dim z  →  ... "llvm.nvvm.read.ptx.sreg.ntid.z" ...
  gpu.grid_dim x   →  ... "llvm.nvvm.read.ptx.sreg.nctaid.x" ...

(the registers are unsigned 32-bit; the loop IR's `index` is i64), one that
puts each "shared" `loop.alloc` in a module global of address space 3 (PTX's
`.shared`: one per block), and one for barriers:

  gpu.barrier  →  llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()   (bar.sync 0)

The module
keeps its `gpu.module`s, now holding `llvm.func`s, the kernels marked
`gpu.kernel`; the host functions with their `gpu.launch_func`s stay as they are.
`backends/nvptx` turns a `gpu.module` into PTX.

Vectorized loops in a kernel (`s[S].vectorize(axis)`: a thread's 4
consecutive floats) are written as vector code first, as `loop-vectorize`
does, in vectors of at most 16 bytes (`max-vector-bytes=16`), and
`infer-alignment` marks the accesses whose indices prove a 16-byte aligned
address (the buffer arguments are, the runtime checks; shared globals are
`.align 16`): those become `ld.global.v4.f32`, `ld.shared.v4.f32`,
`st.shared.v4.f32`. An access not proved aligned, or not contiguous across
the lanes (a gather, a scatter), stays correct and is split by LLVM into
scalar ones.

Math functions are written out in arithmetic (`backends/nvptx/mathlib.py`:
f32 exp, exp2, log, log2, log10, tanh, erf, sin, cos, pow), since a kernel
has no libm to call.

Rejected, at the op, before any rewriting: what a kernel cannot run yet —
math functions LLVM's NVPTX backend would call libm for (f64 exp, log, ...;
tan, asin, sinh, ... in any type), buffers on the heap
(`loop.alloc` in "global" scope), run-time checks, parallel and virtual-thread
loops inside a kernel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import func, gpu, llvm, math
from xdsl.dialects.builtin import Float32Type, IntAttr, MemRefType, ModuleOp, UnitAttr, i32, i64
from xdsl.ir import Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tilecraft.backends.llvm.builder import element_of
from tilecraft.backends.llvm.memory import memory_type
from tilecraft.backends.nvptx.mathlib import F32_FORMULAS, GPU_HANDLERS
from tilecraft.dialects.llvmx import AddrSpaceCastOp
from tilecraft.dialects.loop import AllocOp, AssertOp, ForOp, LaunchOp, LoopKind, MemoryScope
from tilecraft.analysis.vectorize_legality import check_vectorizable
from tilecraft.lowering.convert_loop_to_llvm import loop_to_llvm_patterns
from tilecraft.lowering.convert_loop_to_llvm.checks import check_convertible
from tilecraft.lowering.convert_loop_to_llvm.state import Conversion, replace_with
from tilecraft.transforms.infer_alignment import InferAlignmentPass
from tilecraft.transforms.loop_vectorize import VectorizeLoop
from tilecraft.utils.diagnostics import OpError

PASS = "convert-gpu-to-nvvm"
SHARED_ADDRESS_SPACE = 3  # NVPTX's .shared
SHARED_ALIGNMENT = 16  # (room for 128-bit vector loads)
ARGUMENT_ALIGNMENT = 16  # what the runtime checks of every array it passes to a kernel
MAX_VECTOR_BYTES = 16  # a thread's widest load or store: ld.global.v4.f32
KERNEL_ATTR = "gpu.kernel"
_F32_NAMES = ", ".join(sorted(op.name.removeprefix("math.") for op in F32_FORMULAS))
_INDEX_OPS = (gpu.ThreadIdOp, gpu.BlockIdOp, gpu.BlockDimOp, gpu.GridDimOp)
_REGISTERS = {gpu.ThreadIdOp: "tid", gpu.BlockIdOp: "ctaid", gpu.BlockDimOp: "ntid", gpu.GridDimOp: "nctaid"}
# Math that lowers to PTX instructions (or, in f32, to backends/nvptx/mathlib.py's
# formulas); the rest would need libm or libdevice.
_MATH_ON_GPU = (math.SqrtOp, math.RsqrtOp, math.AbsFOp, math.AbsIOp, math.FmaOp, math.FloorOp, math.CeilOp,
                math.TruncOp, math.RoundEvenOp, math.CopySignOp)  # fmt: skip


@dataclass
class SpecialRegisterLowering(RewritePattern):
    """`gpu.thread_id x` → `llvm.nvvm.read.ptx.sreg.tid.x`, zero-extended to i64."""

    state: Conversion

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, _INDEX_OPS):
            return
        b = self.state.builder(op)
        register = f"llvm.nvvm.read.ptx.sreg.{_REGISTERS[type(op)]}.{op.dimension.data.value}"
        value = b.intrinsic(register, [], i32)
        replace_with(rewriter, op, [b.add(llvm.ZExtOp(value, i64))])


@dataclass
class SharedAllocLowering(RewritePattern):
    """`loop.alloc "A.shared" shared : memref<64x8xf32>` in a kernel → a module
    global in address space 3 (PTX's `.shared`, one per block) and its address,
    cast to a generic pointer for the loads and stores (LLVM's address-space
    inference makes them `ld.shared`/`st.shared` again):

        llvm.mlir.global internal @k_A_shared_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<512 x f32>
        %0 = llvm.mlir.addressof @k_A_shared_0 : !llvm.ptr<3>
        %1 = llvmx.addrspacecast %0 : !llvm.ptr<3> to !llvm.ptr
    """

    state: Conversion
    globals: dict[str, int] = field(default_factory=dict)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AllocOp, rewriter: PatternRewriter) -> None:
        if op.scope.data != MemoryScope.SHARED:
            return
        mtype = op.buffer.type
        assert isinstance(mtype, MemRefType) and not op.sizes, "checked: shared buffers have static sizes"
        b = self.state.builder(op)
        stem = re.sub(r"\W", "_", f"{b.func.sym_name.data}_{op.buffer_name.data}")
        number = self.globals[stem] = self.globals.get(stem, -1) + 1
        name = f"{stem}_{number}"
        array = llvm.LLVMArrayType(IntAttr(prod(mtype.get_shape())), memory_type(mtype.element_type))
        self.state.module.body.block.add_op(
            llvm.GlobalOp(array, name, "internal", addr_space=SHARED_ADDRESS_SPACE, alignment=SHARED_ALIGNMENT)
        )
        address = b.hoist(llvm.AddressOfOp(name, llvm.LLVMPointerType(IntAttr(SHARED_ADDRESS_SPACE))))
        generic = b.hoist(AddrSpaceCastOp(address, llvm.LLVMPointerType()))
        replace_with(rewriter, op, [self.state.as_memref(generic, mtype)])


@dataclass
class BarrierLowering(RewritePattern):
    """`gpu.barrier` → `llvm.nvvm.barrier0` (PTX `bar.sync 0`)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.BarrierOp, rewriter: PatternRewriter) -> None:
        self.state.builder(op).intrinsic("llvm.nvvm.barrier0", [], None)
        rewriter.erase(op)


def check_kernel(kernel: gpu.FuncOp) -> None:
    """Raise at the first op of `kernel` that the GPU path cannot run yet."""
    for op in kernel.walk():
        if op.dialect_name() == "math" and not isinstance(op, _MATH_ON_GPU):
            f32 = all(isinstance(element_of(r.type), Float32Type) for r in op.results)
            if not (type(op) in F32_FORMULAS and f32):
                what = "written out for f32 only" if type(op) in F32_FORMULAS else "not written out"
                raise OpError(op, f"{PASS}: '{op.name}' on {op.results[0].type} has no GPU lowering yet "
                              f"(a kernel has no libm or libdevice, and it is {what}): compute it "
                              f"in f32, where {_F32_NAMES} are, or on the CPU.")  # fmt: skip
        if isinstance(op, AllocOp) and op.scope.data == MemoryScope.SHARED and op.sizes:
            raise OpError(op, f"{PASS}: shared buffer '{op.buffer_name.data}' has a size known only when "
                          "the kernel runs; shared memory is allocated per block with a static size.")  # fmt: skip
        if isinstance(op, AllocOp) and op.scope.data == MemoryScope.GLOBAL:
            raise OpError(op, f"{PASS}: a kernel cannot allocate a global buffer; keep the stage in 'local' "
                          "scope or compute it in a kernel of its own.")  # fmt: skip
        if isinstance(op, AssertOp | LaunchOp):
            raise OpError(op, f"{PASS}: '{op.name}' cannot run inside a kernel.")
        if isinstance(op, ForOp) and op.kind.data in (LoopKind.PARALLEL, LoopKind.VTHREAD):
            raise OpError(op, f"{PASS}: a {op.kind.data.value} loop inside a kernel is not supported; "
                          "bind the loop to a thread index or leave it serial.")  # fmt: skip


def _as_function(kernel: gpu.FuncOp) -> func.FuncOp:
    """The kernel as a private `func.func` (its body moved), which the loop
    lowering takes; private functions may take scalars."""
    body = kernel.body.detach_block(kernel.body.block)
    terminator = body.last_op
    assert isinstance(terminator, gpu.ReturnOp)
    body.insert_op_before(func.ReturnOp(), terminator)
    terminator.detach()
    terminator.erase()
    return func.FuncOp(kernel.sym_name.data, kernel.function_type, Region(body), visibility="private")


def lower_kernels(kernels: gpu.ModuleOp, reassociate: bool = True) -> None:
    """The `gpu.func`s of `kernels` → `llvm.func`s, in place."""
    functions = [op for op in kernels.body.block.ops if isinstance(op, gpu.FuncOp)]
    for kernel in functions:
        check_kernel(kernel)
    entry_points = {k.sym_name.data for k in functions if k.kernel is not None}
    scratch = ModuleOp([])
    for kernel in functions:
        scratch.body.block.add_op(_as_function(kernel))
        kernel.detach()
        kernel.erase()
    # A thread's vector accesses: at most 16 bytes (ld.v4.f32), aligned where
    # the indices prove it (the runtime checks the arguments are 16-byte aligned).
    check_vectorizable(scratch)
    PatternRewriteWalker(VectorizeLoop(MAX_VECTOR_BYTES), apply_recursively=False).rewrite_module(scratch)
    InferAlignmentPass(argument_alignment=ARGUMENT_ALIGNMENT).apply(Context(), scratch)
    check_convertible(scratch, also_supported=(*_INDEX_OPS, gpu.BarrierOp))
    flags = ["contract", "reassoc"] if reassociate else ["contract"]
    state = Conversion(scratch, llvm.FastMathAttr([llvm.FastMathFlag(f) for f in flags]), handlers=GPU_HANDLERS)
    # (the shared allocations before the loop lowering's, which would put them on the stack)
    patterns = [SharedAllocLowering(state), *loop_to_llvm_patterns(state), SpecialRegisterLowering(state),
                BarrierLowering(state)]  # fmt: skip
    PatternRewriteWalker(GreedyRewritePatternApplier(patterns), apply_recursively=False).rewrite_module(scratch)
    state.erase_casts()
    state.finish_errors()
    for builder in state.builders.values():
        builder.finish()
    for op in list(scratch.body.block.ops):
        op.detach()
        if isinstance(op, llvm.FuncOp) and op.sym_name.data in entry_points:
            op.attributes[KERNEL_ATTR] = UnitAttr()
        kernels.body.block.add_op(op)


@dataclass(frozen=True)
class ConvertGpuToNvvmPass(ModulePass):
    """Lower the kernels of every `gpu.module` to the `llvm` dialect for NVPTX."""

    name = "convert-gpu-to-nvvm"

    reassociate: bool = True
    """Let LLVM reassociate float arithmetic (as convert-loop-to-llvm's option)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernels in [m for m in op.ops if isinstance(m, gpu.ModuleOp)]:
            lower_kernels(kernels, self.reassociate)


__all__ = ["ConvertGpuToNvvmPass", "check_kernel", "lower_kernels"]
