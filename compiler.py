"""The compile pipeline as Python functions: parse, lower te to loops, build with LLVM.

Tools (`tilecraft-run`, `tilecraft-translate`) and the Python API (`tilecraft.lower`,
`tilecraft.build`) all go through these, so every entry point runs the same passes.
"""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.universe import Universe

from tilecraft.utils.diagnostics import LocatedParser, verify_module


def make_context() -> Context:
    """A context with xDSL's dialects and tilecraft's registered (lazily)."""
    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_text(text: str, file_name: str = "<string>") -> ModuleOp:
    """Parse and verify IR text; errors raise `ParseError` or `OpError` (file:line:col)."""
    module = LocatedParser(make_context(), text, file_name).parse_module()
    verify_module(module)
    return module


def parse_file(path: str | Path) -> ModuleOp:
    return parse_text(Path(path).read_text(), str(path))


def has_te(module: ModuleOp) -> bool:
    from tilecraft.dialects.te import ComputeOp

    return any(isinstance(op, ComputeOp) for op in module.walk())


# te + sched -> loop, as `tilecraft-opt -p` spells it: compute_inline carried out
# by te-inline, the schedules applied by convert-te-to-loop, and a function that
# calls the kernels (a model's graph function) given their memref convention.
LOWER_TO_LOOPS = ("te-inline", "convert-te-to-loop", "bufferize-graph-function")


def lower_to_loops(module: ModuleOp) -> ModuleOp:
    """Run the `LOWER_TO_LOOPS` passes on `module` in place, verifying it after each;
    returns `module`."""
    from tilecraft.registry import get_all_passes

    ctx = make_context()
    passes = get_all_passes()
    for name in LOWER_TO_LOOPS:
        passes[name]()().apply(ctx, module)
        verify_module(module)
    return module
