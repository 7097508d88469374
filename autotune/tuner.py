"""The tuning loop: propose, measure, record, learn — resumable from its log.

`tune(template, params, log, trials, executor)`: until `trials` configs of the
workload are in the log (counting those an earlier, interrupted run measured),
propose a batch (`explore.next_batch` on the rank model's scores of the configs'
loop features; random before the model has anything to learn from), measure it on
the executor (autotune/measure.py: errors are records too), append every result to
the log, and refit the model on everything measured. A task that reaches its
trials gets a "done" record. Returns the best record. The template's default
config (the untuned schedule, when it is a point of the space) is measured in the
first batch, so the best is never worse than the default as measured (in random
search too); before the "done" record, model-guided search measures the fastest few
and the default once more and each config keeps its better measurement (timing
noise only ever slows a run down).
`guided=False` is random search (the ablation). `cold` (default True) measures each
config with its weights out of cache, as a compiled model runs it (templates.measure;
recorded in each record); `cold=False` measures them hot, back to back.

Hopeless configs are cheap: a config whose first call takes more than `cutoff` (10)
times the best cost measured so far is recorded from that one call (its record holds
one cost), not timed `repeat` times after a warm-up. In a space of plain split factors
most configs are such (a 512 GEMM with an unvectorized column tile of 2 runs for
seconds against 10 ms), and measuring them in full took most of a search's time; their
exact slowness does not change what the search keeps, and the rank model sees them as
slow all the same. Random search uses the same rule, so the ablation stays fair.

Transfer: with `transfer=True` (the default) the model also trains on the log's
records of other workloads of the same template (up to `transfer_limit` of them),
each its own query group, so a model's second conv starts from what its first one
taught — and guides the first batch, which would otherwise be random.
"""

from __future__ import annotations

import math

import numpy as np

from tilecraft.autotune.cost_model import RankModel
from tilecraft.autotune.explore import next_batch
from tilecraft.autotune.features import features
from tilecraft.autotune.measure import Job
from tilecraft.autotune.records import Record, TuningLog, config_key
from tilecraft.autotune.templates import get_template, lower, workload_key


# A config whose first call takes this many times the best cost so far is timed by
# that call alone (tune's `cutoff`; the module docstring).
CUTOFF = 10.0

# Loop features of configs, by workload key and config key: lowering one takes
# ~30 ms, and every task of a model trains on the records of the ones before it.
_FEATURES: dict[tuple[str, str], np.ndarray] = {}


def config_features(template: str, params, config: dict) -> np.ndarray:
    """The cost model's input for `config` of workload `template`/`params` (cached)."""
    k = (workload_key(template, params), config_key(config))
    if k not in _FEATURES:
        _FEATURES[k] = features(lower(template, params, config, verify=False))
    return _FEATURES[k]


def _transfer_groups(log: TuningLog, template: str, key: str, target: str, limit: int):
    """(features, costs) per other workload of `template` in the log."""
    import json

    groups: dict[str, dict[str, Record]] = {}
    for r in log.records():
        if r.kind == "measure" and r.target == target and r.workload != key and r.workload.startswith(template + "["):
            configs = groups.setdefault(r.workload, {})
            held = configs.get(config_key(r.config))
            if held is None or r.cost < held.cost:  # a confirmed config: its better record
                configs[config_key(r.config)] = r
    out, used = [], 0
    for workload, by_config in groups.items():
        records = list(by_config.values())[: max(0, limit - used)]
        if len(records) < 2:
            continue
        params = json.loads(workload[len(template):])
        try:
            x = np.stack([config_features(template, params, r.config) for r in records])
        except Exception:  # noqa: BLE001 - a record of another version of the template: skip it
            continue
        out.append((x, [r.cost for r in records]))
        used += len(records)
    return out


