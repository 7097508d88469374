"""How many threads a parallel loop uses when the caller does not say.

OpenMP users expect `OMP_NUM_THREADS` to be obeyed; without it, the CPUs this
process may run on (`os.sched_getaffinity`: a container or `taskset` may allow
fewer than the machine has), not `os.cpu_count()`.
"""

from __future__ import annotations

import os


# The most threads a module may be built for: the pool counts a launch's threads
# in 15 bits of one word (backends/llvm/runtime.py) and creates them in
# straight-line code; no machine the runtime targets has more cores.
MAX_THREADS = 4096


class ThreadCountError(ValueError):
    """A thread count that is not a positive integer (from an argument or OMP_NUM_THREADS)."""


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """`OMP_NUM_THREADS` if set (its first entry: OpenMP allows a list per nesting
    level), else the CPUs this process may run on."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if not value:
        return available_cpus()
    first = value.split(",")[0].strip()
    try:
        threads = int(first)
    except ValueError:
        raise ThreadCountError(f"OMP_NUM_THREADS={value!r} is not a positive integer") from None
    if threads < 1:
        raise ThreadCountError(f"OMP_NUM_THREADS={value!r} is not a positive integer")
    if threads > MAX_THREADS:
        raise ThreadCountError(f"OMP_NUM_THREADS={value!r} is more than {MAX_THREADS} threads")
    return threads


def resolve_threads(num_threads: int | None, what: str = "num_threads") -> int:
    """`num_threads` checked (a positive int), or the default when None."""
    if num_threads is None:
        return default_threads()
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise ThreadCountError(f"{what} must be a positive integer, got {num_threads!r}")
    if num_threads > MAX_THREADS:
        raise ThreadCountError(f"{what} must be at most {MAX_THREADS}, got {num_threads}")
    return num_threads
