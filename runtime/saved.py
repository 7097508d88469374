"""A compiled model on disk: `model.so`, `manifest.json`, `weights.npz` in one
directory, loaded back with `ctypes.CDLL` and no compiler in sight.

`manifest.json` is derived from the loop-level `@main`'s signature: the entry
point's symbol and one port per argument (name, kind, shape, dtype, the shape
the caller sees), plus what the model reports (kernel calls, planned memory),
and under `files` the size and sha256 of every other file of the directory.

Nothing on disk is trusted. Before anything is mapped into the process, `load`
checks, and reports as a `SavedModelError` naming the file and the key:
- the manifest: JSON, the format tag, the version (an older one is refused with
  a message to save the model again), every key present with its type, every
  port well formed (kind, non-negative shape, a numeric dtype, a caller's shape
  of the same size);
- the directory: exactly the files the manifest lists (one missing or one extra
  is an error), each of its recorded size and sha256, so a truncated or edited
  library is refused before `dlopen` (which would otherwise die of SIGBUS) and
  a weight stored transposed in the same number of bytes is caught;
- the weights: exactly the ports of kind weight, each with its shape and dtype;
- the library: it exports the entry point and `<entry>_signature()`, the first
  64 bits of the sha256 of the entry name and ports it was compiled for
  (`signature_hash`); a manifest whose ports were edited (an input's shape, a
  dtype) disagrees with it.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from tilecraft.runtime.model import INPUT, OUTPUT, WEIGHT, CompiledModel, Port, ctypes_function
from tilecraft.utils.symbolic import SymbolicSizeError, SymExpr, parse
from tilecraft.utils.symbolic import size as symbolic_size

FORMAT = "tilecraft-compiled-model"
# 3: files with sha256 and size; the library exports `<entry>_signature`.
# 4: a port's size known only when the model runs is its name or expression
# (`"batch"`, `"seq * 12"`); the entry takes it after the buffer's address.
VERSION = 4
LIBRARY, MANIFEST, WEIGHTS = "model.so", "manifest.json", "weights.npz"
KINDS = (INPUT, WEIGHT, OUTPUT)


class SavedModelError(ValueError):
    """A saved model directory that cannot be loaded; names the file at fault."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def signature_hash(entry_name: str, ports: list[Port]) -> int:
    """The first 64 bits of the sha256 of what the entry point takes."""
    text = json.dumps({"entry": entry_name, "ports": [p.to_json() for p in ports]}, sort_keys=True)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def signature_symbol(entry_name: str) -> str:
    return f"{entry_name}_signature"


def save(path, model: CompiledModel) -> None:
    from tilecraft.driver.emit import emit_shared_library

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    # `load` refuses files the manifest does not list: a model saved among
    # other files would never load. Overwriting a saved model is fine.
    others = sorted(p.name for p in path.iterdir() if p.name not in (LIBRARY, WEIGHTS, MANIFEST))
    if others:
        raise SavedModelError(
            f"'{path}' holds other files ({', '.join(others)}); save the model into a new or "
            "empty directory"
        )
    signature = {signature_symbol(model.entry_name): signature_hash(model.entry_name, model.ports)}
    emit_shared_library(model._module, path / LIBRARY, model.num_threads, constants=signature)
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
        "files": {
            name: {"bytes": (path / name).stat().st_size, "sha256": sha256_of(path / name)}
            for name in (LIBRARY, WEIGHTS)
        },
    }
    (path / MANIFEST).write_text(json.dumps(manifest, indent=1))


# -- loading ------------------------------------------------------------------


