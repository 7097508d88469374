"""Autotuning: how fast the model-guided search finds good schedules, and what tuning
buys whole models against onnxruntime, in one run.

Part 1, kernels: a 512 x 512 x 512 GEMM of the `matmul` template (a GEMM written
as plain loops, as AutoTVM's tutorial tunes it: split factors of i, j and k, loop
order, vectorized j, parallel i; 2352 configs, most of them slow, no default config),
a 1024 x 1024 x 1024 GEMM (the `dense` task of a Gemm node) and
three ResNet-18 conv layers (`conv2d` tasks: 64x56x56 3x3, 128x28x28 -> 256 3x3/2,
512x7x7 3x3), each extracted from a one-node ONNX model, so the workload is the one
tc.compile schedules (alter-layout's NCHW16c data and OIHW16i16o kernels, 64-column
dense weight panels). The matmul is 512, not 1024: its slow configs run for 1-6 s
a call at 1024, and 1000 random trials would take most of an hour even with the
tuner's cut-off (a config past 10x the best so far is timed by one call).
For each: model-guided search with `--trials` (64) measured configs,
`--guided-runs` (3) times with other seeds, random search with `--random-trials`
(1000), and the untuned default schedule. One run of a search at 64 trials is a
draw with a wide spread (the same bench gave random search 0.958 and 0.992), so
the figures are means: guided, the mean of its runs; random at 64, the mean over
every order a random search could have measured the configs in (its first trial
the default, as every search's; the rest drawn without repeats), computed exactly
from the random run's measurements (the run's own first 64 are printed beside
it). The fraction of a search is its best GFLOP/s at 64 trials over the best of
the whole random run; the JSON figures are the geometric means over the kernels.
(topi's knob
spaces of the dense and the convs hold 70 to 510 configs, pruned by the heuristics
they replaced: the dense's register tile, panel
copy, parallel loop and cache blocking of K (`kc`); the convs' direct register tile,
row/order/unroll_rx/parallel and, for the stride-1 3x3 convs, the algorithm and the
Winograd schedule's tile, split and parallel knobs. A random run of 1000 measures
each of these whole spaces, and the table says so; its best is then the optimum.) The `%ceil`
columns put the default and that best against the machine's FMA ceiling (a loop of
independent 16-lane fused multiply-adds, one thread, times the cores): what any
schedule of these kernels could still gain. The curves
(best GFLOP/s against trials, guided and random, the default as a line) go to
`--plot` (bench/results/tuning_curves.png).

Part 2, whole models (bench/networks.py's NETWORKS; printed as unavailable when it
is absent): each model compiled untuned, then its tasks extracted and tuned
(model-guided, `--model-trials` per task, a log per model), then compiled with the
log; both against onnxruntime (2 threads) in interleaved rounds (bench/timing.py),
outputs checked against onnxruntime's. Geomeans of tilecraft/onnxruntime untuned and
tuned, and the tuning wall time (minutes, all models).

Logs are kept under `--logs` (bench/results/tuning/): a run that is stopped resumes
where it stopped, and the bench can be run in pieces (`--kernels none --models
resnet18`, a small `--random-trials` first and the full one later). Measurements
run one at a time in a worker process (`--workers`: more would share the cores
with the kernel being timed).

Usage: python bench/tuning.py [--trials 64] [--guided-runs 3] [--random-trials 1000] [--kernels all|none|dense1024,conv64x56,...]
                              [--models all|none|resnet18,...] [--model-trials 32] [--size 224] [--plot PATH]
The last line printed is one JSON object with the headline figures (null for what was
not measured in this run).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import tempfile
import traceback

import numpy as np
import onnx
from onnx import helper, numpy_helper

from models import IR_VERSION, OPSET, _value, ort_session, within_tolerance  # bench/models.py, beside this script
from timing import timed  # bench/timing.py

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

# name: ("gemm", M, K, N) | ("conv", C, H, O, K, S, P): one-node models;
# ("matmul", N): the `matmul` template's N x N x N GEMM (plain split factors)
KERNELS = {
    "matmul512": ("matmul", 512),
    "dense1024": ("gemm", 1024, 1024, 1024),
    "conv64x56": ("conv", 64, 56, 64, 3, 1, 1),
    "conv128x28s2": ("conv", 128, 28, 256, 3, 2, 1),
    "conv512x7": ("conv", 512, 7, 512, 3, 1, 1),
}


def kernel_model(spec: tuple) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    if spec[0] == "gemm":
        _, M, K, N = spec
        w = (rng.standard_normal((N, K)) / math.sqrt(K)).astype(np.float32)
        node = helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)
        x_shape, y_shape = [M, K], [M, N]
    else:
        _, C, H, O, K, S, P = spec
        w = (rng.standard_normal((O, C, K, K)) / math.sqrt(C * K * K)).astype(np.float32)
        node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[K, K], strides=[S, S], pads=[P] * 4)
        oh = (H + 2 * P - K) // S + 1
        x_shape, y_shape = [1, C, H, H], [1, O, oh, oh]
    graph = helper.make_graph([node], "kernel", [_value("x", x_shape)], [_value("y", y_shape)],
                              [numpy_helper.from_array(w, "w")])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION)


def kernel_task(spec: tuple):
    """The one tunable task of the kernel's one-node model (for "matmul", the
    template's workload itself: no model schedules it)."""
    from tilecraft.autotune.tasks import Task, extract_tasks

    if spec[0] == "matmul":
        return Task("matmul", (spec[1],) * 3)
    template = "dense" if spec[0] == "gemm" else "conv2d"
    tasks = [t for t in extract_tasks(kernel_model(spec)) if t.template == template]
    if len(tasks) != 1:
        raise RuntimeError(f"expected one {template} task in the model of {spec}, found {len(tasks)}")
    return tasks[0]


