"""`check-graph-level`: the first stage of compile-model, which takes graph IR.

A te or loop function given to compile-model would otherwise pass through the
graph passes untouched (or lose its te function as dead code) and come out as
something the user did not ask for; this pass stops there with a diagnostic at
the function that says which level it is and what lowers it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.passes import ModulePass

from tilecraft.utils.diagnostics import OpError


def ir_level(f: func.FuncOp) -> str:
    """"te", "loop" or "graph": the level of a function, from what it holds."""
    if any(op.name.startswith(("te.", "sched.")) for op in f.walk()):
        return "te"
    memrefs = any(isinstance(t, MemRefType) for t in f.function_type.inputs.data)
    if memrefs or any(op.name.startswith("loop.") for op in f.walk()):
        return "loop"
    return "graph"


@dataclass(frozen=True)
class CheckGraphLevelPass(ModulePass):
    name = "check-graph-level"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if not isinstance(f, func.FuncOp):
                continue
            level = ir_level(f)
            if level == "te":
                raise OpError(f, f"{self.name}: @{f.sym_name.data} is te-level IR, and compile-model "
                              "takes graph IR (an imported model); lower te with "
                              "-p te-inline,convert-te-to-loop")
            if level == "loop":
                raise OpError(f, f"{self.name}: @{f.sym_name.data} is loop-level IR, and compile-model "
                              "takes graph IR (an imported model); run loop IR with tilecraft-run "
                              "or translate it with tilecraft-translate")
