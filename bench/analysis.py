"""How long the static analyses take, and what they find, on the zoo's models.

For each model (the onnx package's zoo graphs with random weights; ResNet-50 is the
issue's target: all static analyses in at most 2 s): the import (ONNX to graph IR,
timed apart), then every registered graph-level analysis run by a fresh
`AnalysisManager` (median of `--repeat` runs: the host's one-time roofline probe
falls in the first), and the model's MACs, FLOPs and
weight bytes. The MACs are checked against ONNX's own shape inference and the
formulas of tests/pytest/test_analysis.py (conv N*K*C/groups*R*S*P*Q, gemm M*N*K):
a difference prints WRONG and exits 1.

The cost model (analysis/cost_model.py) against measured kernel times: each of
bench/networks.py's `--cost-models` at input size `--size` (BERT's layer keeps its
own shape) is compiled, profiled (`CompiledModel.profile`: the median of
`--profile-repeat` runs of each kernel call; a kernel called more than once
counts once, with the median of its calls) and predicted for the host (measured
once: analysis/machine.py); reported: the Spearman rank correlation over all
kernels and per model (the issue's target: >= 0.8 on at least 50 kernels), the
correlation a plain count of the bytes each kernel loads and stores would give
(what the model adds to "big kernels take long"), the time the prediction takes,
and the five kernels predicted worst (largest |log(predicted / measured)|), all
and of those measured at 10 us or more (the profiler's mark, about a
microsecond, is in every measured time).

Dynamic against static (runtime/counters.py): each of `--dynamic-models` (the
test zoo's networks at the sizes tests/pytest/test_networks.py uses) is compiled
and run once with a counter in every block; `dynamic_equals_static` is whether
every block of every model ran exactly as often as `loop-counts` says. The
overhead: the median time of a call of the instrumented build over that of the
model (interleaved rounds, bench/timing.py), for the build `m.counters` makes
(serial, LLVM unoptimized: it compiles in seconds) and for one LLVM optimizes
(`CounterBuild(optimize=True)`); `instrumented_overhead` is the geometric mean
of the optimized build's ratios.

Usage: python bench/analysis.py [--models resnet50,squeezenet,...] [--repeat N]
       [--cost-models resnet50,mobilenet_v2,...] [--size 96] [--profile-repeat 20]
       [--dynamic-models resnet50,...]
The last line printed is one JSON object:
`{"bench": "analysis", "resnet50_static_s", "cost_model_spearman",
"dynamic_equals_static", "instrumented_overhead", "models": {...}, "cost_model": {...},
"dynamic": {...}}`.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "pytest"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # networks.py, timing.py


def measure(name: str, repeat: int) -> dict:
    from test_analysis import onnx_macs

    from tilecraft.analysis.framework import AnalysisManager, registered_analyses
    from tilecraft.frontends.onnx import from_onnx, zoo

    model = zoo.load(name, seed=1)
    start = time.perf_counter()
    module, _ = from_onnx(model)
    imported = time.perf_counter() - start
    names = [n for n, cls in registered_analyses().items() if cls.level == "graph"]
    times, results = [], {}
    for _ in range(repeat):
        manager = AnalysisManager()
        start = time.perf_counter()
        results = {n: manager.run(n, module) for n in names}
        times.append(time.perf_counter() - start)
    macs = results["macs"].totals
    expected = onnx_macs(model)
    return {
        "import_s": round(imported, 3),
        "static_s": round(statistics.median(times), 3),
        "analyses": names,
        "macs": macs.get("macs"),
        "flops": macs.get("flops"),
        "weights_bytes": results["bytes"].totals.get("weights_bytes"),
        "unknown_ops": len(results["macs"].unknown),
        "macs_match_onnx": macs.get("macs") == expected,
    }


def ranks(values):
    """1-based ranks, ties sharing their mean rank."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    ranked = np.empty(len(values))
    ranked[order] = np.arange(1, len(values) + 1)
    _, group, counts = np.unique(values, return_inverse=True, return_counts=True)
    return (np.bincount(group, ranked) / counts)[group]


def spearman(a, b) -> float:
    """Spearman's rank correlation: Pearson's of the ranks."""
    import numpy as np

    return float(np.corrcoef(ranks(a), ranks(b))[0, 1])


