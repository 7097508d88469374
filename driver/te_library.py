"""Saving a built te function: `f.export_library("f.so")`, `f.save("f.o")` (+
`tvm.contrib.cc.create_shared`); `tilecraft.runtime.load_module` loads it back
(runtime/loaded_function.py).

The library holds the native function (the backend's convention: inputs, then
outputs), once per set of sizes for a function with `te.var` sizes (each size it
was called with so far, under its own symbol). `<path>.json`, written next to
the file, holds what the loader needs to call it safely: per variant its symbol
and each argument's name, shape and dtype in the backend's order, which of them
are written; and the user's argument order. A loaded function picks the variant
whose shapes match the arrays it is given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilecraft.driver.te_function import TeBuild

FORMAT = "tilecraft-te-function"
VERSION = 2


def merged_module(variants):
    """One loop-level module holding the functions of several modules."""
    from xdsl.dialects.builtin import ModuleOp

    return ModuleOp([op.clone() for _, module in variants for op in module.ops])


def manifest(function: TeBuild, variants) -> dict:
    """The JSON manifest for `variants`, a list of (symbol, loop-level module)."""
    from xdsl.dialects import func

    from tilecraft.backends.llvm.jit import shape_to_json, signatures_of
    from tilecraft.frontends.te.symbolic import Var
    from tilecraft.frontends.te.tensor import ComputeOp

    size_ids = {id(v) for v in function.size_vars}
    positions = [n for n, a in enumerate(function.args) if not (isinstance(a, Var) and id(a) in size_ids)]
    call_args = [function.args[n] for n in positions]
    is_input = [isinstance(a, Var) or not isinstance(a.op, ComputeOp) for a in call_args]
    order = [n for n, i in enumerate(is_input) if i] + [n for n, i in enumerate(is_input) if not i]
    entries = []
    for symbol, module in variants:
        specs = signatures_of([op for op in module.ops if isinstance(op, func.FuncOp)])[symbol]
        entries.append({
            "symbol": symbol,
            "args": [
                {"name": s.name, "shape": shape_to_json(s.shape), "dtype": str(s.dtype), "output": s.output}
                for s in specs
            ],
        })
    return {
        "format": FORMAT,
        "version": VERSION,
        "entry": function.entry_name,
        "arity": len(function.args),
        "positions": positions,  # the user's arguments passed on (explicit sizes are not)
        "order": order,  # backend argument k is the k-th of those
        "scalars": [n for n, a in enumerate(call_args) if isinstance(a, Var)],
        "variants": entries,
    }


def export_library(function: TeBuild, variants, path: str) -> None:
    from tilecraft.driver.emit import emit_shared_library

    emit_shared_library(merged_module(variants), path)
    Path(path + ".json").write_text(json.dumps(manifest(function, variants), indent=1))


def save_object(function: TeBuild, variants, path: str) -> None:
    from tilecraft.driver.emit import emit_object

    Path(path).write_bytes(emit_object(merged_module(variants)))
    Path(path + ".json").write_text(json.dumps(manifest(function, variants), indent=1))


def link_manifest(output: str, objects: list[str]) -> None:
    """After `create_shared(output, objects)`: the manifest of the one object
    that has one, for `load_module(output)`."""
    found = [o for o in objects if Path(str(o) + ".json").exists()]
    if len(found) == 1:
        Path(output + ".json").write_text(Path(str(found[0]) + ".json").read_text())
