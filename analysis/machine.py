"""The machine an analysis is about: peak FLOP/s and memory bandwidth (the
roofline's), and the CPU the cost model (analysis/cost_model.py) needs: cores,
clock, vector width, FMA throughput and the cache hierarchy. From a hardware
description file, or measured once on the host and cached.

A description is JSON. `name`, `peak_gflops` and `bandwidth_gbs` (main memory,
read plus written, in 1e9 bytes per second) are required; the CPU's fields are
optional, each one left out is the host's:

```json
{"name": "my laptop", "peak_gflops": 150, "bandwidth_gbs": 20,
 "cores": 8, "frequency_ghz": 3.0, "vector_bits": 256, "fma": true, "fma_per_cycle": 2,
 "line_bytes": 64,
 "caches": [{"size_kb": 32, "bandwidth_gbs": 190},
            {"size_kb": 512, "bandwidth_gbs": 90},
            {"size_kb": 16384, "bandwidth_gbs": 45, "shared": true}],
 "energy": {"pj_per_flop": 0.8, "pj_per_byte": {"L1": 0.5, "L2": 2, "L3": 8, "DRAM": 60}}}
```

`caches` lists the data caches from L1 outward: the size of each, the bytes per
second one core reads from it, and whether the cores share it (the last level,
usually). `fma_per_cycle` is how many vector multiply-adds (fused where `fma`)
a core issues per cycle of `frequency_ghz` (the host's is measured against the
clock the OS reports, which turbo can outrun: 2.4 on a 2-FMA core, say). `energy` (never the host's: there is no probe for it)
gives picojoules per floating-point operation and per byte moved at each level,
`L1` ... `L<n>` and `DRAM`. A missing required field, a field of the wrong type
or an unknown one is a `MachineError` naming it.

The host's figures: the CPUs this process may use, the clock, vector width and
FMA from /proc/cpuinfo (its `flags` are lscpu's), cache sizes and sharing from
/sys/devices/system/cpu/cpu0/cache; measured (`probe`, a few seconds): peak
FLOP/s (numpy's float32 GEMM), memory bandwidth (a 64 MiB copy), FMA throughput
(a JIT-compiled loop of vector multiply-adds, divided by the clock) and each
cache's read bandwidth (a JIT-compiled loop summing vectors of a buffer half the
cache's size, over and over). They are kept in the compile cache directory,
keyed by the CPU's name and the CPUs this process may use, so a machine is
measured once.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

# Independent sums in the probe's loops: an FMA's latency (4 cycles on current
# x86 cores) times two issued a cycle is 8; 10 leave a margin and, with the
# operand, fit the 16 vector registers of AVX2.
CHAINS = 10

REQUIRED = ("name", "peak_gflops", "bandwidth_gbs")
CPU_FIELDS = ("cores", "frequency_ghz", "vector_bits", "fma", "fma_per_cycle", "line_bytes", "caches")


class MachineError(Exception):
    """A hardware description that cannot be used."""


@dataclass(frozen=True)
class Cache:
    """One level of data cache."""

    size_kb: float
    bandwidth_gbs: float  # what one core reads from it, in 1e9 bytes per second
    shared: bool = False  # shared by the cores (else one per core)


@dataclass(frozen=True)
class Energy:
    """Picojoules per floating-point operation and per byte moved at each level."""

    pj_per_flop: float
    pj_per_byte: Mapping[str, float]  # "L1", ..., "L<n>", "DRAM"


@dataclass(frozen=True)
class Machine:
    name: str
    peak_gflops: float  # floating-point operations per second, in 1e9
    bandwidth_gbs: float  # main-memory bytes per second, in 1e9
    # The CPU (None: the host's; `complete` fills them in).
    cores: int | None = None
    frequency_ghz: float | None = None
    vector_bits: int | None = None
    fma: bool | None = None
    fma_per_cycle: float | None = None  # vector multiply-adds a core issues per cycle
    line_bytes: int | None = None
    caches: tuple[Cache, ...] | None = None  # L1 first
    energy: Energy | None = None

    @property
    def ridge(self) -> float:
        """The intensity (FLOPs per byte) above which an op can be compute-bound."""
        return self.peak_gflops / self.bandwidth_gbs

    def attainable_gflops(self, intensity: float) -> float:
        return min(self.peak_gflops, self.bandwidth_gbs * intensity)

    @property
    def level_names(self) -> tuple[str, ...]:
        """`L1` ... `L<n>` for the caches, then `DRAM`."""
        return (*(f"L{k + 1}" for k in range(len(self.caches or ()))), "DRAM")


# -- descriptions --------------------------------------------------------------------


def _number(where: str, field: str, value, *, integer: bool = False, zero: bool = False) -> float:
    kind = "integer" if integer else "number"
    ok = not isinstance(value, bool) and isinstance(value, int if integer else (int, float))
    if not ok or value < 0 or (value == 0 and not zero):
        raise MachineError(f"{where}: field '{field}' must be a {'non-negative' if zero else 'positive'} {kind}, "
                           f"not {value!r}")  # fmt: skip
    return value


def _object(where: str, field: str, value, known: tuple[str, ...]) -> dict:
    if not isinstance(value, dict):
        raise MachineError(f"{where}: field '{field}' must be an object, not {value!r}")
    for key in value:
        if key not in known:
            raise MachineError(f"{where}: field '{field}' has an unknown field '{key}' (known: {', '.join(known)})")
    return value


def _caches(where: str, value) -> tuple[Cache, ...]:
    if not isinstance(value, list) or not value:
        raise MachineError(f"{where}: field 'caches' must be a list of caches, L1 first, not {value!r}")
    caches = []
    for k, entry in enumerate(value):
        field = f"caches[{k}]"
        entry = _object(where, field, entry, ("size_kb", "bandwidth_gbs", "shared"))
        for name in ("size_kb", "bandwidth_gbs"):
            if name not in entry:
                raise MachineError(f"{where}: field '{field}' has no '{name}'")
        shared = entry.get("shared", False)
        if not isinstance(shared, bool):
            raise MachineError(f"{where}: field '{field}.shared' must be true or false, not {shared!r}")
        caches.append(Cache(float(_number(where, f"{field}.size_kb", entry["size_kb"])),
                            float(_number(where, f"{field}.bandwidth_gbs", entry["bandwidth_gbs"])), shared))  # fmt: skip
    return tuple(caches)


def _energy(where: str, value) -> Energy:
    value = _object(where, "energy", value, ("pj_per_flop", "pj_per_byte"))
    for name in ("pj_per_flop", "pj_per_byte"):
        if name not in value:
            raise MachineError(f"{where}: field 'energy' has no '{name}'")
    per_byte = value["pj_per_byte"]
    if not isinstance(per_byte, dict):
        raise MachineError(f"{where}: field 'energy.pj_per_byte' must be an object of levels, not {per_byte!r}")
    for level, pj in per_byte.items():
        if not re.fullmatch(r"L[1-9]\d*|DRAM", level):
            raise MachineError(f"{where}: field 'energy.pj_per_byte' names '{level}', not a level (L1, L2, ..., DRAM)")
        _number(where, f"energy.pj_per_byte.{level}", pj, zero=True)
    pj_per_flop = _number(where, "energy.pj_per_flop", value["pj_per_flop"], zero=True)
    return Energy(float(pj_per_flop), {k: float(v) for k, v in per_byte.items()})


def machine_from_dict(data, where: str = "the description") -> Machine:
    """A machine from a parsed description; `MachineError` naming what is wrong."""
    if not isinstance(data, dict):
        raise MachineError(f"{where} must hold a JSON object with {', '.join(REQUIRED)}")
    known = tuple(f.name for f in fields(Machine))
    for field in data:
        if field not in known:
            raise MachineError(f"{where} has an unknown field '{field}' (known: {', '.join(known)})")
    for field in REQUIRED:
        if field not in data:
            raise MachineError(f"{where} has no field '{field}' (a machine needs {', '.join(REQUIRED)})")
    cpu: dict[str, object] = {}
    for field in ("peak_gflops", "bandwidth_gbs", "frequency_ghz", "fma_per_cycle"):
        if field in data:
            cpu[field] = float(_number(where, field, data[field]))
    for field in ("cores", "vector_bits", "line_bytes"):
        if field in data:
            cpu[field] = int(_number(where, field, data[field], integer=True))
    if "fma" in data:
        if not isinstance(data["fma"], bool):
            raise MachineError(f"{where}: field 'fma' must be true or false, not {data['fma']!r}")
        cpu["fma"] = data["fma"]
    if "caches" in data:
        cpu["caches"] = _caches(where, data["caches"])
    if "energy" in data:
        cpu["energy"] = _energy(where, data["energy"])
    return Machine(name=str(data["name"]), **cpu)  # type: ignore[arg-type]


def load_machine(path: str | Path) -> Machine:
    """A machine from a description file; `MachineError` naming what is wrong."""
    try:
        data = json.loads(Path(path).read_text())
    except ValueError as e:
        raise MachineError(f"'{path}' is not JSON: {e}") from None
    return machine_from_dict(data, f"'{path}'")


def complete(machine: Machine | None = None) -> Machine:
    """`machine` (default: the host) with every CPU field it leaves out taken from
    the host's; `MachineError` if its energy table lacks one of its levels."""
    if machine is None:
        machine = host_machine()
    missing = [f for f in CPU_FIELDS if getattr(machine, f) is None]
    done = machine
    if missing:
        host = host_machine()
        done = replace(machine, **{f: getattr(host, f) for f in missing})
    if done.energy is not None:
        for level in done.level_names:
            if level not in done.energy.pj_per_byte:
                raise MachineError(
                    f"machine '{done.name}': energy.pj_per_byte has no '{level}' (its levels: "
                    f"{', '.join(done.level_names)})"
                )
    return done


