"""A compiled model on disk: `kernels.so`, `manifest.json`, `weights.npz` in one
directory, loaded back with `ctypes.CDLL` and no compiler in sight.

`manifest.json` holds the format tag, the plan (inputs, outputs, slots, steps,
arena size; see plan.py) and the kernels' argument counts.
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import numpy as np

from tilecraft.runtime.model import CompiledModel, ctypes_function
from tilecraft.runtime.plan import Plan

FORMAT = "tilecraft-compiled-model"
VERSION = 1
LIBRARY, MANIFEST, WEIGHTS = "kernels.so", "manifest.json", "weights.npz"


def save(path, plan: Plan, constants: dict[str, np.ndarray], kernel_module) -> None:
    from tilecraft.backends.llvm import emit_shared_library

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    emit_shared_library(kernel_module, path / LIBRARY)
    used = {s.ref for s in plan.slots if s.kind == "const"}
    with open(path / WEIGHTS, "wb") as f:
        np.savez(f, **{k: v for k, v in constants.items() if k in used})
    arity = {step.kernel: len(step.args) for step in plan.steps}
    manifest = {"format": FORMAT, "version": VERSION, "library": LIBRARY, "weights": WEIGHTS,
                "kernels": arity, "plan": plan.to_json()}
    (path / MANIFEST).write_text(json.dumps(manifest, indent=1))


def load(path) -> CompiledModel:
    """A model saved with `CompiledModel.save(path)`."""
    path = Path(path)
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"'{path}' is not a saved tilecraft model: {e}") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ValueError(f"'{path / MANIFEST}' is not a version-{VERSION} tilecraft model manifest")
    library = ctypes.CDLL(str((path / manifest["library"]).resolve()))
    functions = {name: ctypes_function((name, library), n) for name, n in manifest["kernels"].items()}
    with np.load(path / manifest["weights"], allow_pickle=False) as data:
        constants = {k: data[k] for k in data.files}
    plan = Plan.from_json(manifest["plan"])
    return CompiledModel(plan, functions, constants, owner=library)
