"""How long `tilecraft.compile` takes, cold and warm, and what the way it compiles
costs at run time.

For each model (the onnx package's light zoo graphs with random weights, the
networks of bench/networks.py, bench/models.py's MLP and MobileNet-v1):

- cold: `tc.compile` with an empty compile cache (a fresh `TILECRAFT_CACHE_DIR`):
  the whole pipeline, kernels compiled one object each, in parallel on the CPUs
  other processes leave idle; wall seconds, and CPU seconds of the process and its
  workers (on a shared machine the wall time is an upper bound);
- warm: `tc.compile` of the same model again, from that cache (median of 3);
- old: the loop module compiled as one LLVM module in this process, uncached
  (`tilecraft.compile(..., per_kernel=False)`), the way tilecraft compiled
  before per-kernel objects;
- run time: the cold-compiled model against the old one, interleaved in this
  process (`timed` of bench/timing.py, six rounds, which runs first alternating;
  medians); their outputs must agree.

Compile times depend on what else runs on the machine: the figures of a shared
machine are upper bounds. Process-wide one-time work (imports, the thread pool's
code, the digest of tilecraft's sources for cache keys) is done before the first
model is timed.

Usage: python bench/compile_time.py [--models zoo,nets,extra | NAME,...] [--repeat N]
       [--no-old] (skip the old path: no run-time comparison)
The last line printed is one JSON object:
`{"bench": "compile_time", "cold_max_s", "cold_geomean_s", "warm_max_s",
"runtime_change_geomean", "models": {...}}` (runtime change: new time / old time).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from timing import run_info, timed  # noqa: E402  (bench/timing.py)


def zoo_models() -> dict:
    from tilecraft.frontends.onnx import zoo

    return {f"zoo:{name}": (lambda name=name: zoo.load(name, seed=1)) for name in zoo.available()}


def net_models() -> dict:
    from networks import NETWORKS

    return {f"net:{name}": (lambda b=builder: b()) for name, (builder, _) in NETWORKS.items()}


def extra_models() -> dict:
    from models import mlp, mobilenet_v1

    return {"mlp": mlp, "mobilenet_v1": mobilenet_v1}


def inputs_of(model) -> dict[str, np.ndarray]:
    from onnx import helper

    rng = np.random.default_rng(100)
    initializers = {i.name for i in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        t = value.type.tensor_type
        shape = [d.dim_value or 1 for d in t.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        if np.issubdtype(dtype, np.floating):
            feeds[value.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feeds[value.name] = np.zeros(shape, dtype)
    return feeds


def compile_seconds(compile_fn, cpu: dict | None = None) -> tuple[object, float]:
    """The compiled model and the wall seconds; `cpu["s"]`: the CPU seconds of this
    process and its worker processes (what a machine shared with other work
    cannot inflate as much as wall time)."""
    start, before = time.perf_counter(), os.times()
    model = compile_fn()
    after = os.times()
    if cpu is not None:
        cpu["s"] = sum(after[i] - before[i] for i in range(4))
    return model, time.perf_counter() - start


def measure(name: str, build, repeat: int, old: bool) -> dict:
    import tilecraft as tc
    from tilecraft.runtime import compile as compile_model

    model = build()
    feeds = inputs_of(model)
    row: dict = {"model": name}
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TILECRAFT_CACHE_DIR"] = cache
        cpu: dict = {}
        new, row["cold_s"] = compile_seconds(lambda: tc.compile(model), cpu)
        row["cold_cpu_s"] = cpu["s"]
        timer = new.timing.root
        for stage in ("compile-model", "compile kernels (parallel)", "loop-to-llvm", "LLVM"):
            node = timer.find(stage)
            if node is not None:
                row[f"cold_{stage}_s"] = round(node.seconds, 3)
        row["warm_s"] = statistics.median(compile_seconds(lambda: tc.compile(model))[1] for _ in range(3))
    os.environ["TILECRAFT_CACHE_DIR"] = "0"
    if old:
        reference, row["old_s"] = compile_seconds(lambda: compile_model(model, per_kernel=False), cpu)
        row["old_cpu_s"] = cpu["s"]
        got, expected = new(**feeds), reference(**feeds)
        got = got if isinstance(got, tuple) else (got,)
        expected = expected if isinstance(expected, tuple) else (expected,)
        row["same_outputs"] = all(np.allclose(g, e, rtol=1e-4, atol=1e-5) for g, e in zip(got, expected))
        # One round at a time, the order alternating: the block that runs first
        # after the pause finds the pool's workers asleep more often.
        calls = {"new": lambda: new(**feeds), "old": lambda: reference(**feeds)}
        rounds = [timed(dict(reversed(calls.items())) if r % 2 else calls, repeat, rounds=1) for r in range(6)]
        row["new_ms"] = statistics.median(t["new"] for t in rounds) * 1e3
        row["old_ms"] = statistics.median(t["old"] for t in rounds) * 1e3
        row["runtime_change"] = statistics.median(t["new"] / t["old"] for t in rounds)
    return row


def geomean(values) -> float | None:
    values = [v for v in values if v]
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="zoo,nets,extra",
                        help="comma-separated groups (zoo, nets, extra) or model names (zoo:resnet50, net:bert, mlp)")
    parser.add_argument("--repeat", type=int, default=10, help="timed calls per round of the run-time A/B")
    parser.add_argument("--no-old", action="store_true", help="skip the old path and the run-time comparison")
    args = parser.parse_args()

    groups = {"zoo": zoo_models, "nets": net_models, "extra": extra_models}
    every = {k: v for g in groups.values() for k, v in g().items()}
    chosen: dict = {}
    for item in args.models.split(","):
        if item in groups:
            chosen.update(groups[item]())
        elif item in every:
            chosen[item] = every[item]
        elif item:
            sys.exit(f"unknown model {item!r}; choose from {', '.join(groups)} or {', '.join(every)}")

    # One-time work of the process, so it is in no model's figure.
    from tilecraft.backends.llvm.runtime import shared_pool_launch
    from tilecraft.utils.compile_cache import environment
    from tilecraft.utils.threads import default_threads

    environment()
    shared_pool_launch(default_threads())
    info = run_info()
    print(f"{info['date']}, {info['cpu']}, {info['cores']} cpus, load average {info['load_average']}, "
          f"commit {info['commit']}", flush=True)

    rows = []
    for name, build in chosen.items():
        row = measure(name, build, args.repeat, not args.no_old)
        rows.append(row)
        print(f"{name}: cold {row['cold_s']:.2f} s (cpu {row['cold_cpu_s']:.2f} s), warm {row['warm_s']:.3f} s"
              + (f", old {row['old_s']:.2f} s (cpu {row['old_cpu_s']:.2f} s), run time {row['new_ms']:.2f} / {row['old_ms']:.2f} ms "
                 f"({row['runtime_change']:.3f}x){'' if row['same_outputs'] else ', OUTPUTS DIFFER'}"
                 if "old_s" in row else ""), flush=True)  # fmt: skip

    print(f"{'model':>22} {'cold s':>7} {'cpu s':>7} {'warm s':>7} {'old s':>7} {'cpu s':>7} "
          f"{'new ms':>8} {'old ms':>8} {'change':>7}")  # fmt: skip
    for r in rows:
        old_s = f"{r['old_s']:7.2f} {r['old_cpu_s']:7.2f}" if "old_s" in r else f"{'-':>7} {'-':>7}"
        ab = (f"{r['new_ms']:8.2f} {r['old_ms']:8.2f} {r['runtime_change']:7.3f}"
              if "new_ms" in r else f"{'-':>8} {'-':>8} {'-':>7}")  # fmt: skip
        print(f"{r['model']:>22} {r['cold_s']:7.2f} {r['cold_cpu_s']:7.2f} {r['warm_s']:7.3f} {old_s} {ab}")
    differ = [r["model"] for r in rows if r.get("same_outputs") is False]
    if differ:
        print(f"outputs differ from the old path: {', '.join(differ)}")
    change = geomean(r.get("runtime_change") for r in rows)
    print(json.dumps({
        "bench": "compile_time",
        "run": info,
        "cold_max_s": round(max(r["cold_s"] for r in rows), 2),
        "cold_geomean_s": round(geomean(r["cold_s"] for r in rows), 2),
        "cold_cpu_geomean_s": round(geomean(r["cold_cpu_s"] for r in rows), 2),
        "old_cpu_geomean_s": round(geomean(r.get("old_cpu_s") for r in rows) or 0, 2) or None,
        "warm_max_s": round(max(r["warm_s"] for r in rows), 3),
        "runtime_change_geomean": round(change, 4) if change else None,
        "models": {r["model"]: {k: (round(v, 4) if isinstance(v, float) else v)
                                for k, v in r.items() if k != "model"} for r in rows},
    }))  # fmt: skip
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
