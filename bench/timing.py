"""The timer both benchmarks use: interleaved rounds, medians, pauses between blocks."""

from __future__ import annotations

import statistics
import time


def timed(fns: dict, repeat: int, rounds: int = 5, pause: float = 0.3) -> dict[str, float]:
    """Median seconds per call of each function, in interleaved rounds: a warm-up call
    and `repeat` timed calls per function per round, with a pause before each block
    (idle BLAS/OpenMP threads spin for a while after a call and would steal the
    cores from the next function)."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            time.sleep(pause)
            fn()
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in samples.items()}


def run_info() -> dict:
    """When, where and with what a benchmark ran: the date (UTC), the commit, the
    CPU and its cores, the load average, Python's and the main packages' versions
    (a result means little without them; bench/results/*.json keep this)."""
    import datetime
    import os
    import platform
    import subprocess
    from importlib import metadata

    def version(package: str) -> str | None:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
            cwd=os.path.dirname(os.path.abspath(__file__)),
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "versions": {p: version(p) for p in ("tilecraft", "xdsl", "llvmlite", "numpy", "onnx", "onnxruntime")},
    }
