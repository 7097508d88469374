"""Run a pipeline's passes on a module, timed, and verify what they make.

The module is verified once after the last pass. Verifying after every pass
as well (MLIR's default) costs a quarter of a small model's compile in xDSL, so
the Python API does it only when asked: `TILECRAFT_VERIFY_EACH=1` in the
environment, or `verify_each=True`. `tilecraft-opt` verifies after every pass
unless given `--disable-verify`, as `mlir-opt` does, so a pass that breaks the
IR is still named by the tool that runs passes one by one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilecraft.dialects.graph.shapes import ShapeError
from tilecraft.utils.compile_timing import pass_label, section
from tilecraft.utils.diagnostics import OpError, verify_module
from tilecraft.utils.symbolic import SymbolicSizeError
from tilecraft.utils.gc_pause import compiling


def verify_each_default() -> bool:
    """Whether `TILECRAFT_VERIFY_EACH` asks for verification after every pass."""
    return os.environ.get("TILECRAFT_VERIFY_EACH", "0") not in ("", "0")


@compiling
def run_stages(
    stages: Iterable[ModulePass],
    ctx: Context,
    module: ModuleOp,
    *,
    verify_each: bool | None = None,
    verify_last: bool = True,
) -> None:
    """Apply `stages` to `module` in order, each in a timing section of its name;
    verify after each when `verify_each` (default: `verify_each_default()`), and
    after the last unless not `verify_last` (a module that another verifier
    checks next: LLVM's, of the LLVM IR the llvm dialect becomes)."""
    if verify_each is None:
        verify_each = verify_each_default()
    stages = list(stages)
    for stage in stages:
        with section(pass_label(stage)):
            try:
                stage.apply(ctx, module)
            except (ShapeError, SymbolicSizeError) as e:
                # (an op a pass built whose shape rule refused its operands, a size
                # known only when it runs where a pass needs a number)
                raise OpError(None, f"{stage.name}: {e}") from None
        if verify_each:
            _verify(module, f"after pass '{stage.name}'")
    if verify_last and not verify_each and stages:
        names = ", ".join(stage.name for stage in stages)
        _verify(module, f"after passes {names} (TILECRAFT_VERIFY_EACH=1 names the pass at fault)")


def _verify(module: ModuleOp, when: str) -> None:
    with section("verify"):
        try:
            verify_module(module)
        except OpError as e:
            raise OpError(e.op, f"{e.message} [{when}]") from None
