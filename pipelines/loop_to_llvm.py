"""`loop-to-llvm`: the named pipeline from loop IR to xDSL's `llvm` dialect.

What the JIT, `tilecraft-translate`, `tilecraft-run`, `tc.build` and
`tc.compile` run on a loop-level module (`lower_to_llvm_dialect`, then the
backend), one pass
per transformation, each printable on its own (`tilecraft-opt -p ...
--print-between-passes`):

0. `lower-tensor-intrin`: each `loop.tensor_intrin` becomes its intrinsic's
   loop nest (its "llvm" `LoopKernel`), which the next passes unroll and vectorize;
   `expand-dma`: `loop.dma` copies (from `inject-dma`) become element loops;
1. `loop-partition`: iterations of a loop on which its guards (a split's
   tail) always hold run on a copy without them;
   `loop-unroll{trivial-only=true}`: loops of at most one iteration become their
   body with a constant induction variable;
2. `loop-outline-parallel`: each outermost parallel loop becomes a private
   function of its captured values and a chunk, run by `loop.launch`;
3. `loop-vectorize`: vectorized loops become vector IR (`vector` ops,
   `loop.gather`/`loop.scatter`, masks);
4. `convert-loop-to-llvm`: what is left, one conversion pattern per op kind;
   an unrolled loop becomes a loop marked for LLVM to unroll fully, which the
   backend does before O3 (`backends/llvm/target.py`).

The order matters: outlining before vectorizing keeps the vector code inside
the outlined bodies, where their buffers are `noalias` arguments. Unrolled
loops are left to LLVM: register tiles make unrolled copies most of a kernel
(ResNet-50's 3,000 loop ops would become 37,000), and copies made here cost
every later pass and the translation; made by LLVM they cost a fraction of a
second of C++. `loop-unroll` still shows the unrolled loop IR
(`tilecraft-opt -p loop-unroll`), and run before `convert-loop-to-llvm` it
gives the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.lowering.convert_loop_to_llvm import ConvertLoopToLlvmPass
from tilecraft.transforms.expand_dma import ExpandDmaPass
from tilecraft.transforms.lower_tensor_intrin import LowerTensorIntrinPass
from tilecraft.transforms.loop_outline_parallel import LoopOutlineParallelPass
from tilecraft.transforms.loop_partition import LoopPartitionPass
from tilecraft.transforms.loop_unroll import LoopUnrollPass
from tilecraft.transforms.loop_vectorize import LoopVectorizePass
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from tilecraft.pipelines.run_stages import run_stages
from tilecraft.utils.gc_pause import compiling

LOOP_TO_LLVM = (
    "lower-tensor-intrin",
    "expand-dma",
    "loop-partition",
    "loop-unroll{trivial-only=true}",
    "loop-outline-parallel",
    "loop-vectorize",
    "convert-loop-to-llvm",
)


def loop_to_llvm_passes(reassociate: bool = True) -> tuple[ModulePass, ...]:
    """The passes of `LOOP_TO_LLVM`, in order."""
    passes = (
        LowerTensorIntrinPass(target="llvm"),
        ExpandDmaPass(),
        LoopPartitionPass(),
        LoopUnrollPass(trivial_only=True),
        LoopOutlineParallelPass(),
        LoopVectorizePass(),
        ConvertLoopToLlvmPass(reassociate=reassociate),
    )
    assert tuple(p.name for p in passes) == tuple(s.split("{")[0] for s in LOOP_TO_LLVM)
    return passes


@dataclass(frozen=True)
class LoopToLlvmPass(ModulePass):
    """Run `lower-tensor-intrin`, `expand-dma`, `loop-partition`,
    `loop-unroll{trivial-only=true}`, `loop-outline-parallel`, `loop-vectorize`
    and `convert-loop-to-llvm`, in that order."""

    name = "loop-to-llvm"

    reassociate: bool = True
    """Passed to `convert-loop-to-llvm`."""

    def stages(self) -> tuple[ModulePass, ...]:
        """Its passes (tilecraft-opt runs and prints them one by one)."""
        return loop_to_llvm_passes(self.reassociate)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_stages(self.stages(), ctx, op)


@compiling
def lower_to_llvm_dialect(module: ModuleOp, reassociate: bool = True, in_place: bool = False) -> ModuleOp:
    """A clone of `module` in the llvm dialect (lowered if it holds loop-level
    functions); the caller's module stays as it was, unless `in_place` (a module
    the caller made to be lowered and has no further use for)."""
    from xdsl.dialects import func

    from tilecraft.utils.compile_timing import section

    if in_place:
        clone = module
    else:
        with section("clone"):
            clone = module.clone()
    if any(isinstance(op, func.FuncOp) for op in clone.ops):
        # LLVM verifies the LLVM IR this becomes (backends/llvm/target.py).
        run_stages(LoopToLlvmPass(reassociate=reassociate).stages(), Context(), clone, verify_last=False)
    return clone