def measure_cost_model(names: list[str], size: int, repeat: int) -> dict:
    import numpy as np
    from networks import NETWORKS
    from timing import run_info

    import tilecraft as tc
    from tilecraft.analysis.cost_model import CostModel
    from tilecraft.analysis.framework import AnalysisManager
    from tilecraft.analysis.machine import complete

    machine = complete()
    rows = []  # (model, kernel, predicted s, measured s, bytes loaded and stored)
    per_model, unknown = {}, 0
    for name in names:
        builder, _ = NETWORKS[name]
        onnx_model = builder(size=size)
        shape = [d.dim_value for d in onnx_model.graph.input[0].type.tensor_type.shape.dim]
        model = tc.compile(onnx_model)
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        calls: dict[str, list[float]] = {}
        for kernel, seconds in model.profile(x, repeat=repeat):
            calls.setdefault(kernel, []).append(seconds)
        start = time.perf_counter()
        result = AnalysisManager().run(CostModel(machine), model.module)
        predict_s = time.perf_counter() - start
        found = []
        for facts in result.ops:
            predicted = facts.values["predicted_s"]
            if facts.label not in calls or predicted is None:
                unknown += facts.label in calls
                continue
            found.append((name, facts.label, predicted, statistics.median(calls[facts.label]), facts.values["model_bytes"]))
        rows += found
        per_model[name] = {
            "kernels": len(found),
            "spearman": round(spearman([r[2] for r in found], [r[3] for r in found]), 3),
            "predict_s": round(predict_s, 3),
        }
    predicted, measured = [r[2] for r in rows], [r[3] for r in rows]
    by_error = sorted(rows, key=lambda r: -abs(math.log(r[2] / r[3])))

    def listed(chosen):
        return [{"model": m, "kernel": k, "predicted_us": round(p * 1e6, 2), "measured_us": round(t * 1e6, 2),
                 "ratio": round(p / t, 3)} for m, k, p, t, _ in chosen]  # fmt: skip

    return {
        "spearman": round(spearman(predicted, measured), 3),
        "n_kernels": len(rows),
        "bytes_only_spearman": round(spearman([r[4] for r in rows], measured), 3),
        "kernels_without_a_prediction": unknown,
        "size": size,
        "models": per_model,
        "worst": listed(by_error[:5]),
        # (the profiler's mark, about a microsecond, is in every measured time)
        "worst_over_10us": listed([r for r in by_error if r[3] >= 1e-5][:5]),
        "machine": machine.name,
        "machine_description": asdict(machine),
        "run": run_info(),
    }


# The networks of the test zoo, at the input sizes tests/pytest/test_networks.py uses.
DYNAMIC_SIZES = {"resnet50": 32, "mobilenet_v2": 32, "shufflenet_v2": 32, "squeezenet_1_1": 48,
                 "densenet_blocks": 32, "resnet18": 32, "bert": 0}  # fmt: skip