# -- the host ------------------------------------------------------------------------


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _cpuinfo(key: str) -> list[str]:
    """The values of `key` in /proc/cpuinfo, one per CPU that lists it."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return []
    return [line.partition(":")[2].strip() for line in lines if line.split(":")[0].strip() == key]


def _cpu_model() -> str:
    return next(iter(_cpuinfo("model name")), "")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _frequency_ghz() -> float | None:
    """The highest clock the OS reports: cpufreq's maximum, else /proc/cpuinfo's
    current one (a virtual machine's nominal clock)."""
    highest = _read(Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))  # kHz
    if highest and highest.isdigit():
        return int(highest) / 1e6
    mhz = [float(v) for v in _cpuinfo("cpu MHz") if re.fullmatch(r"[\d.]+", v)]
    return max(mhz) / 1e3 if mhz else None


def _vector_features() -> tuple[int, bool]:
    """(vector bits, FMA) from the CPU's flags (x86) or features (AArch64)."""
    flags = set(" ".join(_cpuinfo("flags") + _cpuinfo("Features")).split())
    if "avx512f" in flags:
        bits = 512
    elif "avx" in flags:
        bits = 256
    elif flags & {"sse2", "asimd"}:
        bits = 128
    else:
        bits = 32  # no vector unit the flags name: one float at a time
    return bits, bool(flags & {"fma", "asimd"})


