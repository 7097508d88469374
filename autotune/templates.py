"""Tunable templates: a workload, its knob space, and the schedule a config makes.

A `Template` (registered by name in `TEMPLATES`) turns a workload's parameters
(JSON-able: ints, strings, lists) into a knob `Space`, the schedule of a config
(`schedule(params, config)` -> (te schedule, tensors); config None = the untuned
default), and the work it does (`flops`). A config prints as the te + sched IR it
produces (`sched_ir`), so a tuning record is replayable text. Candidates are
measured by `measure` in a worker process (autotune/measure.py): it builds the
config, runs it `repeat` times after a warm-up on random inputs, checks the output
against the untuned schedule's (a wrong answer is an error, not a time), and
returns the seconds. A template for another target names its own measuring
function (`measure_job`).

Measuring as a model runs (`cold=True`, the default): in a compiled model a
layer's weights were last read one whole model call ago, and every other layer's
weights and activations went through the caches since, so a weight-bound kernel
reads them from memory; its activation input, just written by the layer before,
is in cache. Called back to back on one set of inputs a kernel finds its weights
hot (the 512x7x7 3x3 conv measured Winograd 1.35x faster; in ResNet-18 it was 3%
slower). So a template names its weight inputs (`weight_inputs`: conv2d's and
dense's weight, a Winograd config's transformed weight U) and `measure` rotates
each timed call through copies of them that together exceed the caches
(`cache_bytes`), while the activation and the output stay the same arrays.
`cold=False` measures everything hot (as logs before this option did).

The templates of topi's tunable schedules (conv2d, dense, ...) are the schedules
tc.compile uses, asked for their config through topi/tuning.py; `matmul` here is
a stand-alone GEMM with its own knobs: tile sizes of i and j, split of k, whether
the inner j loop is vectorized and the outer i loop parallel, and whether the k
split sits outside the tile (loop order).
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from tilecraft.autotune.explore import Space
from tilecraft.autotune.machine import cores_shared
from tilecraft.topi.tuning import workload_key
from tilecraft.utils.aligned import aligned, aligned_copy, aligned_empty

__all__ = [
    "TEMPLATES", "Template", "register_template", "workload_key", "sched_ir", "lower", "measure", "cold_copies",
    "cache_bytes",
]  # fmt: skip


class Template:
    """A tunable workload family; subclasses define `space`, `schedule`, `flops`."""

    name: str = ""
    target: str = "llvm"
    measure_job: str = "tilecraft.autotune.templates:measure"

    def space(self, *params) -> Space:
        raise NotImplementedError

    def schedule(self, *params, config: dict | None):
        """(te schedule, [inputs..., output]) of `config` (None: the default)."""
        raise NotImplementedError

    def flops(self, *params) -> float:
        raise NotImplementedError

    def default_config(self, *params) -> dict | None:
        """The config of the untuned schedule when it is a point of the space (the
        tuner measures it first, so a tuned record is never worse than the default
        as measured); None when the default is not a config of this space."""
        return None

    def inputs(self, args, rng: np.random.Generator) -> list[np.ndarray]:
        """Random inputs for measuring (the tensors before the output)."""
        def value(t):
            shape = [int(d) for d in t.shape]
            if str(t.dtype).startswith(("int", "uint")):
                return rng.integers(-8, 8, size=shape).astype(t.dtype)
            return rng.standard_normal(shape).astype(t.dtype)

        return [value(t) for t in args[:-1]]

    def function_inputs(self, params, config: dict | None, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """The inputs of the config's function from the workload's `inputs` (those of
        the default schedule): the same, unless the config's function reads an input
        prepared ahead of time, as a compiled model prepares a weight once."""
        return inputs

    def weight_inputs(self, params, config: dict | None) -> tuple[int, ...]:
        """Which of the config's function inputs (`function_inputs`) are weights: a
        compiled model reads them from memory once per call (`measure` rotates
        through cold copies of them); the others are activations, in cache. None by
        default: an operand computed by the model (batch_matmul's two) is an
        activation."""
        return ()


TEMPLATES: dict[str, Template] = {}


def register_template(template: Template) -> Template:
    if not template.name or template.name in TEMPLATES:
        raise ValueError(f"template {template.name!r} has no name or is registered already")
    TEMPLATES[template.name] = template
    return template


def get_template(name: str) -> Template:
    if name not in TEMPLATES:
        _load_builtin()
    if name not in TEMPLATES:
        raise KeyError(f"no tuning template {name!r} (known: {', '.join(sorted(TEMPLATES))})")
    return TEMPLATES[name]


def _load_builtin() -> None:
    """Import the modules that register topi's templates (they import topi)."""
    import importlib

    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


_BUILTIN_MODULES: list[str] = ["tilecraft.autotune.topi_templates", "tilecraft.autotune.accel_templates"]


def _divisors(n: int, limit: int = 64) -> tuple[int, ...]:
    return tuple(d for d in (1, 2, 4, 8, 16, 32, 64) if d <= min(n, limit) and n % d == 0)


class Matmul(Template):
    """C[n, m] = A[n, k] @ B[k, m], float32; params (n, m, k). A stand-alone GEMM
    of two computed operands: no weight inputs (dense is the GEMM with a weight)."""

    name = "matmul"

    def space(self, n: int, m: int, k: int) -> Space:
        return Space({
            "tile_i": _divisors(n), "tile_j": _divisors(m, 64), "split_k": _divisors(k, 32),
            "vectorize": (0, 1), "parallel": (0, 1), "k_outside": (0, 1),
        })  # fmt: skip

    def flops(self, n: int, m: int, k: int) -> float:
        return 2.0 * n * m * k

    def schedule(self, n: int, m: int, k: int, config: dict | None):
        from tilecraft.frontends import te

        A = te.placeholder((n, k), "float32", name="A")
        B = te.placeholder((k, m), "float32", name="B")
        r = te.reduce_axis((0, k), name="k")
        C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
        s = te.create_schedule(C)
        if config is None:
            return s, [A, B, C]
        i, j = s[C].op.axis
        (r,) = s[C].op.reduce_axis
        io, jo, ii, ji = s[C].tile(i, j, config["tile_i"], config["tile_j"])
        ro, ri = s[C].split(r, config["split_k"])
        if config["k_outside"]:
            s[C].reorder(io, jo, ro, ii, ri, ji)
        else:
            s[C].reorder(io, jo, ii, ro, ri, ji)
        if config["vectorize"] and config["tile_j"] > 1:
            s[C].vectorize(ji)
        if config["parallel"]:
            s[C].parallel(io)
        return s, [A, B, C]


register_template(Matmul())


def sched_ir(template: str, params, config: dict | None) -> str:
    """The te + sched IR a config produces (what a record replays)."""
    from tilecraft.frontends.te.emit import build_module

    s, args = get_template(template).schedule(*params, config=config)
    return str(build_module(s, args))


def lower(template: str, params, config: dict | None, *, verify: bool = True):
    """The loop IR of a config (what the cost model's features read). The tuner
    lowers hundreds of candidates it only scores: `verify=False` skips verifying
    the te module and the loop module (about 40% of the time) and reuses one context."""
    s, args = get_template(template).schedule(*params, config=config)
    if verify:
        from tilecraft.driver.te_pieces import lower_module

        return lower_module(s, args, "main")
    from tilecraft.frontends.te.emit import build_module
    from tilecraft.pipelines.compile_model import lower_te_stages
    from tilecraft.pipelines.run_stages import run_stages

    module = build_module(s, args, "main", verify=False)
    run_stages([stage() for stage in lower_te_stages()], _context(), module, verify_last=False)
    return module


@functools.cache
def _context():
    from tilecraft.driver.context import make_context

    return make_context()


# The default schedule's output per (template, params, seed): a worker measures many
# configs of one workload, and building the reference each time doubles the cost.
_REFERENCES: dict[str, np.ndarray] = {}


# The default schedule's arguments of each workload (the shapes the workload's inputs
# have), so a worker does not rebuild that schedule for every config it measures.
_WORKLOAD_ARGS: dict[str, list] = {}


def _workload_args(t: Template, params) -> list:
    key = workload_key(t.name, params)
    if key not in _WORKLOAD_ARGS:
        if len(_WORKLOAD_ARGS) > 8:
            _WORKLOAD_ARGS.clear()
        _WORKLOAD_ARGS[key] = t.schedule(*params, config=None)[1]
    return _WORKLOAD_ARGS[key]


def _reference(t: Template, params, inputs, out: np.ndarray, seed: int) -> np.ndarray:
    key = f"{workload_key(t.name, params)}#{seed}"
    if key not in _REFERENCES:
        if len(_REFERENCES) > 8:
            _REFERENCES.clear()
        s0, a0 = t.schedule(*params, config=None)
        expected = np.zeros_like(out)
        _build(s0, a0)(*inputs, expected)
        _REFERENCES[key] = expected
    return _REFERENCES[key]


def _build(s, args):
    """The native function of a schedule (what tc.build makes, without its argument
    checks: measuring calls it many times on arrays made to fit)."""
    from tilecraft.driver.te_pieces import build_pieces

    compiled, _ = build_pieces(s, list(args), "main", {})
    return compiled


def gflops(template: str, params, seconds: float) -> float:
    return get_template(template).flops(*params) / seconds / 1e9 if seconds and math.isfinite(seconds) else 0.0


# Each repeat times enough calls to last this long (TVM's min_repeat_ms): a single
# call of a small kernel is as short as the timer's and the scheduler's noise.
MIN_REPEAT_SECONDS = 0.01
WARMUP_SECONDS = 0.05
# A repeat that began or ended with the cores shared (machine.cores_shared) is
# taken again after a pause; a measurement spends at most MAX_RETRY_SECONDS so
# (a machine whose cores another process keeps busy is measured as it is).
RETRY_PAUSE_SECONDS = 0.02
MAX_RETRY_SECONDS = 2.0


def cache_bytes() -> int:
    """Bytes of cache the weights of a kernel can stay in between two of its calls:
    the last level (the largest of /sys's cpu0 cache levels) plus one private
    level-2 cache per CPU (a non-inclusive last level holds what they evicted);
    32 MiB + 1 MiB per CPU where /sys does not say."""
    import os
    from pathlib import Path

    cpus = os.cpu_count() or 1
    levels: dict[int, int] = {}
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level = int((index / "level").read_text())
            size = (index / "size").read_text().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
            levels[level] = int(size.rstrip("KMG")) * scale
        except (OSError, ValueError):
            continue
    if not levels:
        return (32 << 20) + cpus * (1 << 20)
    last = max(levels)
    private = levels.get(2, 0) * cpus if last > 2 else 0
    return levels[last] + private


# The most memory the cold copies of a kernel's weights may take, and the most
# copies (a weight under 1/MAX_COLD_COPIES of twice the cache is not cold in every cache:
# a small weight's read costs little either way).
MAX_COLD_BYTES = 512 << 20
MAX_COLD_COPIES = 1024


def cold_copies(inputs: list[np.ndarray], weights: tuple[int, ...], budget: int | None = None,
                ) -> list[list[np.ndarray]]:  # fmt: skip
    """Argument lists for measuring with cold weights: the inputs at `weights` are
    copied as many times as makes their total at least twice `budget` (default
    `cache_bytes()`, capped at MAX_COLD_BYTES and MAX_COLD_COPIES), each list holding
    one copy of each weight and the same other arrays. Called in turn, each call
    finds its weights evicted by the others' since its last turn. One list (the
    inputs themselves) when there are no weights."""
    size = sum(inputs[i].nbytes for i in weights)
    if not weights or not size:
        return [list(inputs)]
    target = min(2 * (cache_bytes() if budget is None else budget), MAX_COLD_BYTES)
    count = max(1, min(MAX_COLD_COPIES, -(-target // size)))
    lists = [list(inputs)]
    for _ in range(count - 1):
        lists.append([aligned_copy(a) if i in weights else a for i, a in enumerate(inputs)])
    return lists


def measure(template: str, shape: list, config: dict | None, repeat: int = 5, seed: int = 0,
            cold: bool = True, cutoff: float | None = None) -> list[float]:  # fmt: skip
    """Seconds per call of the config, `repeat` times (in a worker process): after a
    warm-up of at least WARMUP_SECONDS (threads woken, caches and pages touched),
    each figure the mean of as many calls as fill MIN_REPEAT_SECONDS, taken again
    when the cores were shared as it ran (machine.cores_shared). `cold`: each
    call reads the template's weight inputs from memory, as in a model (calls rotate
    through `cold_copies`); the activation inputs and the output stay in cache. An
    output that differs from the untuned schedule's by more than float32 summation
    order explains (relative to the output's magnitude) is an AssertionError.

    `cutoff` (seconds): a config whose first call (the one checked against the
    reference) takes longer is hopeless, and its one timing is all it gets: one
    figure, not `repeat` (the tuner sets it to a multiple of the best cost so far,
    so a naive loop order that runs for seconds costs one call, not a dozen)."""
    t = get_template(template)
    s, args = t.schedule(*shape, config=config)
    f = _build(s, args)
    rng = np.random.default_rng(seed)
    workload = t.inputs(args if config is None else _workload_args(t, shape), rng)
    # Aligned as a compiled model's arena and bound weights are (utils/aligned.py).
    inputs = [aligned(a) for a in t.function_inputs(shape, config, workload)]
    out = aligned_empty([int(d) for d in args[-1].shape], args[-1].dtype)
    out[...] = 0
    start = time.perf_counter()
    f(*inputs, out)
    first = time.perf_counter() - start
    if config is not None:
        expected = _reference(t, shape, workload, out, seed)
        error = float(np.abs(out.astype(np.float64) - expected).max()) if out.size else 0.0
        scale = float(np.abs(expected).max()) if out.size else 0.0
        if not np.isfinite(error) or error > 1e-4 * scale + 1e-6:
            raise AssertionError(f"wrong answer: max error {error:.3g} (outputs up to {scale:.3g})")
    if cutoff is not None and first > cutoff:
        return [first]
    rotation = cold_copies(inputs, t.weight_inputs(shape, config)) if cold else [inputs]
    turn = 0

    def call() -> None:
        nonlocal turn
        f(*rotation[turn], out)
        turn = turn + 1 if turn + 1 < len(rotation) else 0

    calls, warm = 0, time.perf_counter()
    while time.perf_counter() - warm < WARMUP_SECONDS or calls < 3:
        call()
        calls += 1
    single = (time.perf_counter() - warm) / calls
    number = max(1, int(MIN_REPEAT_SECONDS / max(single, 1e-7)))
    costs, retried = [], 0.0
    shared = cores_shared()
    for _ in range(repeat):
        while True:
            call()  # (wakes the pool's workers after the probe)
            begin = time.perf_counter()
            for _ in range(number):
                call()
            cost = (time.perf_counter() - begin) / number
            before, shared = shared, cores_shared()
            if not (before or shared) or retried >= MAX_RETRY_SECONDS:
                break
            # Timed while the host gave us fewer cores (autotune/machine.py): again, later.
            time.sleep(RETRY_PAUSE_SECONDS)
            retried += RETRY_PAUSE_SECONDS + cost * number
            shared = cores_shared()
        costs.append(cost)
    return costs