def tune(template: str, shape: tuple, log: TuningLog, trials: int, executor, *, batch: int = 8,
         guided: bool = True, seed: int = 0, timeout: float = 60.0, repeat: int = 5,
         callback=None, transfer: bool = True, transfer_limit: int = 512, confirm: int = 3,
         cold: bool = True, cutoff: float | None = CUTOFF) -> Record | None:  # fmt: skip
    """`callback(record)` is called after each measurement is recorded (progress bars);
    `confirm`: how many of the fastest configs (and the default) model-guided search
    measures again before the task is done (0: none; random search never does);
    `cutoff`: the factor over the best cost so far past which a config's first call
    is its only timing (None: every config timed in full)."""
    t = get_template(template)
    space, target = t.space(*shape), t.target
    key = workload_key(template, shape)
    if log.finished(key, target) and len(log.measured(key, target)) >= min(trials, space.size):
        return log.best(key, target)  # a finished task: nothing to learn or measure
    rng = np.random.default_rng(seed)
    model = RankModel(seed=seed)
    default = t.default_config(*shape)
    prior = _transfer_groups(log, template, key, target, transfer_limit) if guided and transfer else []

    def vector(config: dict) -> np.ndarray:
        return config_features(template, shape, config)

    def score(configs):
        return model.predict(np.stack([vector(c) for c in configs]))

    while True:
        done = log.measured(key, target)
        if len(done) >= min(trials, space.size):
            break
        want = min(batch, trials - len(done))
        if guided and (len(done) >= 2 or prior):
            records = list(done.values())
            own = [(np.stack([vector(r.config) for r in records]), [r.cost for r in records])] if records else []
            model.fit(prior + own)
            # 8 walks of 20 steps: each new candidate is lowered to be scored (~30 ms)
            proposals = next_batch(space, score, want, set(done), rng, chains=8, steps=20)
        else:
            proposals = next_batch(space, lambda cs: rng.random(len(cs)), want, set(done), rng, steps=1, epsilon=1.0)
        if default is not None and config_key(default) not in done:
            # The default first (tuned is never worse; a curve's first point is the
            # untuned schedule), also where the search proposed it itself.
            others = [c for c in proposals if config_key(c) != config_key(default)]
            proposals = [default, *others[: want - 1]]
        if not proposals:
            break
        best = min((r.cost for r in done.values()), default=math.inf)  # (inf: an error)
        limit = cutoff * best if cutoff is not None and math.isfinite(best) else None
        jobs = [measure_job(t, shape, c, repeat, timeout, cold, limit) for c in proposals]
        for config, result in zip(proposals, executor.run(jobs)):
            record = log.measure(key, target, config, result.costs, result.error, cold=cold)
            if callback is not None:
                callback(record)
    if confirm and guided and not log.finished(key, target):
        _confirm(t, shape, key, target, log, executor, default, confirm, timeout, repeat, callback, cold)
    if not log.finished(key, target):
        log.finish(key, target)
    return log.best(key, target)


def measure_job(t, shape, config: dict | None, repeat: int, timeout: float, cold: bool,
                cutoff: float | None = None) -> Job:  # fmt: skip
    """The job measuring `config` of template `t`'s workload `shape` (`cutoff`:
    seconds past which its first call is its only timing)."""
    kwargs = {"template": t.name, "shape": list(shape), "config": config, "repeat": repeat, "cold": cold}
    if cutoff is not None:
        kwargs["cutoff"] = cutoff
    return Job(t.measure_job, kwargs, timeout)


def _confirm(t, shape, key, target, log, executor, default, top, timeout, repeat, callback, cold) -> None:
    """Measure the `top` fastest configs and the default once more (those measured
    once: a resumed task does not repeat it). One timing of a candidate can be 2x
    slow when another process takes a core; a second one, later, rarely is, and the
    log keeps the better (records.measured)."""
    done = log.measured(key, target)
    counts = log.measurements(key, target)
    ranked = sorted((r for r in done.values() if r.error is None and r.costs), key=lambda r: r.cost)
    configs = [r.config for r in ranked[:top]]
    if default is not None and config_key(default) in done and all(config_key(c) != config_key(default)
                                                                   for c in configs):  # fmt: skip
        configs.append(default)
    configs = [c for c in configs if counts.get(config_key(c), 0) < 2]
    jobs = [measure_job(t, shape, c, repeat, timeout, cold) for c in configs]
    for config, result in zip(configs, executor.run(jobs) if jobs else []):
        record = log.measure(key, target, config, result.costs, result.error, cold=cold)
        if callback is not None:
            callback(record)
