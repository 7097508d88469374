"""Which level of the pipeline a module is at, for messages that tell a user
which passes lower their input.

A module is at the highest level any of its ops belongs to: graph (graph
dialect ops), te (te.compute and the rest of te/sched), loop (everything after
convert-te-to-loop), or llvm (xDSL's llvm dialect only). Passes and tools that
take one level call `require_level`, which names the level found, the op that
shows it, and what lowers it:

    model.mlir:2:8: error: convert-loop-to-llvm: the input is graph-level IR
    ('graph.dense'); lower it to loops first with compile-model (tilecraft-opt -p compile-model)
"""

from __future__ import annotations

from xdsl.ir import Operation

from tilecraft.utils.diagnostics import OpError

LEVELS = ("graph", "te", "loop", "llvm")

# What takes a module from each level to the loop level.
LOWER_TO_LOOPS = {
    "graph": "compile-model (tilecraft-opt -p compile-model)",
    "te": "convert-te-to-loop (tilecraft-opt -p convert-te-to-loop)",
}


def _level_of_op(op: Operation) -> str | None:
    dialect = op.name.split(".", 1)[0]
    if dialect == "graph":
        return "graph"
    if dialect in ("te", "sched"):
        return "te"
    return None


def highest_level_op(root: Operation) -> tuple[str, Operation | None]:
    """The level of `root` ("graph", "te" or "loop") and the first op that
    shows it (None for loop level)."""
    found: dict[str, Operation] = {}
    for op in root.walk():
        level = _level_of_op(op)
        if level is not None and level not in found:
            found[level] = op
            if level == "graph":
                break
    for level in ("graph", "te"):
        if level in found:
            return level, found[level]
    return "loop", None


def require_loop_level(root: Operation, who: str) -> None:
    """Raise an `OpError` naming the level when `root` holds graph or te ops."""
    level, op = highest_level_op(root)
    if op is None:
        return
    raise OpError(
        op,
        f"{who}: the input is {level}-level IR ('{op.name}'); it takes loop-level IR: "
        f"lower it first with {LOWER_TO_LOOPS[level]}",
    )