def _cpu_list(text: str | None) -> set[int]:
    """The CPUs a sysfs list names ("0-3,8")."""
    found: set[int] = set()
    for part in (text or "").split(","):
        first, _, last = part.partition("-")
        if first.strip().isdigit():
            found |= set(range(int(first), int(last if last.strip().isdigit() else first) + 1))
    return found


def _host_caches() -> list[tuple[int, bool]]:
    """(bytes, shared by several cores) of each data cache level of CPU 0, L1 first
    (a cache only the core's own hardware threads share is the core's)."""
    cpu0 = Path("/sys/devices/system/cpu/cpu0")
    siblings = _cpu_list(_read(cpu0 / "topology" / "thread_siblings_list")) or {0}
    found: dict[int, tuple[int, bool]] = {}
    for index in sorted((cpu0 / "cache").glob("index*")):
        kind, level, size = (_read(index / name) for name in ("type", "level", "size"))
        if kind not in ("Data", "Unified") or not level or not size:
            continue
        match = re.fullmatch(r"(\d+)([KMG]?)", size)
        if match is None:
            continue
        scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)]
        sharers = _cpu_list(_read(index / "shared_cpu_list"))
        found[int(level)] = (int(match.group(1)) * scale, len(sharers - siblings) > 0)
    return [found[level] for level in sorted(found)]


