"""`convert-loop-to-llvm`: the loop program as LLVM IR (xDSL's `llvm` dialect).

It runs after `loop-outline-parallel` and `loop-vectorize` (see
the pipeline `loop-to-llvm`, `pipelines/loop_to_llvm.py`): every loop left is serial
(or unrolled, for LLVM to unroll),
parallel work is a `loop.launch` of an outlined function and vector code is
`vector`/`loop.gather`/`loop.scatter` ops and arith/math on vectors. One
conversion pattern per op kind, applied in one forward walk (parents before
their bodies, so every operand an op sees is already an LLVM value):

- `func.func` → `llvm.func`: memrefs become pointers (`noalias`, aligned to the
  element, `dereferenceable` for the whole buffer; distinct loop-level buffers
  never overlap), each followed by one i64 per `?` size of its type (`memref.dim`
  reads them), `index` becomes `i64`; private functions (outlined bodies) get
  internal linkage. Every function starts with a *prologue* block that holds the
  constants and `llvm.alloca`s (`backends/llvm/builder.py`);
- `loop.for` (serial): its body block moves into the function and branches back
  to itself, `br ^body(lb)` ... `cond_br %more, ^body(%next), ^exit`
  (bottom-tested: the extent is static and non-zero); `scf.for` (the dynamic
  chunk loop of an outlined body) the same with an entry test; an unrolled
  `loop.for` the same, its back edge marked `llvmx.unroll_full`, which LLVM
  unrolls fully before O3 (`backends/llvm/target.py`);
- `loop.guard`, `scf.if`: branches (a condition known to be constant is folded);
- `loop.assert`: a branch to a block that stores the message's code in the global
  `__tilecraft_error` (the messages are the constant `__tilecraft_error_messages`),
  which the caller checks after the call;
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

The patterns are grouped by idea: `functions.py` (functions, calls, constants,
arith/math), `memory.py` (buffers, loads, stores, vector memory access),
`control_flow.py` (loops, guards, `scf.if`, launches); `state.py` holds what
they share and `checks.py` what is checked before the walk.

Where xDSL's `llvm` dialect has no op for an instruction (vector fcmp/select,
fptosi, masked and gather/scatter memory access), the small `llvmx` dialect in
`dialects/llvmx.py` says it. `llvm`/`llvmx` ops already in the input (the
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

from dataclasses import dataclass

from tilecraft.lowering.convert_loop_to_llvm.checks import check_convertible
from tilecraft.lowering.convert_loop_to_llvm.control_flow import (
    AssertLowering,
    ForLowering,
    GuardLowering,
    IfLowering,
    LaunchLowering,
    ScfForLowering,
)
from tilecraft.lowering.convert_loop_to_llvm.functions import (
    ArithMathLowering,
    CallLowering,
    ConstantLowering,
    FuncLowering,
    ReturnLowering,
)
from tilecraft.lowering.convert_loop_to_llvm.memory import (
    AllocLowering,
    BroadcastLowering,
    DimLowering,
    GatherLowering,
    LoadLowering,
    MaskedLoadLowering,
    MaskedStoreLowering,
    ScatterLowering,
    StoreLowering,
    VectorLoadLowering,
    VectorStoreLowering,
    ViewLowering,
)
from tilecraft.lowering.convert_loop_to_llvm.state import Conversion
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern


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
        DimLowering(state),
        ForLowering(state),
        ScfForLowering(state),
        GuardLowering(state),
        AssertLowering(state),
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
        state.finish_errors()
        for builder in state.builders.values():
            builder.finish()
