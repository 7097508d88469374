"""`compile-model`: an imported graph module down to loop IR, the one pipeline
that `tilecraft.compile` runs and `tilecraft-opt -p compile-model` prints.

```
graph (imported) ──infer-shapes, canonicalize, alter-layout, fold-constants,
                   cse, dce, fuse-ops, plan-memory──▶ graph (fused groups, offsets)
      ──convert-graph-to-te──▶ te kernels + calls ──fold-constant-kernels──▶
      ──convert-te-to-loop──▶ loop kernels + a loop-level @main
```

The result is one module: the kernels as loop functions and `@main`, which takes
the model's inputs, then its weights (`{tc.weight = "name"}`), then its outputs,
and calls the kernels on views of one arena. `tilecraft.compile` JIT-compiles
that module and calls `@main` once per model call.

The pipeline is a pass so that it has one name everywhere; `stages()` lists its
passes, which `tilecraft-opt --print-between-passes` prints one by one, and the
module is verified after each. Options: `fuse=false` compiles every op as its own
kernel (fuse-ops{enabled=false}, what TVM's opt level 0 does).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilecraft.utils.diagnostics import verify_module

# The stages, by registered pass name, in order.
GRAPH_STAGES = (
    "infer-shapes",
    # identities removed, batch_norm folded into its conv/dense, small values folded
    "canonicalize",
    # alter-layout before fold-constants, which then packs the weights once.
    "alter-layout",
    "fold-constants",
    "cse",
    "dce",
    "fuse-ops",
    "plan-memory",
)
LOWERING_STAGES = (
    "convert-graph-to-te",
    "fold-constant-kernels",
    "convert-te-to-loop",
)
STAGES = (*GRAPH_STAGES, *LOWERING_STAGES)


class PipelineError(LookupError):
    """A stage the pipeline needs is not registered."""


def registered_pass(name: str) -> type[ModulePass]:
    """The registered pass class `name` (tilecraft's, a plugin's or xDSL's)."""
    from tilecraft.registry import get_multiverse

    factory = get_multiverse().all_passes.get(name)
    if factory is None:
        raise PipelineError(f"compile-model needs pass '{name}', which is not registered")
    return factory()


@dataclass(frozen=True)
class CompileModelPass(ModulePass):
    """Graph IR in, loop IR out: the whole model pipeline (see the module docstring)."""

    name = "compile-model"

    fuse: bool = True

    def stages(self) -> tuple[ModulePass, ...]:
        passes: list[ModulePass] = []
        for name in STAGES:
            stage = registered_pass(name)
            # Without fusion every op is a group of its own (TVM's opt level 0), so
            # plan-memory and convert-graph-to-te see groups either way.
            passes.append(stage(enabled=False) if name == "fuse-ops" and not self.fuse else stage())
        return tuple(passes)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for stage in self.stages():
            stage.apply(ctx, op)
            verify_module(op)
