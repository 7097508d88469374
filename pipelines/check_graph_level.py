"""`check-graph-level`: the first stage of compile-model, which takes graph IR.

A te or loop function given to compile-model would otherwise pass through the
graph passes untouched (or lose its te function as dead code) and come out as
something the user did not ask for; this pass stops there with a diagnostic at
the function that says which level it is and what lowers it.

It also stops a model with an op on a zero-size tensor (`tensor<0x16xf32>`)
that fold-empty-tensors, the stage before, could not fold (kernels take no empty
tensors, and the lowering would otherwise fail deep inside convert-graph-to-te):
what is left empty after it are empty `graph.constant`s and arguments nothing
reads, which compile as they are. It stops a model whose arguments have dynamic
dimensions (`tensor<?x16xf32>`), which no later pass can fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, ShapedType
from xdsl.passes import ModulePass

from tilecraft.dialects import graph
from tilecraft.dialects.graph.shapes import symbolic_dims
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.levels import function_level


@dataclass(frozen=True)
class CheckGraphLevelPass(ModulePass):
    name = "check-graph-level"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if not isinstance(f, func.FuncOp):
                continue
            level, _ = function_level(f)
            if level == "te":
                raise OpError(f, f"{self.name}: @{f.sym_name.data} is te-level IR, and compile-model "
                              "takes graph IR (an imported model); lower te with "
                              "-p te-inline,convert-te-to-loop")
            if level == "loop":
                raise OpError(f, f"{self.name}: @{f.sym_name.data} is loop-level IR, and compile-model "
                              "takes graph IR (an imported model); run loop IR with tilecraft-run "
                              "or translate it with tilecraft-translate")
            _check_shapes(f, self.name)


# The most elements one tensor may hold: byte offsets and sizes are i64 in the
# lowering, and no machine has 2**48 bytes of memory to give one tensor anyway.
MAX_ELEMENTS = 1 << 48


def _too_large(t) -> bool:
    if not isinstance(t, ShapedType) or any(d < 0 for d in t.get_shape()):
        return False
    count = 1
    for d in t.get_shape():
        count *= d
    return count > MAX_ELEMENTS


def _empty(t) -> bool:
    return isinstance(t, ShapedType) and 0 in t.get_shape()


def _check_shapes(f: func.FuncOp, pass_name: str) -> None:
    """Arguments of static shapes (an empty one only if nothing reads it); no op on
    an empty tensor but an empty graph.constant; no tensor too large to address."""
    for n, arg in enumerate(f.body.block.args if f.body.blocks else ()):
        if _empty(arg.type) and arg.uses:
            user = next(iter(arg.uses)).operation
            raise OpError(user, f"{pass_name}: '{user.name}' reads argument #{n + 1} of @{f.sym_name.data}, "
                          f"an empty tensor ({arg.type}); run fold-empty-tensors first, which "
                          "replaces empty tensors by constants")
        if _too_large(arg.type):
            raise OpError(f, f"{pass_name}: argument #{n + 1} of @{f.sym_name.data} ({arg.type}) has "
                          f"more than 2**48 elements; tilecraft cannot address a tensor that large")
        named = len(symbolic_dims(arg.type))
        if isinstance(arg.type, ShapedType) and sum(d < 0 for d in arg.type.get_shape()) > named:
            raise OpError(f, f"{pass_name}: argument #{n + 1} of @{f.sym_name.data} has a dynamic "
                          f"shape ({arg.type}) whose '?' sizes are not named: name them "
                          "(tensor<?x64xf32, [\"batch\"]>) or give every dimension "
                          "(tilecraft-import --input-shape NAME=D1,D2,...)")
    for op in f.walk():
        if isinstance(op, (graph.ConstantOp, func.ReturnOp)):
            continue
        empty = next((v for v in (*op.results, *op.operands) if _empty(v.type)), None)
        if empty is not None:
            raise OpError(op, f"{pass_name}: '{op.name}' on an empty tensor ({empty.type}) is not "
                          "supported: tilecraft compiles ops on empty tensors only where "
                          "fold-empty-tensors (compile-model's first stage) folds them away")
        for r in op.results:
            if _too_large(r.type):
                raise OpError(op, f"{pass_name}: '{op.name}' gives {r.type}, more than 2**48 elements; "
                              "tilecraft cannot address a tensor that large")
