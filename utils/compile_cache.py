"""An on-disk cache of compiled code, so that compiling a model again (or a kernel
that another model shares) costs a file read instead of the passes and LLVM.

Where: `$TILECRAFT_CACHE_DIR` if set (`TILECRAFT_CACHE_DIR=0` turns the cache
off), else `$XDG_CACHE_HOME/tilecraft`, else `~/.cache/tilecraft`. Without a
home directory the cache is off.

What: entries by kind (`object`: a kernel's machine code; `model`: what
tc.compile made of a model) and key. A key is a SHA-256 of everything that
determines the entry: the printed IR it was made from, the target (triple, CPU,
features), the thread count where it is baked in, and the `environment()` of the
compiler (tilecraft's version and the digest of its source files, xDSL's,
llvmlite's and LLVM's versions), so an entry made by other code is never found.

Each file starts with a header line `tilecraft-cache 1 <kind> <key> <length>
<crc32>`; an entry whose header, length or checksum does not match what is read
(a truncated write by another tool, a damaged disk, a file copied from another
key) is ignored, deleted and rebuilt, never loaded. Writes go to a temporary file
in the same directory and are renamed into place, so readers (concurrent test
workers, two processes compiling one model) see a whole entry or none.

The counters (`stats`) count hits, misses, rejected entries and writes per kind,
so tests can tell a hit from a rebuild without timing anything.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ENV = "TILECRAFT_CACHE_DIR"
FORMAT = b"tilecraft-cache 1"

# (kind, event) -> count, event in "hit", "miss", "rejected", "write".
stats: Counter[tuple[str, str]] = Counter()


def cache_dir() -> Path | None:
    """The cache's directory, or None when the cache is off."""
    value = os.environ.get(ENV)
    if value is not None:
        value = value.strip()
        if value in ("0", ""):
            return None
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if base:
        return Path(base) / "tilecraft"
    try:
        return Path.home() / ".cache" / "tilecraft"
    except (RuntimeError, KeyError):  # no home directory: no cache
        return None


@functools.cache
def environment() -> str:
    """What else determines compiled code: the versions of tilecraft, xDSL,
    llvmlite and LLVM, and a digest of tilecraft's own source (a change to any
    pass changes every key, without anyone bumping a version)."""
    import importlib.metadata

    import llvmlite
    import llvmlite.binding as llvm

    root = Path(__file__).resolve().parent.parent
    skipped = {"tests", "bench", "examples", "docs", "build", "__pycache__"}
    sources = []
    for directory, subdirectories, files in os.walk(root):
        # Pruned in place: a virtual environment inside the checkout is never read.
        subdirectories[:] = [d for d in subdirectories if d not in skipped and not d.startswith(".")]
        sources += [Path(directory) / f for f in files if f.endswith(".py")]
    digest = hashlib.sha256()
    for path in sorted(sources):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    try:
        version = importlib.metadata.version("tilecraft")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    xdsl = importlib.metadata.version("xdsl")
    llvm_version = ".".join(map(str, llvm.llvm_version_info))
    return f"tilecraft {version} {digest.hexdigest()[:16]} xdsl {xdsl} llvmlite {llvmlite.__version__} llvm {llvm_version}"


def make_key(*parts: str | bytes) -> str:
    """The SHA-256 (hex) of `parts` and the environment, unambiguously joined."""
    digest = hashlib.sha256()
    for part in (environment(), *parts):
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


class CompileCache:
    """Entries in one directory: `<dir>/<kind>/<key[:2]>/<key>`."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def path(self, kind: str, key: str) -> Path:
        return self.directory / kind / key[:2] / key

    def get(self, kind: str, key: str) -> memoryview | None:
        """The entry's payload (a view of the file's bytes), or None (absent, or
        rejected and deleted)."""
        path = self.path(kind, key)
        try:
            data = path.read_bytes()
        except OSError:
            stats[kind, "miss"] += 1
            return None
        payload = _check(data, kind, key)
        if payload is None:
            stats[kind, "rejected"] += 1
            stats[kind, "miss"] += 1
            try:
                path.unlink()
            except OSError:
                pass
            return None
        stats[kind, "hit"] += 1
        return payload

    def put(self, kind: str, key: str, payload: bytes | Sequence) -> None:
        """Store `payload`, or the concatenation of its parts (bytes-like objects,
        written one after another: a model's weights are not copied into one
        string first),
        atomically; a cache that cannot be written is skipped."""
        parts = [payload] if isinstance(payload, bytes | bytearray | memoryview) else list(payload)
        length, crc = 0, 0
        for part in parts:
            length += memoryview(part).nbytes
            crc = zlib.crc32(part, crc)
        path = self.path(kind, key)
        header = b"%s %s %s %d %08x\n" % (FORMAT, kind.encode(), key.encode(), length, crc)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:8]}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(header)
                    for part in parts:
                        f.write(part)
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return  # a read-only or full disk: compile without caching
        stats[kind, "write"] += 1


def _check(data: bytes, kind: str, key: str) -> memoryview | None:
    """The payload of an entry file if its header says it is this entry, whole."""
    end = data.find(b"\n", 0, 256)
    if end < 0:
        return None
    fields = data[:end].split(b" ")
    if len(fields) != 6 or b" ".join(fields[:2]) != FORMAT:
        return None
    if fields[2] != kind.encode() or fields[3] != key.encode():
        return None
    payload = memoryview(data)[end + 1 :]
    try:
        length, crc = int(fields[4]), int(fields[5], 16)
    except ValueError:
        return None
    if len(payload) != length or zlib.crc32(payload) != crc:
        return None
    return payload


def open_cache() -> CompileCache | None:
    """The cache `cache_dir()` names, or None when it is off."""
    directory = cache_dir()
    return CompileCache(directory) if directory is not None else None
