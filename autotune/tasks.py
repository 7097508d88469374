"""A model's tuning tasks, tuning them all, and applying a log when compiling.

A task is one workload of a tunable topi schedule (autotune/topi_templates.py) that
a model runs: `extract_tasks(model)` runs compile-model up to convert-graph-to-te
with a recorder installed as the tuning context (topi/tuning.py), so every
conv2d/dense/matmul group that schedules itself reports its workload — the very
key its schedule will ask for when the model is compiled with a log (TVM's task
extraction by tracing the compile). Identical workloads are one task (`count` says
how many groups share it).

`tune_tasks(tasks, log, trials, executor)` tunes each in turn (autotune/tuner.py,
resumable from the log), and `log_lookup(log)` is what `tc.compile(model,
tuning_log=...)` installs: a workload's best error-free record, else None (the
default schedule).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from tilecraft.autotune.records import Record, TuningLog
from tilecraft.autotune.templates import get_template, workload_key


@dataclass
class Task:
    template: str
    params: tuple
    count: int = 1

    @property
    def key(self) -> str:
        return workload_key(self.template, self.params)

    @property
    def target(self) -> str:
        return get_template(self.template).target

    @property
    def flops(self) -> float:
        return get_template(self.template).flops(*self.params)


class _Recorder:
    def __init__(self):
        self.tasks: dict[str, Task] = {}

    def __call__(self, template: str, params: tuple):
        key = workload_key(template, params)
        if key in self.tasks:
            self.tasks[key].count += 1
        else:
            self.tasks[key] = Task(template, tuple(params))
        return None


def extract_tasks(model, input_shapes: dict | None = None, *, store=None) -> list[Task]:
    """The tunable workloads of a model (ONNX model or path, .mlir graph file, or
    graph module), in the order the model first schedules them."""
    from tilecraft.driver.context import make_context
    from tilecraft.lowering.convert_graph_to_te import ConvertGraphToTePass
    from tilecraft.pipelines.compile_model import CompileModelPass
    from tilecraft.driver.compile_model import load_model
    from tilecraft.pipelines.run_stages import run_stages
    from tilecraft.topi.tuning import use_configs
    from tilecraft.utils.weights import attach, store_of

    module = load_model(model, input_shapes, store)
    _refuse_symbolic(module)
    source = store_of(module)
    if source is not None:
        attach(module, source.child())
    stages = CompileModelPass().stages()
    # The schedules are asked for by convert-graph-to-te: the passes after it are not run.
    last = next(i for i, stage in enumerate(stages) if isinstance(stage, ConvertGraphToTePass))
    recorder = _Recorder()
    with use_configs(recorder):
        run_stages(stages[: last + 1], make_context(), module)
    return list(recorder.tasks.values())


class SymbolicModelError(ValueError):
    """A model to tune has sizes known only when it runs."""


def _refuse_symbolic(module) -> None:
    """Tuning measures kernels at sizes: a model with sizes known only when it
    runs is tuned for given ones (a SymbolicModelError naming them says how)."""
    from xdsl.dialects import func

    from tilecraft.dialects.graph.shapes import symbolic_dims

    for f in module.ops:
        if not isinstance(f, func.FuncOp):
            continue
        for n, t in enumerate(f.function_type.inputs.data):
            names = [str(d) for _, d in symbolic_dims(t)]
            if names:
                raise SymbolicModelError(
                    f"input #{n + 1} of the model has sizes known only when it runs ({', '.join(names)}); "
                    "tuning measures kernels at given sizes: fix them with input_shapes= (the tools' "
                    "--input-shape NAME=D1xD2x...)"
                )


class LogLookup:
    """The tuning context of a log: each workload's best error-free record (the log
    is read once) — unless the template's default config was measured and the best
    is not faster than it by more than `margin` (3%: below what one timing on a
    shared machine can tell), when the default schedule stays. With `skip_invalid`
    (what `tc.compile` uses), a record whose config is not a point of its template's
    space (a log of another version: a template's knobs change as it improves) is
    passed over for the next best, with one warning per workload; without, it is
    answered, and the schedule refuses it with a diagnostic (`tilecraft-opt
    --tuning-log`, where the log is the input under test). A config is first put in
    its space's normal form (`Space.normalize`), so one that schedules what a point
    of the space does counts as that point."""

    def __init__(self, log: TuningLog | str, target: str = "llvm", *, skip_invalid: bool = False,
                 margin: float = 0.03):  # fmt: skip
        self.log = log if isinstance(log, TuningLog) else TuningLog(log)
        self.skip_invalid, self.margin = skip_invalid, margin
        self.warned: set[str] = set()
        self.ranked: dict[str, list[Record]] = {}
        for record in self.log.records():
            if record.kind != "measure" or record.target != target or record.error is not None or not record.costs:
                continue
            self.ranked.setdefault(record.workload, []).append(record)
        for records in self.ranked.values():
            records.sort(key=lambda r: r.cost)

    @property
    def best(self) -> dict[str, Record]:
        return {key: records[0] for key, records in self.ranked.items()}

    def __call__(self, template: str, params: tuple) -> dict | None:
        key = workload_key(template, params)
        records = self.ranked.get(key, [])
        space = get_template(template).space(*params) if records else None
        if records:
            records = self._normalized(space, records)
        if self.skip_invalid and records:
            valid = [r for r in records if space.contains(r.config)]
            if len(valid) < len(records) and key not in self.warned:
                self.warned.add(key)
                warnings.warn(
                    f"{self.log.path}: {len(records) - len(valid)} record(s) of {key} are not configs "
                    "of the current template (a log of another version?); they are skipped",
                    stacklevel=2,
                )
            records = valid
        if not records:
            return None
        default = get_template(template).default_config(*params)
        timed = [r.cost for r in records if default is not None and r.config == default]
        if timed and records[0].cost * (1 + self.margin) >= timed[0]:
            return None  # not faster than the default by more than timing noise
        return dict(records[0].config)

    @staticmethod
    def _normalized(space, records: list[Record]) -> list[Record]:
        """The records with their configs in the space's normal form: a config that
        schedules what a point of the space does (a direct conv's config whose unused
        Winograd knobs are not at their first values, written by hand or by another
        tool) counts as that point instead of being passed over."""
        if space.normalize is None:
            return records
        out = []
        for r in records:
            try:
                config = space.normalize(dict(r.config))
            except (KeyError, TypeError, ValueError):  # not a config of this space at all
                config = r.config
            out.append(r if config == r.config else replace(r, config=config))
        return out


def tune_tasks(tasks: Sequence[Task], log: TuningLog, trials: int, executor, *, guided: bool = True,
               callback: Callable[[Task, Record], None] | None = None, **options) -> dict[str, dict]:  # fmt: skip
    """Tune every task (resuming from the log); per task key: its best record and
    the wall time it took in this call ({"best": Record | None, "seconds": float})."""
    out = {}
    for task in tasks:
        start = time.perf_counter()
        best = get_tuner()(task.template, task.params, log, trials, executor, guided=guided,
                           callback=(lambda r, task=task: callback(task, r)) if callback else None,
                           **options)  # fmt: skip
        out[task.key] = {"best": best, "seconds": time.perf_counter() - start}
    return out


def tune_model(model, log: TuningLog | str, trials: int, executor=None, *, input_shapes: dict | None = None,
               **options) -> dict[str, dict]:  # fmt: skip
    """Extract a model's tasks and tune them all (`tune_tasks`) in one call; then
    `tc.compile(model, tuning_log=log)` runs the tuned schedules. Without an
    executor, measures in one local worker process."""
    from tilecraft.autotune.measure import LocalExecutor

    log = log if isinstance(log, TuningLog) else TuningLog(log)
    tasks = extract_tasks(model, input_shapes)
    if executor is not None:
        return tune_tasks(tasks, log, trials, executor, **options)
    with LocalExecutor(1) as local:
        return tune_tasks(tasks, log, trials, local, **options)


def get_tuner():
    from tilecraft.autotune.tuner import tune

    return tune
