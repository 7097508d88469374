"""`tilecraft-tune`: tune every tunable kernel of a model, resumably, into a log.

    tilecraft-tune model.onnx --trials 64 --log tune.jsonl
    tilecraft-tune model.mlir --trials 64 --log tune.jsonl --scheduler tcp://host:8786
    tilecraft-tune model.onnx --trials 64 --log tune.jsonl --plot curves.png
    tilecraft-tune model.onnx --input-shape x=1x3x224x224 --trials 64 --log tune.jsonl

The model's tunable tasks (its conv2d, dense, matmul... workloads, each once however
often the model uses it) are extracted (autotune/tasks.py) and tuned one after the
other (autotune/tuner.py): model-guided simulated annealing, or random search with
`--random`. Every measurement is appended to the log as it is made, so a run that
is stopped (Ctrl-C, kill -9) is resumed by running the same command again: what the
log holds is not measured again, and a task that reached its trials is skipped.
`tilecraft.compile(model, tuning_log=...)` then uses the best config of each task,
unless it beats the measured default by no more than timing noise (3%).

Measurements run in worker processes: `--workers N` of them on this machine, or on a
dask.distributed cluster with `--scheduler ADDRESS`. Each task shows a progress bar
(best GFLOP/s so far, trials, errors), then one line with its tuning wall time and
its best against the untuned default schedule (and whether the default stays); a
summary of what tc.compile will run ends the run.

`--plot out.png` also runs random search with the same budget into a log beside
`--log` (`tune.jsonl` -> `tune.random.jsonl`: a workload's records in one log are one
search) and writes the curves of best GFLOP/s against trials of both searches, with
the default as a line (autotune/plot.py).

Bad input (a missing or damaged model, a damaged log, a scheduler that does not
answer, a model with nothing to tune) prints one line `tilecraft-tune: error: ...`
and exits with status 1; a bug prints one line and exits with 2 (`--traceback`);
Ctrl-C exits with 130 (tools/errors.py).
"""

from __future__ import annotations

import argparse
import math
import socket
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tilecraft.tools.errors import ArgumentParser, UserError, add_traceback_option, run_tool, writing
from tilecraft.tools.options import STATIC_SHAPES, add_input_shape_option, add_version_option, input_shapes

PROG = "tilecraft-tune"
# autotune.tuner.CUTOFF, spelled out so that building the command line does not
# import the tuner (0.3 s, numpy with it) for a run that stops at a bad option;
# tests/pytest/test_cli.py keeps the two equal.
CUTOFF = 10.0


# -- the command line ---------------------------------------------------------


def make_arg_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="Tune the tunable kernels of a model (schedule search guided by a cost model) "
        "into a resumable log that tilecraft.compile(model, tuning_log=...) reads.",
    )
    parser.add_argument("model", help="an ONNX model (.onnx) or a graph-level IR file (.mlir)")
    parser.add_argument("--trials", type=int, required=True, help="measured configs per task")
    parser.add_argument("--log", required=True, help="the tuning log (JSON lines); an existing one is resumed")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="measure on a dask.distributed cluster (tcp://host:port)")
    parser.add_argument("--workers", type=int, default=1, help="measuring processes on this machine (default 1)")
    parser.add_argument("--random", action="store_true", help="random search instead of the model-guided one")
    parser.add_argument(
        "--plot",
        metavar="OUT.png",
        help="also run random search (into <log>.random.jsonl) and plot both searches' best GFLOP/s "
        "against trials, with the untuned default",
    )
    add_input_shape_option(parser)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one measurement may take (default 60)")
    parser.add_argument(
        "--hot",
        action="store_true",
        help="measure kernels back to back with their weights in cache (default: weights read from memory "
        "on every call, as in a compiled model)",
    )
    parser.add_argument(
        "--cutoff",
        type=float,
        default=CUTOFF,
        metavar="FACTOR",
        help="a config whose first call takes FACTOR times the best time so far is timed by that call alone "
        f"(default {CUTOFF:g}; 0 times every config in full)",
    )
    add_traceback_option(parser)
    add_version_option(parser)
    return parser