def geomean(values) -> float | None:
    values = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def expected_best(values: list[float], trials: int, default_first: bool = True) -> float:
    """The best GFLOP/s a random search of `trials` trials finds on average, from a
    run that measured `values` (GFLOP/s, in its order): its first trial is the
    default (every search measures it first; `default_first=False` for a template
    without a default config: all `trials` drawn), the others a uniformly random
    `trials - 1` of the rest, without repeats. Exact, by the probability that each
    measured value is the largest of those drawn."""
    if not values:
        return 0.0
    if not default_first:
        return expected_best([-math.inf, *values], trials + 1)
    first, rest = values[0], sorted(values[1:])
    draws = trials - 1
    if draws <= 0 or not rest:
        return first
    if draws >= len(rest):
        return max(first, rest[-1])
    total = math.comb(len(rest), draws)
    return sum((math.comb(i + 1, draws) - math.comb(i, draws)) / total * max(first, v) for i, v in enumerate(rest))


def _unavailable(e: Exception) -> str:
    return traceback.format_exception_only(type(e), e)[-1].strip()[:200]


# ---------------------------------------------------------------------------------
# Part 1: kernels


def run_kernels(names: list[str], args, executor) -> dict:
    from tilecraft.autotune.plot import Panel, curve, measurements, plot_curves
    from tilecraft.autotune.records import TuningLog
    from tilecraft.autotune.templates import get_template
    from tilecraft.tools.tune import measure_default, tune_task

    # One log per guided run (seed), so each run's transfer learns from its own
    # earlier kernels only; the first keeps the name earlier runs of this bench used.
    guided_logs = [TuningLog(os.path.join(args.logs, "kernels.guided.jsonl" if seed == 0 else
                                          f"kernels.guided.seed{seed}.jsonl")) for seed in range(args.guided_runs)]  # fmt: skip
    random_log = TuningLog(os.path.join(args.logs, "kernels.random.jsonl"))
    rows, panels = [], []
    for name in names:
        try:
            task = kernel_task(KERNELS[name])
        except Exception as e:  # noqa: BLE001 - a kernel that cannot be had is reported, not fatal
            print(f"{name}: unavailable: {_unavailable(e)}", flush=True)
            continue
        guided_s = [tune_task(task, log, args.trials, executor, guided=True, timeout=args.timeout, seed=seed,
                              label=f"{name} guided" + (f" (seed {seed})" if seed else ""), cold=not args.hot).seconds
                    for seed, log in enumerate(guided_logs)]  # fmt: skip
        random_s = tune_task(task, random_log, args.random_trials, executor, guided=False, timeout=args.timeout,
                             label=f"{name} random", cold=not args.hot).seconds  # fmt: skip
        guided = [curve(log, task.template, task.params)[: args.trials] for log in guided_logs]
        random_values = measurements(random_log, task.template, task.params)[: args.random_trials]
        random = list(itertools.accumulate(random_values, max))
        has_default = get_template(task.template).default_config(*task.params) is not None
        default_s = measure_default(task, executor, args.timeout, guided_logs[0], cold=not args.hot)
        default = task.flops / default_s / 1e9 if math.isfinite(default_s) else None
        best = max(random, default=0.0)
        finals = [g[-1] for g in guided if g]
        row = {
            "kernel": name,
            "workload": task.key,
            "default": default,
            "guided": statistics.fmean(finals) if finals else None,
            "random_run_at": random[min(args.trials, len(random)) - 1] if random else None,
            "random_at": expected_best(random_values, args.trials, has_default) if random_values else None,
            "best_random": best or None,
            "random_trials": len(random),
            "space": get_template(task.template).space(*task.params).size,
            "guided_s": statistics.fmean(guided_s),
            "random_s": random_s,
        }
        for k in ("guided", "random_run_at", "random_at"):
            row[k + "_fraction"] = row[k] / best if best and row[k] is not None else None
        rows.append(row)
        curves = {"model-guided" + (f" (seed {seed})" if seed else ""): g for seed, g in enumerate(guided)}
        panels.append(Panel(f"{name}: {task.key[:50]}", curves | {"random": random}, default))
    if not rows:
        return {}
    from tilecraft.autotune.machine import fma_gflops
    from tilecraft.utils.threads import resolve_threads

    threads = resolve_threads(None)
    core = fma_gflops()
    ceiling = core * threads
    print(f"\nFMA ceiling: {core:.1f} GFLOP/s per core, {ceiling:.1f} on {threads} threads")

    def percent(v):
        return "-" if v is None else f"{100 * v / ceiling:.0f}"

    print(f"{'kernel':>13} {'default':>8} {'%ceil':>5} {'guided@' + str(args.trials):>10} {'random@' + str(args.trials):>10} "
          f"{'best random':>16} {'%ceil':>5} {'guided':>7} {'random':>7} {'(run)':>7} {'guided s':>9} {'random s':>9}")  # fmt: skip
    print(f"{'':>13} {'GF/s':>8} {'':>5} {'GF/s':>10} {'GF/s':>10} {'GF/s (n/space)':>16} {'':>5} {'frac':>7} {'frac':>7} "
          f"{'frac':>7}")  # fmt: skip
    for r in rows:
        best = f"{_num(r['best_random'])} ({r['random_trials']}/{r['space']})"
        print(f"{r['kernel']:>13} {_num(r['default']):>8} {percent(r['default']):>5} {_num(r['guided']):>10} "
              f"{_num(r['random_at']):>10} {best:>16} {percent(r['best_random']):>5} {_num(r['guided_fraction'], 3):>7} "
              f"{_num(r['random_at_fraction'], 3):>7} {_num(r['random_run_at_fraction'], 3):>7} {r['guided_s']:>9.1f} "
              f"{r['random_s']:>9.1f}")  # fmt: skip
    print(f"(guided: the mean of {args.guided_runs} runs (seeds); random@{args.trials}: what a random search of "
          f"{args.trials} trials finds on average, from the random run's measurements; (run): that run's own "
          f"first {args.trials})")  # fmt: skip
    if args.random_trials < 1000:
        print(f"(the best of {args.random_trials} random trials, not of 1000: --random-trials)")
    if any(r["random_trials"] == r["space"] for r in rows):
        print("(n = space: the random run measured every config of the space; its best is the optimum)")
    plot_curves(panels, args.plot, title=f"best GFLOP/s against trials ({args.trials} guided, "
                                         f"{args.random_trials} random)", log_x=args.random_trials > 4 * args.trials)  # fmt: skip
    print(f"curves: {args.plot}")
    return {
        "guided_fraction_of_best_at_64": geomean(r["guided_fraction"] for r in rows),
        "random_fraction_of_best_at_64": geomean(r["random_at_fraction"] for r in rows),
    }