def measure_dynamic(names: list[str]) -> dict:
    from networks import NETWORKS
    from timing import timed

    import tilecraft as tc
    from tilecraft.runtime.counters import CounterBuild
    from tilecraft.tools.analyze import random_inputs

    out = {}
    for name in names:
        build, shape = NETWORKS[name]
        size = DYNAMIC_SIZES.get(name, 32)
        model = tc.compile(build(size=size) if size else build())
        inputs = random_inputs(model)
        start = time.perf_counter()
        counts = model.counters(**inputs)  # the unoptimized build m.counters makes
        unoptimized_s = time.perf_counter() - start
        start = time.perf_counter()
        optimized = CounterBuild(model.module, model.entry_name, model.num_threads, optimize=True)
        optimized_s = time.perf_counter() - start
        addresses, _ = model._bind(model._arrays((), inputs))
        times = timed({"model": lambda: model(**inputs), "counted": lambda: model.counters(**inputs),
                       "counted_o3": lambda: optimized.run_addresses(addresses)}, repeat=3, rounds=3)  # fmt: skip
        again = optimized.run_addresses(addresses)
        totals = counts.totals()
        out[name] = {
            "size": size or None,
            "blocks": len(counts.blocks),
            "equal_static": counts.equal_static() and again.equal_static(),
            "mismatches": counts.mismatches()[:5],
            "macs": totals["macs"],
            "iterations": totals["iterations"],
            "build_s": round(unoptimized_s, 2),
            "build_optimized_s": round(optimized_s, 2),
            "model_ms": round(times["model"] * 1e3, 3),
            "counted_ms": round(times["counted"] * 1e3, 3),
            "counted_optimized_ms": round(times["counted_o3"] * 1e3, 3),
            "overhead": round(times["counted"] / times["model"], 2),
            "overhead_optimized": round(times["counted_o3"] / times["model"], 2),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,squeezenet,googlenet,densenet121,shufflenet")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--cost-models",
        default="resnet50,mobilenet_v2,shufflenet_v2,squeezenet_1_1,resnet18,bert",
        help="bench/networks.py models whose kernels the cost model predicts ('' to skip)",
    )
    parser.add_argument("--size", type=int, default=96, help="input height and width of the cost model's CNNs")
    parser.add_argument("--profile-repeat", type=int, default=20)
    parser.add_argument("--dynamic-models", default=",".join(DYNAMIC_SIZES),
                        help="bench/networks.py models run with counters ('' to skip)")  # fmt: skip
    args = parser.parse_args()
    models = {}
    print(f"{'model':12} {'import s':>9} {'static s':>9} {'GMACs':>8} {'GFLOPs':>8} {'weights MB':>11}  check")
    for name in args.models.split(","):
        m = models[name] = measure(name, args.repeat)
        check = "ok" if m["macs_match_onnx"] else "WRONG"
        print(f"{name:12} {m['import_s']:9.2f} {m['static_s']:9.3f} {m['macs'] / 1e9:8.3f} "
              f"{m['flops'] / 1e9:8.3f} {m['weights_bytes'] / 1e6:11.1f}  {check}")  # fmt: skip
    resnet = models.get("resnet50", {}).get("static_s")
    cost = measure_cost_model(args.cost_models.split(","), args.size, args.profile_repeat) if args.cost_models else None
    if cost is not None:
        print(f"\ncost model, {cost['machine']}, size {cost['size']}:")
        print(f"{'model':16} {'kernels':>8} {'Spearman':>9} {'predict s':>10}")
        for name, m in cost["models"].items():
            print(f"{name:16} {m['kernels']:8} {m['spearman']:9.3f} {m['predict_s']:10.3f}")
        print(
            f"{'all':16} {cost['n_kernels']:8} {cost['spearman']:9.3f}   (bytes alone: {cost['bytes_only_spearman']:.3f})"
        )
        print("worst predicted (and of those measured at 10 us or more):")
        for w in cost["worst"] + cost["worst_over_10us"]:
            print(f"  {w['model']:16} {w['kernel'][:60]:60} {w['predicted_us']:10.2f} us predicted "
                  f"{w['measured_us']:10.2f} us measured")  # fmt: skip
    dynamic = measure_dynamic(args.dynamic_models.split(",")) if args.dynamic_models else {}
    if dynamic:
        print(f"\ndynamic against static ({'counters in every block'}):")
        print(f"{'model':16} {'blocks':>7} {'equal':>6} {'model ms':>9} {'counted ms':>11} {'x':>6} "
              f"{'optimized ms':>13} {'x':>6} {'build s':>8} {'opt. build s':>13}")  # fmt: skip
        for name, d in dynamic.items():
            print(f"{name:16} {d['blocks']:7} {'yes' if d['equal_static'] else 'NO':>6} {d['model_ms']:9.3f} "
                  f"{d['counted_ms']:11.3f} {d['overhead']:6.1f} {d['counted_optimized_ms']:13.3f} "
                  f"{d['overhead_optimized']:6.1f} {d['build_s']:8.1f} {d['build_optimized_s']:13.1f}")  # fmt: skip
            for line in d["mismatches"]:
                print(f"  {line}")
    overheads = [d["overhead_optimized"] for d in dynamic.values()]
    print(json.dumps({
        "bench": "analysis",
        "resnet50_static_s": resnet,
        "cost_model_spearman": cost["spearman"] if cost is not None else None,
        "dynamic_equals_static": all(d["equal_static"] for d in dynamic.values()) if dynamic else None,
        "instrumented_overhead": round(math.exp(statistics.mean(math.log(o) for o in overheads)), 2) if overheads else None,
        "models": models,
        "cost_model": cost,
        "dynamic": dynamic,
    }))  # fmt: skip
    ok = all(m["macs_match_onnx"] for m in models.values()) and all(d["equal_static"] for d in dynamic.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