def random_log_path(log: str | Path) -> Path:
    """The log random search writes beside `log` under --plot: tune.jsonl -> tune.random.jsonl."""
    path = Path(log)
    return path.with_suffix(".random.jsonl") if path.suffix else path.with_name(path.name + ".random.jsonl")


# -- tasks and executors ------------------------------------------------------


def check_model(path: Path, input_shapes: dict) -> None:
    """A user error for a model file that cannot be one (before any work is done)."""
    if not path.exists():
        raise UserError(f"cannot read '{path}': no such file")
    if path.is_dir():
        raise UserError(f"cannot read '{path}': it is a directory")
    if path.suffix not in (".onnx", ".mlir"):
        raise UserError(f"'{path}' is neither an ONNX model (.onnx) nor an IR file (.mlir)")
    if path.suffix == ".mlir" and input_shapes:
        raise UserError(STATIC_SHAPES)


def check_log(path: Path) -> None:
    """A user error for a log that cannot be appended to (before any work is done:
    the first measurement would fail to be written)."""
    if path.is_dir():
        raise UserError(f"cannot write '{path}': it is a directory")
    if not path.parent.is_dir():
        raise UserError(f"cannot write '{path}': no such directory")


def load_tasks(path: Path, input_shapes: dict[str, tuple[int, ...]]) -> list:
    """The tunable tasks of an ONNX model or a graph IR file (checked by check_model)."""
    from tilecraft.autotune.tasks import SymbolicModelError, extract_tasks

    try:
        if path.suffix == ".onnx":
            from tilecraft.frontends.onnx.importer import load_model

            tasks = extract_tasks(load_model(path), input_shapes=input_shapes or None)
        else:
            tasks = extract_tasks(str(path))
    except SymbolicModelError as e:
        raise UserError(str(e)) from None
    if not tasks:
        raise UserError(f"nothing to tune in '{path}': it has no tunable kernel (conv2d, dense, matmul, ...)")
    return list(tasks)


