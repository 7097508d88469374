"""A compiled model on disk: `model.so`, `manifest.json`, `weights.npz` in one
directory, loaded back with `ctypes.CDLL` and no compiler in sight.

`manifest.json` is derived from the loop-level `@main`'s signature: the entry
point's symbol and one port per argument (name, kind, shape, dtype, the shape
the caller sees), plus what the model reports (kernel calls, planned memory).
Loading checks what it reads: the format tag, every port, and that every weight
the entry point takes is in the weights file with its shape and dtype.
"""

from __future__ import annotations

import ctypes
import json
import zipfile
from pathlib import Path

import numpy as np

from tilecraft.runtime.model import WEIGHT, CompiledModel, Port, ctypes_function

FORMAT = "tilecraft-compiled-model"
VERSION = 2
LIBRARY, MANIFEST, WEIGHTS = "model.so", "manifest.json", "weights.npz"


class SavedModelError(ValueError):
    """A saved model directory that cannot be loaded; names the file at fault."""


def save(path, model: CompiledModel) -> None:
    from tilecraft.compiler import emit_shared_library

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    emit_shared_library(model._module, path / LIBRARY, model.num_threads)
    with open(path / WEIGHTS, "wb") as f:
        np.savez(f, **model.weights)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "library": LIBRARY,
        "weights": WEIGHTS,
        "entry": model.entry_name,
        "ports": [p.to_json() for p in model.ports],
        "kernel_calls": model.kernel_calls,
        "arena_bytes": model.planned_bytes,
        "naive_bytes": model.naive_bytes,
    }
    (path / MANIFEST).write_text(json.dumps(manifest, indent=1))


def load(path) -> CompiledModel:
    """A model saved with `CompiledModel.save(path)`."""
    path = Path(path)
    manifest_path = path / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as e:
        raise SavedModelError(f"'{path}' is not a saved tilecraft model: {e}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise SavedModelError(f"'{manifest_path}' is not a version-{VERSION} tilecraft model manifest")
    try:
        ports = [Port.from_json(p) for p in manifest["ports"]]
        entry_name = str(manifest["entry"])
        library_path = path / str(manifest["library"])
        weights_path = path / str(manifest["weights"])
    except (KeyError, TypeError, ValueError) as e:
        raise SavedModelError(f"'{manifest_path}': malformed manifest ({type(e).__name__}: {e})") from None
    try:
        with np.load(weights_path, allow_pickle=False) as data:
            weights = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise SavedModelError(f"'{weights_path}': cannot read the weights: {e}") from None
    for port in ports:
        if port.kind != WEIGHT:
            continue
        array = weights.get(port.name)
        if array is None:
            raise SavedModelError(f"'{weights_path}' has no weight '{port.name}', which the model takes")
        if array.shape != port.shape or array.dtype != port.dtype:
            raise SavedModelError(
                f"'{weights_path}': weight '{port.name}' is {array.dtype}{list(array.shape)}, "
                f"the model takes {port.dtype}{list(port.shape)}"
            )
    try:
        library = ctypes.CDLL(str(library_path.resolve()))
        entry = ctypes_function((entry_name, library), len(ports))
    except (OSError, AttributeError) as e:
        raise SavedModelError(f"'{library_path}': cannot load the model's library: {e}") from None
    return CompiledModel(
        entry,
        ports,
        weights,
        entry_name=entry_name,
        kernel_calls=manifest.get("kernel_calls", []),
        arena_bytes=int(manifest.get("arena_bytes", 0)),
        naive_bytes=int(manifest.get("naive_bytes", 0)),
        owner=library,
    )