def _num(v, digits: int = 1) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


# ---------------------------------------------------------------------------------
# Part 2: whole models


def load_networks():
    try:
        from networks import NETWORKS  # bench/networks.py
    except ImportError as e:
        return None, f"bench/networks.py: {e}"
    return NETWORKS, None


def measure_network(name: str, builder, args, executor, directory: str) -> dict:
    import tilecraft as tc
    from tilecraft.autotune.records import TuningLog
    from tilecraft.autotune.tasks import extract_tasks
    from tilecraft.tools.tune import tune_task

    row: dict = {"model": name, "notes": []}
    model = builder(size=args.size, batch=1)
    path = os.path.join(directory, f"{name}.onnx")
    onnx.save(model, path)
    session = ort_session(model)
    feed = session.get_inputs()[0]
    x = np.random.default_rng(100).standard_normal([int(d) for d in feed.shape]).astype(np.float32)
    expected = session.run(None, {feed.name: x})[0]
    fns = {"onnxruntime": lambda: session.run(None, {feed.name: x})}

    def check(label: str, m) -> bool:
        got = m(x)
        got = got[0] if isinstance(got, (list, tuple)) else got
        ok, diff = within_tolerance(got, expected)
        row[f"{label}_max_diff"] = diff
        if not ok:
            row["notes"].append(f"WRONG: {label} differs from onnxruntime by {diff:.3g}")
            row.setdefault("wrong", []).append(label)
        return ok

    try:
        untuned = tc.compile(path)
        if check("untuned", untuned):
            fns["untuned"] = lambda: untuned(x)
    except Exception as e:  # noqa: BLE001
        row["notes"].append(f"untuned: {_unavailable(e)}")
    log = TuningLog(os.path.join(args.logs, f"{name}.jsonl"))
    try:
        tasks = extract_tasks(path)
        row["tasks"] = len(tasks)
        seconds = 0.0
        for i, task in enumerate(tasks, start=1):
            seconds += tune_task(task, log, args.model_trials, executor, guided=True, timeout=args.timeout,
                                 label=f"{name} [{i}/{len(tasks)}] {task.template}", cold=not args.hot).seconds  # fmt: skip
        row["tuning_s"] = seconds
        tuned = tc.compile(path, tuning_log=log.path)
        if check("tuned", tuned):
            fns["tuned"] = lambda: tuned(x)
    except Exception as e:  # noqa: BLE001
        row["notes"].append(f"tuned: {_unavailable(e)}")
    for label, t in timed(fns, args.repeat).items():
        row[f"{label}_ms"] = t * 1e3
    return row