def make_executor(scheduler: str | None, workers: int, connect_timeout: float = 10.0):
    from tilecraft.autotune.measure import DaskExecutor, LocalExecutor

    if scheduler is None:
        return LocalExecutor(workers)
    import dask
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        protocol, location = parse_address(scheduler)
        if protocol != "tcp":
            raise ValueError(f"only tcp:// scheduler addresses are supported, not {protocol}://")
        host, port = parse_host_port(location)
    except ValueError as e:
        raise UserError(f"bad --scheduler address '{scheduler}': {e}") from None
    try:  # fail fast where nothing listens (a dask Client would retry until its timeout)
        socket.create_connection((host, port), timeout=connect_timeout).close()
        with dask.config.set({"distributed.comm.timeouts.connect": f"{connect_timeout}s"}):
            return DaskExecutor(scheduler)  # its client, closed with it
    except (OSError, TimeoutError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise UserError(f"no dask scheduler answers at '{scheduler}': {reason}") from None


# -- tuning one task ----------------------------------------------------------


@dataclass
class TaskRun:
    """What tuning one task into a log did."""

    trials: int  # measured configs of the task in the log after this run (earlier runs' too)
    errors: int  # of those, the failed ones
    new: int  # measured by this run
    seconds: float  # this run's tuning wall time


@dataclass
class TaskResult:
    task: object  # autotune.tasks.Task
    run: TaskRun
    best_seconds: float  # of the best config (inf: none worked)
    default_seconds: float  # of the untuned default schedule (inf: it failed)
    applied: bool = True  # whether tc.compile(tuning_log=) uses the best (not the default)

    @property
    def applied_seconds(self) -> float:
        """What tc.compile(tuning_log=) runs for this task."""
        return self.best_seconds if self.applied else self.default_seconds

    @property
    def best_gflops(self) -> float:
        return _gflops(self.task.flops, self.best_seconds)

    @property
    def default_gflops(self) -> float:
        return _gflops(self.task.flops, self.default_seconds)


def _gflops(flops: float, seconds: float) -> float:
    return flops / seconds / 1e9 if seconds > 0 and math.isfinite(seconds) else 0.0


def _rate(gflops: float) -> str:
    """GFLOP/s with two decimals, or three significant digits below 1 (a small
    reduction does a few thousand operations: 0.00 would hide its speed-up)."""
    return f"{gflops:.2f}" if gflops >= 0.995 or gflops == 0 else f"{gflops:.3g}"


def tune_task(task, log, trials: int, executor, *, guided: bool, timeout: float, label: str,
              show_progress: bool = True, cold: bool = True, seed: int = 0,
              cutoff=...) -> TaskRun:  # fmt: skip
    """Tune one task into `log` (resuming) with a progress bar on stderr; `seed`
    seeds the search (its random draws and the cost model); `cutoff`: tuner.tune's
    (its default where not given)."""
    from tilecraft.autotune.templates import get_template
    from tilecraft.autotune.tuner import tune
    from tqdm import tqdm

    template = get_template(task.template)
    total = min(trials, template.space(*task.params).size)
    measured = log.measured(task.key, task.target)
    errors = sum(r.error is not None for r in measured.values())
    best = min((r.cost for r in measured.values()), default=math.inf)
    new = 0
    bar = tqdm(total=total, initial=min(len(measured), total), desc=label, unit="trial", file=sys.stderr,
               leave=True, dynamic_ncols=True, disable=not show_progress)  # fmt: skip

    def postfix() -> None:
        bar.set_postfix_str(f"best {_rate(_gflops(task.flops, best))} GFLOP/s, {errors} errors", refresh=False)

    def progress(record) -> None:
        nonlocal best, errors, new
        new += 1
        errors += record.error is not None
        best = min(best, record.cost)
        postfix()
        if bar.n < bar.total:  # (the confirming measurements after the last trial add none)
            bar.update(1)

    postfix()
    options = {} if cutoff is ... else {"cutoff": cutoff}
    start = time.perf_counter()
    try:
        tune(task.template, tuple(task.params), log, trials, executor, guided=guided, timeout=timeout,
             callback=progress, cold=cold, seed=seed, **options)  # fmt: skip
    finally:
        bar.close()
    return TaskRun(len(log.measured(task.key, task.target)), errors, new, time.perf_counter() - start)


def measure_default(task, executor, timeout: float, log=None, repeat: int = 5, cold: bool = True) -> float:
    """Median seconds of the untuned default schedule (inf when it fails): its record in
    `log` when the tuner measured the default config there (the same measurement the
    best is compared with), else a measurement now (`cold`: weights out of cache)."""
    from tilecraft.autotune.records import config_key
    from tilecraft.autotune.templates import get_template
    from tilecraft.autotune.tuner import measure_job

    template = get_template(task.template)
    default = template.default_config(*task.params)
    if log is not None and default is not None:
        record = log.measured(task.key, task.target).get(config_key(default))
        if record is not None and record.cold == cold and math.isfinite(record.cost):
            return record.cost
    job = measure_job(template, task.params, None, repeat, timeout, cold)
    (result,) = executor.run([job])
    return statistics.median(result.costs) if result.error is None and result.costs else math.inf


# -- the run ------------------------------------------------------------------


def _seconds(s: float) -> str:
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"


def run(args: argparse.Namespace) -> None:
    from tilecraft.autotune.records import TuningLog

    shapes = input_shapes(args.input_shape)
    check_model(Path(args.model), shapes)
    if args.plot and args.random:
        raise UserError("--plot runs both searches itself: leave out --random")
    check_log(Path(args.log))
    log = TuningLog(args.log)
    log.records()  # a damaged log is an error now, not after the first task
    random_log = TuningLog(random_log_path(args.log)) if args.plot else None
    if random_log is not None:
        check_log(random_log.path)
        random_log.records()
    executor = make_executor(args.scheduler, args.workers)  # a scheduler that does not answer fails fast
    results: list[TaskResult] = []
    from tilecraft.autotune.tasks import LogLookup  # (after the checks above: it takes 0.2 s)

    with executor:
        tasks = load_tasks(Path(args.model), shapes)
        print(f"{len(tasks)} tunable task(s) in {args.model}; {args.trials} trials each, "
              f"{'random' if args.random else 'model-guided'} search, log {args.log}", flush=True)  # fmt: skip
        cutoff = args.cutoff or None
        for i, task in enumerate(tasks, start=1):
            label = f"[{i}/{len(tasks)}] {task.template}"
            run = tune_task(task, log, args.trials, executor, guided=not args.random, timeout=args.timeout, label=label,
                            cold=not args.hot, cutoff=cutoff)  # fmt: skip
            if random_log is not None:
                tune_task(task, random_log, args.trials, executor, guided=False, timeout=args.timeout,
                          label=f"{label} (random)", cold=not args.hot, cutoff=cutoff)  # fmt: skip
            best = log.best(task.key, task.target)
            default = measure_default(task, executor, args.timeout, log, cold=not args.hot)
            applied = LogLookup(log)(task.template, tuple(task.params)) is not None
            result = TaskResult(task, run, best.cost if best else math.inf, default, applied)
            results.append(result)
            print(describe(i, len(tasks), result), flush=True)
    print(summary(results), flush=True)
    if args.plot:
        write_plot(args.plot, results, log, random_log)
        print(f"curves: {args.plot}")


def describe(i: int, n: int, r: TaskResult) -> str:
    task = r.task
    uses = f" (x{task.count})" if getattr(task, "count", 1) > 1 else ""
    run = r.run
    resumed = f", {run.trials - run.new} from the log" if run.trials > run.new else ""
    head = f"[{i}/{n}] {task.key}{uses}: {run.trials} trials ({run.errors} errors{resumed}) in {_seconds(run.seconds)}"
    if not math.isfinite(r.best_seconds):
        return f"{head}; no config ran (see the errors in the log)"
    default = _rate(r.default_gflops) if math.isfinite(r.default_seconds) else "failed"
    speedup = f" ({r.default_seconds / r.best_seconds:.2f}x)" if math.isfinite(r.default_seconds) else ""
    kept = "" if r.applied else "; the default stays (not faster by more than timing noise)"
    return f"{head}; best {_rate(r.best_gflops)} GFLOP/s vs default {default}{speedup}{kept}"


def summary(results: Sequence[TaskResult]) -> str:
    wall = sum(r.run.seconds for r in results)
    new = sum(r.run.new for r in results)
    text = f"tuned {len(results)} task(s): {new} new measurements in {_seconds(wall)}"
    ok = [r for r in results if math.isfinite(r.best_seconds) and math.isfinite(r.default_seconds)]
    if ok:
        before = sum(getattr(r.task, "count", 1) * r.default_seconds for r in ok)
        # what tc.compile(tuning_log=) runs: the best, or the default where the best is within noise of it
        after = sum(getattr(r.task, "count", 1) * r.applied_seconds for r in ok)
        text += f"; tuned kernels {before * 1e3:.3f} ms -> {after * 1e3:.3f} ms per run ({before / after:.2f}x)"
    return text


def write_plot(path: str, results: Sequence[TaskResult], log, random_log) -> None:
    from tilecraft.autotune.plot import Panel, curve, plot_curves

    panels = []
    for r in results:
        task = r.task
        panels.append(Panel(
            title=task.key if len(task.key) <= 60 else task.key[:57] + "...",
            curves={"model-guided": curve(log, task.template, task.params),
                    "random": curve(random_log, task.template, task.params)},
            default=r.default_gflops or None,
        ))  # fmt: skip
    with writing(path):
        plot_curves(panels, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_arg_parser()
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error(f"--trials must be at least 1, got {args.trials}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if not args.timeout > 0:
        parser.error(f"--timeout must be positive, got {args.timeout:g}")
    if args.cutoff < 0 or not math.isfinite(args.cutoff) or 0 < args.cutoff <= 1:
        parser.error(f"--cutoff must be 0 (off) or a factor above 1, got {args.cutoff:g}")
    return run_tool(
        PROG,
        lambda: run(args),
        argv,
        interrupted="interrupted; the log keeps every measurement made: run again to resume",
    )


if __name__ == "__main__":
    sys.exit(main())
