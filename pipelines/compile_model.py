"""`compile-model`: an imported graph module down to loop IR, the one pipeline
that `tilecraft.compile` runs and `tilecraft-opt -p compile-model` prints.

```
graph (imported) ──fold-empty-tensors, check-graph-level, infer-shapes, canonicalize,
                   alter-layout, winograd-conv2d, fold-constants, cse, dce, fuse-ops,
                   concat-in-place, plan-memory──▶ graph (fused groups, offsets)
      ──convert-graph-to-te──▶ te kernels + calls ──fold-constant-kernels──▶
      ──te-inline, convert-te-to-loop──▶ loop kernels
      ──bufferize-graph-function──▶ + a loop-level @main
```

The result is one module: the kernels as loop functions and `@main`, which takes
the model's inputs, then its weights (`{tc.weight = "name"}`), then its outputs,
and calls the kernels on views of one arena. `tilecraft.compile` JIT-compiles
that module and calls `@main` once per model call.

The pipeline is a pass so that it has one name everywhere; `stages()` lists its
passes, which `tilecraft-opt --print-between-passes` prints one by one; the
module is verified after the last (after each with `TILECRAFT_VERIFY_EACH=1`,
and always in `tilecraft-opt`). Options: `fuse=false` compiles every op as its own
kernel (fuse-ops{enabled=false}, what TVM's opt level 0 does).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilecraft.pipelines.run_stages import run_stages


def lower_te_stages() -> tuple[type[ModulePass], ...]:
    """te + sched -> loop: compute_inline carried out by te-inline, the schedules
    applied by convert-te-to-loop, and the function calling the kernels (a model's
    graph function) given their memref convention. `tilecraft.lower`/`build`,
    tilecraft-run and tilecraft-translate run these too."""
    from tilecraft.lowering.bufferize_graph_function import BufferizeGraphFunctionPass
    from tilecraft.lowering.convert_te_to_loop import ConvertTeToLoopPass
    from tilecraft.transforms.te_inline import TeInlinePass

    return (TeInlinePass, ConvertTeToLoopPass, BufferizeGraphFunctionPass)


def stage_classes() -> tuple[type[ModulePass], ...]:
    """The pass of each stage, in order."""
    from xdsl.transforms.canonicalize import CanonicalizePass
    from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    from tilecraft.lowering.convert_graph_to_te import ConvertGraphToTePass
    from tilecraft.transforms.alter_layout import AlterLayoutPass
    from tilecraft.transforms.concat_in_place import ConcatInPlacePass
    from tilecraft.transforms.fold_constant_kernels import FoldConstantKernelsPass
    from tilecraft.transforms.fold_constants import FoldConstantsPass
    from tilecraft.transforms.fold_empty_tensors import FoldEmptyTensorsPass
    from tilecraft.transforms.fuse_ops import FuseOpsPass
    from tilecraft.transforms.infer_shapes import InferShapesPass
    from tilecraft.transforms.plan_memory import PlanMemoryPass
    from tilecraft.transforms.winograd_conv2d import WinogradConv2dPass

    from tilecraft.pipelines.check_graph_level import CheckGraphLevelPass

    return (
        # tensors with a zero extent become constants first: no kernel sees one
        FoldEmptyTensorsPass,
        CheckGraphLevelPass,
        InferShapesPass,
        # identities removed, batch_norm folded into its conv/dense, small values folded
        CanonicalizePass,
        # alter-layout before fold-constants, which then packs the weights once
        AlterLayoutPass,
        # 3x3 convs as Winograd F(2x2, 3x3) where it pays; fold-constants then
        # transforms their weights once
        WinogradConv2dPass,
        FoldConstantsPass,
        CommonSubexpressionElimination,
        DeadCodeElimination,
        FuseOpsPass,
        # a concat of kernel results: its producers write into its buffer
        ConcatInPlacePass,
        PlanMemoryPass,
        ConvertGraphToTePass,
        FoldConstantKernelsPass,
        *lower_te_stages(),
    )


@dataclass(frozen=True)
class CompileModelPass(ModulePass):
    """Graph IR in, loop IR out: the whole model pipeline (see the module docstring)."""

    name = "compile-model"

    fuse: bool = True

    def stages(self) -> tuple[ModulePass, ...]:
        from tilecraft.transforms.fuse_ops import FuseOpsPass

        passes: list[ModulePass] = []
        for stage in stage_classes():
            # Without fusion every op is a group of its own (TVM's opt level 0), so
            # plan-memory and convert-graph-to-te see groups either way.
            passes.append(FuseOpsPass(enabled=False) if stage is FuseOpsPass and not self.fuse else stage())
        return tuple(passes)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_stages(self.stages(), ctx, op)


def fused_module(ctx: Context, module: ModuleOp) -> ModuleOp:
    """`module` (changed in place) after the stages up to fuse-ops: the fused graph
    `tilecraft-analyze --graph` draws (analysis/fused_graph.py)."""
    from tilecraft.transforms.fuse_ops import FuseOpsPass

    stages = stage_classes()
    run_stages([stage() for stage in stages[: stages.index(FuseOpsPass) + 1]], ctx, module)
    return module