def run_models(names: list[str], networks, args, executor) -> dict:
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for name in names:
            builder, _ = networks[name]
            row = measure_network(name, builder, args, executor, directory)
            rows.append(row)
            print(f"{name}: {_row_text(row)}", flush=True)
    print(f"\n{'model':>16} {'ORT ms':>8} {'untuned ms':>11} {'/ORT':>6} {'tuned ms':>9} {'/ORT':>6} {'tasks':>6} "
          f"{'tuning min':>11}")  # fmt: skip
    for r in rows:
        ort = r.get("onnxruntime_ms")
        print(f"{r['model']:>16} {_num(ort, 2):>8} {_num(r.get('untuned_ms'), 2):>11} "
              f"{_num(_ratio(r, 'untuned'), 2):>6} {_num(r.get('tuned_ms'), 2):>9} {_num(_ratio(r, 'tuned'), 2):>6} "
              f"{r.get('tasks', '-'):>6} {_num(r['tuning_s'] / 60 if 'tuning_s' in r else None, 1):>11}")  # fmt: skip
        for note in r["notes"]:
            print(f"{'':>16} {note}")
    tuning = [r["tuning_s"] for r in rows if "tuning_s" in r]
    out = {
        "untuned_geomean_vs_ort": geomean(_ratio(r, "untuned") for r in rows),
        "tuned_geomean_vs_ort": geomean(_ratio(r, "tuned") for r in rows),
        "tuning_minutes": sum(tuning) / 60 if tuning else None,
        "wrong": [r["model"] for r in rows if r.get("wrong")],
    }
    print(f"geomean vs onnxruntime: untuned {_num(out['untuned_geomean_vs_ort'], 3)}, tuned "
          f"{_num(out['tuned_geomean_vs_ort'], 3)} ({args.model_trials} trials per task, tuning "
          f"{_num(out['tuning_minutes'], 1)} min)")  # fmt: skip
    return out