def _loops(lanes: int, fused: bool):
    """Two loops on vectors of `lanes` floats, JIT-compiled for the host:
    `float read_loop(float* p, i64 mask, i64 n)` sums n vectors from p, at vector
    indices `i & mask`; `float fma_loop(i64 n, float v)` runs n rounds of
    multiply-adds. Each keeps `CHAINS` independent sums, enough to cover an add's
    or an FMA's latency at two a cycle, and few enough to stay in registers
    (autotune/machine.py's 12 chains of 16 lanes spill on a 16-register AVX2 core)."""
    import ctypes

    import llvmlite.binding as llvm

    from tilecraft.backends.llvm.target import create_host_target_machine

    vec, chains = f"<{lanes} x float>", CHAINS
    fma = f"@llvm.fma.v{lanes}f32"
    lines = [f"declare {vec} {fma}({vec}, {vec}, {vec})"]

    def loop(name: str, args: str, head: list[str], step: list[str], after: str) -> None:
        lines.extend([f"define float @{name}({args}) {{", "entry:", *head, "  br label %loop", "loop:",
                      "  %i = phi i64 [0, %entry], [%next, %loop]"])  # fmt: skip
        lines.extend(f"  %a{c} = phi {vec} [zeroinitializer, %entry], [%b{c}, %loop]" for c in range(chains))
        lines.extend(step)
        lines.extend([f"  %next = add i64 %i, {after}", "  %more = icmp ult i64 %next, %n",
                      "  br i1 %more, label %loop, label %done", "done:", f"  %s0 = fadd {vec} %b0, %b1"])  # fmt: skip
        lines.extend(f"  %s{c - 1} = fadd {vec} %s{c - 2}, %b{c}" for c in range(2, chains))
        lines.extend([f"  %r = extractelement {vec} %s{chains - 2}, i32 0", "  ret float %r", "}"])

    read = ["  %base = and i64 %i, %mask"]
    for c in range(chains):
        read += [f"  %k{c} = add i64 %base, {c}", f"  %q{c} = getelementptr {vec}, ptr %p, i64 %k{c}",
                 f"  %v{c} = load {vec}, ptr %q{c}, align 4", f"  %b{c} = fadd {vec} %a{c}, %v{c}"]  # fmt: skip
    loop("read_loop", "ptr %p, i64 %mask, i64 %n", [], read, str(chains))
    splat = [f"  %e = insertelement {vec} undef, float %v, i32 0",
             f"  %x = shufflevector {vec} %e, {vec} undef, <{lanes} x i32> zeroinitializer"]  # fmt: skip
    if fused:
        step = [f"  %b{c} = call {vec} {fma}({vec} %a{c}, {vec} %x, {vec} %x)" for c in range(chains)]
    else:
        step = [line for c in range(chains)
                for line in (f"  %m{c} = fmul {vec} %x, %x", f"  %b{c} = fadd {vec} %a{c}, %m{c}")]  # fmt: skip
    loop("fma_loop", "i64 %n, float %v", splat, step, "1")
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly("\n".join(lines)), create_host_target_machine(jit=True))
    engine.finalize_object()
    read_loop = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(
        engine.get_function_address("read_loop")
    )
    fma_loop = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_int64, ctypes.c_float)(engine.get_function_address("fma_loop"))
    return engine, read_loop, fma_loop


def _best_rate(call, work: float, seconds: float) -> float:
    """Work a second of `call(n)`, which does `n * work`: n grown until a call
    takes a few milliseconds, then the fastest call in `seconds` (a busy
    machine's other work slows some)."""
    n = 8
    while True:
        start = time.perf_counter()
        call(n)
        if time.perf_counter() - start > 2e-3:
            break
        n *= 2
    best, end = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        call(n)
        best = max(best, n * work / (time.perf_counter() - start))
    return best


def _read_bandwidth(read_loop, lanes: int, nbytes: int, seconds: float) -> float:
    """Bytes a second one thread reads from a buffer of about `nbytes`."""
    import numpy as np

    count = 1  # vectors: a power of two, so that `i & (count - 1)` wraps around
    while count * 2 * lanes * 4 <= nbytes:
        count *= 2
    buffer = np.ones((count + CHAINS) * lanes, np.float32)  # (the last round reads past `count`)
    mask = count - 1
    return _best_rate(lambda n: read_loop(buffer.ctypes.data, mask, n * CHAINS), CHAINS * lanes * 4, seconds)


def probe(seconds: float = 0.5) -> Machine:
    """The host measured: the best of repeated float32 GEMMs (numpy's BLAS) and of
    copies of a 64 MiB array (bytes read plus written); one thread's FMA rate and
    its read bandwidth from each cache level (a fifth of `seconds` each)."""
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
    vector_bits, fma = _vector_features()
    lanes = max(1, vector_bits // 32)
    engine, read_loop, fma_loop = _loops(lanes, fma)
    per_second = _best_rate(lambda n: fma_loop(n, 1e-9), CHAINS, seconds / 5)  # vector multiply-adds
    frequency = _frequency_ghz()
    if frequency is None:  # no clock to divide by: call it one multiply-add a cycle
        frequency = per_second / 1e9
    caches = tuple(
        Cache(size / 1024, _read_bandwidth(read_loop, lanes, size // 2, seconds / 5) / 1e9, shared)
        for size, shared in _host_caches()
    )
    del engine  # (the loops' code lives as long as their engine)
    line = _read(Path("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size"))
    name = f"{_cpu_model() or platform.machine()}, {_cpus()} CPUs (measured)"
    return Machine(
        name,
        best_flops / 1e9,
        best_bytes / 1e9,
        cores=_cpus(),
        frequency_ghz=frequency,
        vector_bits=vector_bits,
        fma=fma,
        fma_per_cycle=per_second / (frequency * 1e9),
        # (no line size from the OS: 64 bytes, every x86 and most ARM cores')
        line_bytes=int(line) if line and line.isdigit() else 64,
        caches=caches,
    )


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
            cached = load_machine(path)
            if all(getattr(cached, f) is not None for f in CPU_FIELDS):
                return cached
        except MachineError:
            pass  # a damaged entry, or one written before the CPU's fields: measure again
    machine = probe()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({k: v for k, v in asdict(machine).items() if v is not None}))
    return machine
