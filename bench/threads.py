"""Thread scaling: tilecraft against onnxruntime at 1, 2, 4, 8 and 16 threads.

Each model (the onnx package's model-zoo graphs of the issue that asked for this
bench, with random weights, and the networks of bench/networks.py, all
1x3x224x224) is compiled once per thread count (the count is fixed when a module
is built) and run beside an onnxruntime session with the same count
(`intra_op_num_threads`, one inter-op thread); all of a model's variants are
timed in interleaved rounds (`timed` of bench/timing.py: medians, a pause before
each block). Counts above `os.cpu_count()` are not measured: they are null in
the JSON. Every output is checked against onnxruntime's first (WRONG and exit 1
otherwise).

Columns: milliseconds per call of tilecraft and onnxruntime at each count and
their ratio; "launches" is how many parallel launches the model makes and how
many of them their work caps below 2 and below 16 threads (`tc.max_threads`,
written by loop-outline-parallel). The last line:

    {"bench": "threads", "geomean_vs_ort": {"1": .., "2": .., "4": .., "8": .., "16": ..},
     "worst_vs_half_threads": .., "threads_measured": [..]}

`worst_vs_half_threads` is the largest time at n threads over the time at n/2
(for each measured n >= 2 whose half was measured): above 1 a model got slower
with more threads.

`--ab` measures instead, at `--threads` (default 2), the same compiled models
with thread caps (as compiled) and without (every launch on every thread: the
behaviour before caps), interleaved with onnxruntime in one process.

`--calibrate` measures what `analysis/parallel_work.THREAD_COST` is derived from,
on this machine:

1. the cost of a launch: a probe function launches one parallel loop of E
   iterations (16-float vectors, a multiply-add each) 400 times per call; its time
   per launch capped at one thread (a call of the loop's body on the caller) and
   at all threads, for E from 2 to 8192 vectors. The break-even E is where
   T_all first beats T_1 (interpolated between the sizes, in logs); there
   T_1 = T_1 / threads + c (threads - 1) by the model of
   `analysis/parallel_work.py`, so `c`, the cost of a thread beyond the caller, is
   T_1 (1 - 1 / threads) / (threads - 1) = T_1 / threads at break-even. (At the
   smallest E the difference is what the caller pays when no worker comes in
   time: printed, not used.)
2. the rate at which work units run: the bench networks compiled for one thread,
   each kernel's time (`CompiledModel.profile`) against its estimated work
   (`analysis/parallel_work.block_work`): `r`, the median units per microsecond
   over the kernels with a parallel loop;
3. `THREAD_COST = r * c`: c in the work units of the models' kernels (the
   probe's elementwise units run at a lower rate than a convolution's).

Models are named as bench/networks.py names them, the zoo's as `zoo-<name>`
(`zoo-squeezenet`); `zoo` and `nets` name the two sets.

Usage: python bench/threads.py [--models a,b|zoo|nets] [--threads 1,2,4,8,16]
       [--repeat N] [--ab] [--calibrate [--probe-only]]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from networks import NETWORKS  # noqa: E402
from timing import timed  # noqa: E402

# The zoo's graphs by `zoo-<name>` (bench/networks.py has a resnet50 of its own).
ZOO = tuple(f"zoo-{name}" for name in ("densenet121", "vgg19", "inception_v2", "resnet50", "shufflenet", "squeezenet"))
NETS = tuple(name for name in NETWORKS if name != "bert")
COUNTS = (1, 2, 4, 8, 16)


# ---------------------------------------------------------------------------------
# Models


def load(name: str):
    """(ONNX model, input array) of a zoo graph or a bench network."""
    rng = np.random.default_rng(100)
    if name in NETWORKS:
        build, shape = NETWORKS[name]
        return build(), rng.standard_normal(shape).astype(np.float32)
    from tilecraft.frontends.onnx import zoo

    if not name.startswith("zoo-") or name[4:] not in zoo.available():
        raise SystemExit(f"unknown model {name!r}: bench/networks.py's {', '.join(NETWORKS)} or "
                         f"zoo-<name> for the zoo's {', '.join(zoo.available())}")  # fmt: skip
    return zoo.load(name[4:], seed=1), rng.standard_normal((1, 3, 224, 224)).astype(np.float32)


def ort_session(model, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


@contextlib.contextmanager
def thread_cost(cost: int | None):
    """Lower loop IR with `loop-outline-parallel{thread-cost=cost}` (0: no caps)
    inside the block; None leaves the default."""
    from tilecraft.pipelines import loop_to_llvm
    from tilecraft.transforms.loop_outline_parallel import LoopOutlineParallelPass

    if cost is None:
        yield
        return
    loop_to_llvm.LoopOutlineParallelPass = lambda: LoopOutlineParallelPass(thread_cost=cost)
    try:
        yield
    finally:
        loop_to_llvm.LoopOutlineParallelPass = LoopOutlineParallelPass


def compile_model(model, threads: int, cost: int | None = None):
    import tilecraft as tc

    with thread_cost(cost):
        return tc.compile(model, num_threads=threads)


def launch_caps(compiled) -> list[int]:
    """The thread cap of each parallel launch of a compiled model (0: none)."""
    from xdsl.context import Context

    from tilecraft.analysis.parallel_work import MAX_THREADS_ATTR
    from tilecraft.dialects.loop import LaunchOp
    from tilecraft.pipelines.loop_to_llvm import loop_to_llvm_passes

    module = compiled.module.clone()
    for stage in loop_to_llvm_passes():
        if stage.name == "loop-vectorize":
            break
        stage.apply(Context(), module)
    caps = []
    for op in module.walk():
        if isinstance(op, LaunchOp):
            cap = op.attributes.get(MAX_THREADS_ATTR)
            caps.append(cap.value.data if cap is not None else 0)
    return caps


def matches(got, expected) -> bool:
    got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got)
    scale = float(np.abs(expected).max()) or 1.0
    return got.shape == expected.shape and bool(np.all(np.abs(got - expected) <= 1e-4 + 1e-3 * scale))


# ---------------------------------------------------------------------------------
# Scaling


def measure(name: str, counts: list[int], repeat: int) -> dict:
    model, x = load(name)
    feed = {model.graph.input[0].name: x}
    row: dict = {"model": name, "ok": True, "tc": {}, "ort": {}}
    fns = {}
    for n in counts:
        session = ort_session(model, n)
        expected = session.run(None, feed)[0]
        t0 = time.perf_counter()
        m = compile_model(model, n)
        row.setdefault("compile_s", time.perf_counter() - t0)
        if not matches(m(x), expected):
            row["ok"] = False
        if n == counts[0]:
            caps = launch_caps(m)
            row["launches"] = len(caps)
            row["below_2"] = sum(1 for c in caps if 0 < c < 2)
            row["below_16"] = sum(1 for c in caps if 0 < c < 16)
        fns[f"tc{n}"] = lambda m=m: m(x)
        fns[f"ort{n}"] = lambda s=session: s.run(None, feed)
    times = timed(fns, repeat)
    for n in counts:
        row["tc"][n], row["ort"][n] = times[f"tc{n}"] * 1e3, times[f"ort{n}"] * 1e3
    return row


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def run_scaling(names: list[str], counts: list[int], repeat: int) -> int:
    rows = []
    for name in names:
        row = measure(name, counts, repeat)
        rows.append(row)
        cells = "  ".join(
            f"{n}t {row['tc'][n]:7.2f}/{row['ort'][n]:7.2f} {row['tc'][n] / row['ort'][n]:5.2f}" for n in counts
        )
        wrong = "" if row["ok"] else "  WRONG"
        print(f"{name:>16}  {cells}  launches {row['launches']} (<2: {row['below_2']}, "
              f"<16: {row['below_16']}){wrong}", flush=True)  # fmt: skip
    ratios = {}
    for n in COUNTS:
        ratios[str(n)] = (
            round(geomean([r["tc"][n] / r["ort"][n] for r in rows]), 3) if n in counts else None
        )
    halves = [r["tc"][n] / r["tc"][n // 2] for r in rows for n in counts if n >= 2 and n // 2 in counts]
    print(json.dumps({
        "bench": "threads",
        "geomean_vs_ort": ratios,
        "worst_vs_half_threads": round(max(halves), 3) if halves else None,
        "threads_measured": counts,
    }))  # fmt: skip
    return 0 if all(r["ok"] for r in rows) else 1


def run_ab(names: list[str], threads: int, repeat: int) -> int:
    """Caps against no caps (thread-cost=0) at `threads`, beside onnxruntime."""
    capped_over_uncapped = []
    ok = True
    print(f"{'model':>16} {'capped ms':>10} {'uncapped':>9} {'ORT ms':>8} {'cap/uncap':>9} {'cap/ORT':>8} launches (<2)")
    for name in names:
        model, x = load(name)
        feed = {model.graph.input[0].name: x}
        session = ort_session(model, threads)
        expected = session.run(None, feed)[0]
        capped = compile_model(model, threads)
        uncapped = compile_model(model, threads, cost=0)
        ok &= matches(capped(x), expected) and matches(uncapped(x), expected)
        caps = launch_caps(capped)
        times = timed(
            {"capped": lambda: capped(x), "uncapped": lambda: uncapped(x), "ort": lambda: session.run(None, feed)},
            repeat,
        )
        ratio = times["capped"] / times["uncapped"]
        capped_over_uncapped.append(ratio)
        print(f"{name:>16} {times['capped'] * 1e3:10.2f} {times['uncapped'] * 1e3:9.2f} {times['ort'] * 1e3:8.2f} "
              f"{ratio:9.3f} {times['capped'] / times['ort']:8.3f} {len(caps)} ({sum(1 for c in caps if c == 1)})",
              flush=True)  # fmt: skip
    print(json.dumps({"bench": "threads-ab", "threads": threads,
                      "capped_over_uncapped_geomean": round(geomean(capped_over_uncapped), 3),
                      "ok": ok}))  # fmt: skip
    return 0 if ok else 1


# ---------------------------------------------------------------------------------
# Calibration

PROBE = """
func.func @probe(%A: memref<{n}x16xf32>) {{
  %a = arith.constant 1.0001 : f32
  %b = arith.constant 0.5 : f32
  loop.for %r = 0 to {launches} {{
    loop.for %i = 0 to {n} parallel {{
      loop.for %j = 0 to 16 vectorized {{
        %x = memref.load %A[%i, %j] : memref<{n}x16xf32>
        %y = arith.mulf %x, %a : f32
        %z = arith.addf %y, %b : f32
        memref.store %z, %A[%i, %j] : memref<{n}x16xf32>
      }}
    }} {{tc.max_threads = {cap}}}
  }}
  func.return
}}"""
LAUNCHES = 400
# Vectors a probe launch runs (a loop of one iteration is no launch).
PROBE_SIZES = (2, 4, 8, 32, 128, 256, 512, 1024, 2048, 4096, 8192)


def probe_launches(threads: int, repeat: int) -> list[dict]:
    """Microseconds per launch of the probe at each size, on one thread and on all."""
    from tilecraft.analysis.parallel_work import loop_work
    from tilecraft.driver.context import parse_text
    from tilecraft.driver.kernels import compile_loop_module
    from tilecraft.dialects.loop import ForOp

    rows = []
    for n in PROBE_SIZES:
        fns, work = {}, 0
        for cap in (1, threads):
            module = parse_text(PROBE.format(n=n, launches=LAUNCHES, cap=cap))
            work = loop_work(next(op for op in module.walk() if isinstance(op, ForOp) and op.extent == n))
            jit = compile_loop_module(module, num_threads=threads)
            a = np.zeros((n, 16), np.float32)
            fns[cap] = lambda jit=jit, a=a: jit["probe"](a)
        times = timed(fns, repeat, rounds=7, pause=0.1)
        rows.append({"vectors": n, "work": work, "one_us": times[1] / LAUNCHES * 1e6,
                     "all_us": times[threads] / LAUNCHES * 1e6})  # fmt: skip
    return rows


def break_even(rows: list[dict]) -> tuple[float, float] | None:
    """(work, one-thread us) where all threads first beat one, interpolated in logs
    between the two probe sizes around it; None if they never do."""
    for before, after in zip(rows, rows[1:]):
        if before["all_us"] >= before["one_us"] and after["all_us"] < after["one_us"]:
            lo = math.log(before["all_us"] / before["one_us"])
            hi = math.log(after["all_us"] / after["one_us"])
            t = lo / (lo - hi)
            work = math.exp(math.log(before["work"]) * (1 - t) + math.log(after["work"]) * t)
            one = math.exp(math.log(before["one_us"]) * (1 - t) + math.log(after["one_us"]) * t)
            return work, one
    return None


def kernel_rates(names: list[str]) -> list[float]:
    """Work units per microsecond of each kernel with a parallel loop, on one thread."""
    from xdsl.context import Context
    from xdsl.dialects import func

    from tilecraft.analysis.parallel_work import block_work
    from tilecraft.dialects.loop import ForOp, LoopKind
    from tilecraft.pipelines.loop_to_llvm import loop_to_llvm_passes

    rates = []
    for name in names:
        model, x = load(name)
        m = compile_model(model, 1)
        module = m.module.clone()
        for stage in loop_to_llvm_passes()[:4]:  # what the outliner sees
            stage.apply(Context(), module)
        work = {}
        for f in module.ops:
            if isinstance(f, func.FuncOp) and any(
                isinstance(op, ForOp) and op.kind.data == LoopKind.PARALLEL for op in f.walk()
            ):
                work[f.sym_name.data] = block_work(f.body.block)
        times: dict[str, list[float]] = {}
        for kernel, seconds in m.profile(x, repeat=10):
            times.setdefault(kernel, []).append(seconds)
        for kernel, seconds in times.items():
            if kernel in work and work[kernel] > 0:
                rates.append(work[kernel] / (statistics.median(seconds) * 1e6))
        print(f"  {name}: {len(work)} parallel kernels, median {statistics.median(rates):.0f} units/us so far",
              flush=True)  # fmt: skip
    return rates


def run_calibration(names: list[str], repeat: int) -> int:
    from tilecraft.analysis.parallel_work import THREAD_COST
    from tilecraft.utils.threads import available_cpus

    threads = available_cpus()
    if threads < 2:
        print("calibration needs at least 2 CPUs")
        return 1
    print(f"1. launch cost, {threads} threads ({LAUNCHES} launches a call, us per launch):")
    rows = probe_launches(threads, repeat)
    print(f"{'vectors':>8} {'work':>7} {'1 thread':>9} {f'{threads} threads':>10}")
    for r in rows:
        print(f"{r['vectors']:>8} {r['work']:>7} {r['one_us']:9.2f} {r['all_us']:10.2f}")
    idle_us = statistics.median(r["all_us"] - r["one_us"] for r in rows[:3])
    even = break_even(rows)
    if even is None:
        print(f"   {threads} threads never beat one (a busy machine?): no calibration")
        return 1
    work, one_us = even
    cost_us = one_us / threads
    print(f"   break-even at {work:.0f} units ({one_us:.2f} us on one thread): c = {cost_us:.2f} us "
          f"a thread beyond the caller (a launch no worker joins costs the caller {idle_us:.2f} us)")
    print("2. rate of work units (bench networks, one thread, kernel by kernel):")
    rates = kernel_rates(names)
    rate = statistics.median(rates)
    quartiles = statistics.quantiles(rates, n=4)
    print(f"   r = {rate:.0f} units/us (median of {len(rates)} kernels; quartiles "
          f"{quartiles[0]:.0f}-{quartiles[2]:.0f})")
    print(f"3. THREAD_COST = r * c = {rate * cost_us:.0f} units (now {THREAD_COST})")
    print(json.dumps({"bench": "threads-calibrate", "threads": threads, "cost_us": round(cost_us, 3),
                      "rate_units_per_us": round(rate), "thread_cost": round(rate * cost_us),
                      "break_even_units": round(work)}))  # fmt: skip
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="zoo,nets",
                        help="comma-separated names; 'zoo' and 'nets' name the two sets")  # fmt: skip
    parser.add_argument("--threads", default=",".join(map(str, COUNTS)))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--ab", action="store_true", help="caps against no caps at one thread count")
    parser.add_argument("--calibrate", action="store_true", help="measure THREAD_COST's ingredients")
    parser.add_argument("--probe-only", action="store_true", help="with --calibrate: the launch probe alone")
    args = parser.parse_args()
    names = []
    for item in args.models.split(","):
        names += list(ZOO) if item == "zoo" else list(NETS) if item == "nets" else [item]
    if args.calibrate and args.probe_only:
        threads = int(args.threads.split(",")[-1]) if "," not in args.threads else 2
        rows = probe_launches(threads, args.repeat)
        for r in rows:
            print(json.dumps(r))
        print(json.dumps({"break_even": break_even(rows)}))
        return 0
    if args.calibrate:
        return run_calibration([n for n in names if n in NETWORKS] or list(NETS), args.repeat)
    counts = [int(n) for n in args.threads.split(",")]
    if args.ab:
        return run_ab(names, counts[0] if len(counts) == 1 else 2, args.repeat)
    cpus = os.cpu_count() or 1
    skipped = [n for n in counts if n > cpus]
    if skipped:
        print(f"not measured (this machine has {cpus} CPUs): {skipped} threads")
    return run_scaling(names, [n for n in counts if n <= cpus], args.repeat)


if __name__ == "__main__":
    sys.exit(main())
