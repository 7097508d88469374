"""Which level of the pipeline IR is at, for messages that tell a user which
passes lower their input.

A function is at the highest level any of its ops belongs to: graph (graph
dialect ops), te (te.compute and the rest of te/sched), else loop when it takes
memrefs or holds loop ops, else graph (a model with no ops yet). Passes and tools
that take one level ask `function_level` or call `require_loop_level`, which
names the level found, the op that shows it, and what lowers it:

    model.mlir:2:3: error: convert-loop-to-llvm: the input is graph-level IR
    ('graph.dense'); it takes loop-level IR: lower it first with compile-model
    (tilecraft-opt -p compile-model)
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation

from tilecraft.utils.diagnostics import OpError

# What takes a module from each level to the loop level.
LOWER_TO_LOOPS = {
    "graph": "compile-model (tilecraft-opt -p compile-model)",
    "te": "convert-te-to-loop (tilecraft-opt -p convert-te-to-loop)",
}


def function_level(f: func.FuncOp) -> tuple[str, Operation]:
    """"graph", "te" or "loop", and the op that shows it (`f` itself when no
    op inside does)."""
    first: dict[str, Operation] = {}
    for op in f.walk():
        dialect = op.name.split(".", 1)[0]
        level = {"graph": "graph", "te": "te", "sched": "te", "loop": "loop"}.get(dialect)
        if level is not None:
            first.setdefault(level, op)
    for level in ("graph", "te", "loop"):
        if level in first:
            return level, first[level]
    if any(isinstance(t, MemRefType) for t in f.function_type.inputs.data):
        return "loop", f
    return "graph", f


def require_loop_level(root: Operation, who: str) -> None:
    """Raise an `OpError` naming the level when a function of `root` holds
    graph or te ops."""
    for f in root.walk():
        if not isinstance(f, func.FuncOp):
            continue
        level, op = function_level(f)
        if level in LOWER_TO_LOOPS and op is not f:
            raise OpError(
                op,
                f"{who}: the input is {level}-level IR ('{op.name}'); it takes loop-level IR: "
                f"lower it first with {LOWER_TO_LOOPS[level]}",
            )
