"""Parsing IR and lowering te to loops, as every entry point does: the tools
(`tilecraft-opt`, `-run`, `-translate`) and the Python API run these, so each
runs the same passes.
"""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tilecraft.utils.diagnostics import LocatedParser, verify_module
from tilecraft.utils.gc_pause import compiling


def make_context() -> Context:
    """A context with xDSL's dialects, tilecraft's and plugins' registered (lazily)."""
    from tilecraft.registry import get_multiverse

    ctx = Context()
    for name, factory in get_multiverse().all_dialects.items():
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


@compiling
def lower_to_loops(module: ModuleOp) -> ModuleOp:
    """te + sched -> loop in place (the te stages of compile-model:
    `pipelines.compile_model.lower_te_stages`), verified; returns `module`."""
    from tilecraft.pipelines.compile_model import lower_te_stages
    from tilecraft.pipelines.run_stages import run_stages

    run_stages([stage() for stage in lower_te_stages()], make_context(), module)
    return module