def _require(manifest: Mapping, key: str, kind: type | tuple[type, ...], where: Path):
    """`manifest[key]`, which must be a `kind`."""
    if key not in manifest:
        raise SavedModelError(f"'{where}': the manifest has no key '{key}'")
    value = manifest[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SavedModelError(f"'{where}': key '{key}' must be a {expected}, got {json.dumps(value)}")
    return value


def _port(data, n: int, where: Path) -> Port:
    key = f"ports[{n}]"
    if not isinstance(data, dict):
        raise SavedModelError(f"'{where}': key '{key}' must be an object, got {json.dumps(data)}")
    name = _require(data, "name", str, where)
    kind = _require(data, "kind", str, where)
    shapes = [_require(data, k, list, where) for k in ("shape", "user_shape")]
    dtype_name = _require(data, "dtype", str, where)
    if not name:
        raise SavedModelError(f"'{where}': key '{key}.name' is empty")
    if kind not in KINDS:
        raise SavedModelError(f"'{where}': key '{key}.kind' is '{kind}'; expected one of {', '.join(KINDS)}")
    sized: list[tuple] = []
    for label, shape in zip(("shape", "user_shape"), shapes):
        dims = []
        for d in shape:
            if isinstance(d, str):
                try:
                    dims.append(symbolic_size(parse(d)))
                    continue
                except SymbolicSizeError as e:
                    raise SavedModelError(f"'{where}': key '{key}.{label}' of port '{name}': {e}") from None
            if not isinstance(d, int) or isinstance(d, bool) or d < 0:
                raise SavedModelError(
                    f"'{where}': key '{key}.{label}' of port '{name}' must list non-negative "
                    f"integers or size names, got {json.dumps(shape)}"
                )
            dims.append(d)
        sized.append(tuple(dims))
    from tilecraft.utils.dtypes import NARROW_FLOATS, NARROW_INTS

    narrow = {d.name: d for d in [*NARROW_FLOATS.values(), *NARROW_INTS.values()]}  # ml_dtypes'
    try:
        dtype = narrow[dtype_name] if dtype_name in narrow else np.dtype(dtype_name)
    except TypeError:
        dtype = None
    if dtype is None or (dtype.kind not in "biuf" and dtype_name not in narrow) or dtype.name != dtype_name:
        raise SavedModelError(f"'{where}': key '{key}.dtype' of port '{name}' is not a numeric dtype: '{dtype_name}'")
    shape, user_shape = sized
    if SymExpr.lift(math.prod(shape)) != SymExpr.lift(math.prod(user_shape)):
        raise SavedModelError(
            f"'{where}': port '{name}' has shape {list(shape)} but user_shape {list(user_shape)} "
            "(a different number of elements)"
        )
    return Port(name, kind, shape, dtype, user_shape)


def _read_manifest(path: Path) -> dict:
    manifest_path = path / MANIFEST
    if not path.is_dir():
        raise SavedModelError(f"'{path}' is not a saved tilecraft model: not a directory")
    try:
        text = manifest_path.read_text()
    except OSError as e:
        raise SavedModelError(f"'{path}' is not a saved tilecraft model: cannot read '{manifest_path}': {e.strerror}") from None
    try:
        manifest = json.loads(text)
    except ValueError as e:
        raise SavedModelError(f"'{manifest_path}': not JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SavedModelError(f"'{manifest_path}' is not a tilecraft model manifest (key 'format' is not '{FORMAT}')")
    version = manifest.get("version")
    if version != VERSION:
        raise SavedModelError(
            f"'{manifest_path}': the model was saved in format version {json.dumps(version)}; this "
            f"tilecraft reads version {VERSION} only: compile and save the model again"
        )
    return manifest


def _check_files(path: Path, manifest: dict, manifest_path: Path) -> None:
    """The directory holds exactly the files the manifest lists, intact."""
    files = _require(manifest, "files", dict, manifest_path)
    present = {p.name for p in path.iterdir()} - {MANIFEST}
    for name in sorted(present - set(files)):
        raise SavedModelError(f"'{path / name}': a file the manifest does not list (key 'files'); remove it")
    for name, record in files.items():
        file = path / name
        if Path(name).name != name or name == MANIFEST:
            raise SavedModelError(f"'{manifest_path}': key 'files' names '{name}', which is not a file of the model")
        if not isinstance(record, dict):
            raise SavedModelError(f"'{manifest_path}': key 'files.{name}' must be an object")
        size = _require(record, "bytes", int, manifest_path)
        digest = _require(record, "sha256", str, manifest_path)
        if name not in present:
            raise SavedModelError(f"'{file}': missing (the manifest lists it under key 'files')")
        actual = file.stat().st_size
        if actual != size:
            raise SavedModelError(
                f"'{file}': {actual} bytes, the manifest records {size} (key 'files.{name}.bytes'): "
                "the file is truncated or was replaced"
            )
        if sha256_of(file) != digest:
            raise SavedModelError(
                f"'{file}': its content does not match its sha256 in the manifest "
                f"(key 'files.{name}.sha256'): the file was changed after saving"
            )


def _read_weights(weights_path: Path, ports: list[Port]) -> dict[str, np.ndarray]:
    try:
        with np.load(weights_path, allow_pickle=False) as data:
            weights = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise SavedModelError(f"'{weights_path}': cannot read the weights: {e}") from None
    wanted = {p.name: p for p in ports if p.kind == WEIGHT}
    for name in sorted(set(weights) - set(wanted)):
        raise SavedModelError(f"'{weights_path}' holds weight '{name}', which no port of the manifest takes")
    for name, port in wanted.items():
        array = weights.get(name)
        if array is None:
            raise SavedModelError(f"'{weights_path}' has no weight '{name}', which the model takes")
        if array.shape != port.shape or array.dtype != port.dtype:
            raise SavedModelError(
                f"'{weights_path}': weight '{name}' is {array.dtype}{list(array.shape)}, "
                f"the model takes {port.dtype}{list(port.shape)}"
            )
    return weights


def load(path) -> CompiledModel:
    """A model saved with `CompiledModel.save(path)`, checked (see the module docstring)."""
    path = Path(path)
    manifest_path = path / MANIFEST
    manifest = _read_manifest(path)
    raw_ports = _require(manifest, "ports", list, manifest_path)
    ports = [_port(p, n, manifest_path) for n, p in enumerate(raw_ports)]
    names = [(p.kind, p.name) for p in ports]
    for kind, name in names:
        if names.count((kind, name)) > 1:
            raise SavedModelError(f"'{manifest_path}': key 'ports' names the {kind} '{name}' twice")
    entry_name = _require(manifest, "entry", str, manifest_path)
    if not entry_name or "\0" in entry_name:
        raise SavedModelError(f"'{manifest_path}': key 'entry' is not a symbol name: {json.dumps(entry_name)}")
    library_name = _require(manifest, "library", str, manifest_path)
    weights_name = _require(manifest, "weights", str, manifest_path)
    kernel_calls = _require(manifest, "kernel_calls", list, manifest_path)
    arena_bytes = _require(manifest, "arena_bytes", int, manifest_path)
    naive_bytes = _require(manifest, "naive_bytes", int, manifest_path)
    files = _require(manifest, "files", dict, manifest_path)
    for key, name in (("library", library_name), ("weights", weights_name)):
        if name not in files:
            raise SavedModelError(f"'{manifest_path}': key '{key}' names '{name}', which key 'files' does not list")
    _check_files(path, manifest, manifest_path)
    library_path, weights_path = path / library_name, path / weights_name
    weights = _read_weights(weights_path, ports)
    try:
        library = ctypes.CDLL(str(library_path.resolve()))
    except OSError as e:
        raise SavedModelError(f"'{library_path}': cannot load the model's library: {e}") from None
    try:
        entry = ctypes_function((entry_name, library), sum(1 + len(p.dynamic) for p in ports))
        signature = getattr(library, signature_symbol(entry_name))
    except AttributeError as e:
        raise SavedModelError(
            f"'{library_path}' does not export the model's entry point (key 'entry' = '{entry_name}'): {e}"
        ) from None
    signature.restype, signature.argtypes = ctypes.c_uint64, []
    if signature() != signature_hash(entry_name, ports):
        raise SavedModelError(
            f"'{manifest_path}': key 'ports' does not describe the arguments '{library_path.name}' "
            "was compiled for (was the manifest edited?); compile and save the model again"
        )
    return CompiledModel(
        entry,
        ports,
        weights,
        entry_name=entry_name,
        kernel_calls=[str(k) for k in kernel_calls],
        arena_bytes=arena_bytes,
        naive_bytes=naive_bytes,
        owner=library,
    )