def _ratio(row: dict, label: str) -> float | None:
    if f"{label}_ms" not in row or "onnxruntime_ms" not in row:
        return None
    return row[f"{label}_ms"] / row["onnxruntime_ms"]


def _row_text(r: dict) -> str:
    parts = [f"{label} {r[label + '_ms']:.2f} ms" for label in ("onnxruntime", "untuned", "tuned") if label + "_ms" in r]
    return ", ".join(parts + r["notes"])


# ---------------------------------------------------------------------------------


def _choose(text: str, known, what: str) -> list[str]:
    if text == "all":
        return list(known)
    if text == "none":
        return []
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"bench/tuning.py: unknown {what} {', '.join(unknown)} (known: {', '.join(known)})")
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=64, help="measured configs of the guided search (64)")
    parser.add_argument("--guided-runs", type=int, default=3, help="guided searches (seeds) per kernel, averaged (3)")
    parser.add_argument("--random-trials", type=int, default=1000, help="measured configs of the random run (1000)")
    parser.add_argument("--kernels", default="all", help=f"all, none or some of {','.join(KERNELS)}")
    parser.add_argument("--models", default="all", help="all, none or some of bench/networks.py's NETWORKS")
    parser.add_argument("--model-trials", type=int, default=32, help="trials per task of a whole model (32)")
    parser.add_argument("--size", type=int, default=224, help="input height and width of the CNNs (224)")
    parser.add_argument("--repeat", type=int, default=10, help="timed calls per round of a whole model")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one measurement may take")
    parser.add_argument("--workers", type=int, default=1, help="measuring processes (1: timings undisturbed)")
    parser.add_argument("--hot", action="store_true", help="measure kernels with their weights in cache (default: "
                        "cold, as in a model)")  # fmt: skip
    parser.add_argument("--logs", default=os.path.join(RESULTS, "tuning"), help="where the tuning logs are kept")
    parser.add_argument("--plot", default=os.path.join(RESULTS, "tuning_curves.png"), help="the kernels' curves")
    args = parser.parse_args()
    if args.random_trials < args.trials:
        parser.error("--random-trials must be at least --trials (its first --trials are the random figure)")
    kernels = _choose(args.kernels, KERNELS, "kernel")
    networks, why = load_networks() if args.models != "none" else ({}, None)
    models = _choose(args.models, networks, "model") if networks is not None else []

    from tilecraft.autotune.measure import LocalExecutor

    headline: dict = {
        "bench": "tuning",
        "guided_fraction_of_best_at_64": None,
        "random_fraction_of_best_at_64": None,
        "untuned_geomean_vs_ort": None,
        "tuned_geomean_vs_ort": None,
        "tuning_minutes": None,
    }
    wrong: list[str] = []
    with LocalExecutor(args.workers) as executor:
        if kernels:
            print(f"part 1: {len(kernels)} kernels, guided {args.trials} trials, random {args.random_trials}", flush=True)
            headline.update(run_kernels(kernels, args, executor))
        if networks is None:
            print(f"part 2 (whole models): unavailable: {why}")
        elif models:
            print(f"\npart 2: {len(models)} models, {args.model_trials} trials per task", flush=True)
            result = run_models(models, networks, args, executor)
            wrong = result.pop("wrong")
            headline.update(result)
    print(json.dumps(headline))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
