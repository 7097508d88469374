"""The machine a roofline is drawn for: peak FLOP/s and memory bandwidth, from a
hardware description file or measured once on the host and cached.

A description is JSON: `{"name": "...", "peak_gflops": 150.0, "bandwidth_gbs": 20.0}`
(every field required; a missing or non-positive one is a `MachineError` naming
it). The host's figures are measured (`probe`: numpy's float32 GEMM for the peak,
a large copy for the bandwidth; a few seconds) and kept in the compile cache
directory, keyed by the CPU's name and the CPUs this process may use, so a machine
is measured once.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

FIELDS = ("name", "peak_gflops", "bandwidth_gbs")


class MachineError(Exception):
    """A hardware description that cannot be used."""


@dataclass(frozen=True)
class Machine:
    name: str
    peak_gflops: float  # floating-point operations per second, in 1e9
    bandwidth_gbs: float  # main-memory bytes per second, in 1e9

    @property
    def ridge(self) -> float:
        """The intensity (FLOPs per byte) above which an op can be compute-bound."""
        return self.peak_gflops / self.bandwidth_gbs

    def attainable_gflops(self, intensity: float) -> float:
        return min(self.peak_gflops, self.bandwidth_gbs * intensity)


def load_machine(path: str | Path) -> Machine:
    """A machine from a description file; `MachineError` naming what is wrong."""
    try:
        data = json.loads(Path(path).read_text())
    except ValueError as e:
        raise MachineError(f"'{path}' is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise MachineError(f"'{path}' must hold a JSON object with {', '.join(FIELDS)}")
    for field in FIELDS:
        if field not in data:
            raise MachineError(f"'{path}' has no field '{field}' (a machine needs {', '.join(FIELDS)})")
    for field in FIELDS[1:]:
        value = data[field]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise MachineError(f"'{path}': field '{field}' must be a positive number, not {value!r}")
    return Machine(str(data["name"]), float(data["peak_gflops"]), float(data["bandwidth_gbs"]))


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def probe(seconds: float = 0.5) -> Machine:
    """The host measured: the best of repeated float32 GEMMs (numpy's BLAS) and of
    copies of a 64 MiB array (bytes read plus written)."""
    import numpy as np

    n = 1024
    a, b = np.ones((n, n), np.float32), np.ones((n, n), np.float32)
    c = np.empty((n, n), np.float32)
    best_flops = 0.0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        np.matmul(a, b, out=c)
        best_flops = max(best_flops, 2 * n**3 / (time.perf_counter() - start))
    src = np.ones(16 * 1024 * 1024, np.float32)
    dst = np.empty_like(src)
    best_bytes = 0.0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        np.copyto(dst, src)
        best_bytes = max(best_bytes, 2 * src.nbytes / (time.perf_counter() - start))
    name = f"{_cpu_model() or platform.machine()}, {_cpus()} CPUs (measured)"
    return Machine(name, best_flops / 1e9, best_bytes / 1e9)


def host_machine() -> Machine:
    """The host, measured once and cached (with the compile cache; measured each
    time when that is off)."""
    from tilecraft.utils.compile_cache import cache_dir

    root = cache_dir()
    uname = platform.uname()
    cpu = f"{uname.system}_{uname.machine}_{uname.processor}_{_cpu_model()}_{_cpus()}"
    key = "".join(c if c.isalnum() else "_" for c in cpu)[:120]
    path = root / "machines" / f"{key}.json" if root is not None else None
    if path is not None and path.exists():
        try:
            return load_machine(path)
        except MachineError:
            pass  # a damaged entry: measure again
    machine = probe()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(machine)))
    return machine
