"""`accelerability`: which compute ops of a model the VTA-like accelerator can take,
why not the others, and the end-to-end speedup offloading them allows.

For every op with multiply-adds (conv2d, dense, matmul, batch_norm, ...) the
verdict is partition-accel's own test (`analysis/accel_fit.fit_chain`), so
the ops called accelerable here are exactly those `partition-accel` outlines and
`tc.compile(model, target="accel")` runs on the accelerator: an int8 conv2d or
dense (a quantized model's: `tc.quantize`) whose shape the GEMM intrinsic and the
buffers of the spec take, followed by a requantization to int8. For every other op
the reason names the field and the value ("input channels 24 not a multiple of
BLOCK_IN 16", "a f32 conv2d: not quantized to int8", "depthwise (groups 32)",
"padding (16, 16, 16, 16) beyond LOAD's 4-bit pad fields", ...).

Totals: the share of the model's MACs (the `macs` analysis) the accelerator can
take, and Amdahl's law on time. An op's CPU time is its `roofline` time (a lower
bound on the host or the machine given) or its time in a measured `profile`
(seconds by op label) where one is given; an op that reads only weights and
constants (a quantized weight's cast) costs none, as fold-constants computes it
when compiling. Offloading a chain frees the CPU time of all its ops (casts, conv
or dense, relu, requantize) and costs its accelerator time; `speedup` = CPU time /
(CPU time - freed + accelerator time), and `speedup_limit` the same with an
infinitely fast accelerator (None: unbounded). The host's packing of data into the
accelerator's layout and back is not counted.

Accelerator time is cycles at the spec's clock. By default the cycles are a
closed-form estimate from the spec (`estimate_cycles`), not the timing model: the
timing model needs the compiled instruction stream, and building one takes a
quarter to a whole second a layer. The estimate is a lower bound of the timing
model's cycles, as the roofline is of the CPU's time: the compute module runs every
GEMM micro-op step (BATCH x BLOCK x BLOCK MACs each) and every ALU step of the
requantizing epilogue, after a first load and before a last store; the load
module moves every input element the windows touch and every weight at least once,
the store module every output. `Accelerability(spec, cycles=simulated_cycles)`
(runtime/accel.py) builds each chain as `tc.compile(target="accel")` would
(`conv2d_accel` with its default config) and takes the timing model's cycles instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from tilecraft.analysis.framework import Analysis, AnalysisManager, OpFacts, Result, register_analysis
from tilecraft.backends.accel.spec import AccelSpec, default_spec, load_spec
from tilecraft.backends.accel.timing import ALU_PIPELINE_CYCLES, GEMM_PIPELINE_CYCLES
from tilecraft.dialects import graph
from tilecraft.analysis.accel_fit import TARGET_ATTR, Chain, fit_chain


def accel_spec(spec: AccelSpec | str | None) -> AccelSpec:
    """A spec from a spec, a file name, or "default"/None (VTA's default)."""
    if isinstance(spec, AccelSpec):
        return spec
    return default_spec() if spec in (None, "default") else load_spec(str(spec))


def spec_name(spec: AccelSpec) -> str:
    return "default (VTA)" if spec == default_spec() else spec.source


def _touched(size: int, outputs: int, stride: int, pad: int, window: int) -> int:
    """How many of an input axis's `size` positions some output's window reads."""
    read = set()
    for y in range(outputs):
        read.update(range(max(0, y * stride - pad), min(size, y * stride - pad + window)))
    return len(read)


def estimate_cycles(chain: Chain, spec: AccelSpec) -> int:
    """A lower bound of the accelerator cycles of `chain` (see the module doc):
    max(first load + compute + last store, all loads + a store, a load + all stores)."""
    n, c, h, w = chain.input_shape()
    o, _, kh, kw = chain.weight.shape
    top, left, bottom, right = chain.pads
    sh, sw = chain.strides
    oh, ow = (h + top + bottom - kh) // sh + 1, (w + left + right - kw) // sw + 1
    rows, blocks_in, blocks_out = n // spec.batch, c // spec.block, o // spec.block
    gemm_steps = rows * blocks_out * blocks_in * oh * ow * kh * kw
    # The epilogue: add the bias, clip below (relu's 0 or -128) and above (127), and
    # where it shifts, add the rounding half and shift.
    alu_passes = 3 + (2 if chain.shift else 0)
    alu_steps = alu_passes * rows * blocks_out * oh * ow
    compute = (gemm_steps * spec.gemm_initiation_interval + GEMM_PIPELINE_CYCLES
               + alu_steps * spec.alu_initiation_interval + ALU_PIPELINE_CYCLES)  # fmt: skip
    pixels = _touched(h, oh, sh, top, kh) * _touched(w, ow, sw, left, kw)
    loaded = rows * blocks_in * pixels * spec.inp_elem_bytes + blocks_out * blocks_in * kh * kw * spec.wgt_elem_bytes
    stored = rows * blocks_out * oh * ow * spec.out_elem_bytes
    dma = spec.dma_latency_cycles + 1  # the least one DMA takes
    load = spec.dma_latency_cycles + math.ceil(loaded / spec.dma_bytes_per_cycle)
    store = spec.dma_latency_cycles + math.ceil(stored / spec.dma_bytes_per_cycle)
    return max(dma + compute + dma, load + dma, dma + store)


def folded(op: Operation, seen: dict[Operation, bool] | None = None) -> bool:
    """Whether `op` computes from weights and constants only, through other such ops."""
    seen = {} if seen is None else seen
    if op not in seen:
        seen[op] = bool(op.operands) and all(
            isinstance(v.owner, graph.ConstantOp | graph.WeightOp)
            or (isinstance(v.owner, graph.GraphOp) and folded(v.owner, seen))
            for v in op.operands
        )
    return seen[op]


def has_macs(op: Operation, macs: Result) -> bool:
    """Whether `op` is one the analysis judges: one with multiply-adds, or with a
    count `macs` cannot give (an op without a rule may have some)."""
    counted = macs.by_op().get(op)
    return counted is not None and counted.values.get("macs") != 0


def verdicts(module: ModuleOp, spec: AccelSpec) -> dict[Operation, Chain | str]:
    """The chain or the reason (`fit_chain`) of each op the analysis judges, without
    its timing (so without a roofline): what the fused graph's picture colours by."""
    macs = AnalysisManager().run("macs", module)
    return {op: fit_chain(op, spec) for op in Accelerability(spec).ops(module) if has_macs(op, macs)}


@register_analysis
class Accelerability(Analysis):
    """Per op with multiply-adds: `accelerable`, the `reason` when not, its `macs`,
    its CPU time `cpu_s`; for an accelerable one the CPU time of its whole chain
    (`chain_cpu_s`), `accel_cycles` and `accel_s`. Totals: `macs_fraction` and
    Amdahl's `speedup` and `speedup_limit` (see the module doc)."""

    name = "accelerability"
    requires = ("macs", "roofline")

    def __init__(self, spec: AccelSpec | None = None, *, profile: Mapping[str, float] | None = None,
                 cycles: Callable[[Chain, AccelSpec], int] | None = None):  # fmt: skip
        self.spec = spec or default_spec()
        self.profile = dict(profile or {})
        self.cycles = cycles  # a chain's accelerator cycles (default: estimate_cycles)

    def ops(self, module):
        for op in super().ops(module):
            function = op.parent_op()
            while function is not None and not isinstance(function, func.FuncOp):
                function = function.parent_op()
            if function is None or TARGET_ATTR not in function.attributes:  # (already the accelerator's)
                yield op

    def cpu_seconds(self, op: Operation, deps: Mapping[str, Result]) -> float | None:
        """`op`'s CPU time: none if it reads only weights and constants (fold-constants
        computes it when compiling: a quantized weight's cast), else the profile's (by
        the op's label), else its roofline time."""
        if folded(op):
            return 0.0
        facts = deps["roofline"].by_op().get(op)
        label = facts.label if facts is not None else None
        if label in self.profile:
            return float(self.profile[label])
        return float(facts.values["roofline_s"]) if facts is not None else None  # type: ignore[arg-type]

    def map(self, op, deps: Mapping[str, Result]):
        if not has_macs(op, deps["macs"]):
            return None
        found = fit_chain(op, self.spec)
        macs = deps["macs"].by_op()[op].values["macs"]
        values: dict[str, object] = {"macs": macs, "cpu_s": self.cpu_seconds(op, deps)}
        if isinstance(found, str):
            return {"accelerable": False, "reason": found, **values}
        cycles = (self.cycles or estimate_cycles)(found, self.spec)
        chain_times = [self.cpu_seconds(o, deps) for o in found.ops]
        return {
            "accelerable": True,
            "reason": None,
            **values,
            "chain_cpu_s": None if None in chain_times else sum(chain_times),  # type: ignore[arg-type]
            "accel_cycles": cycles,
            "accel_s": self.spec.seconds(cycles),
        }

    def reduce(self, facts: Sequence[OpFacts], deps: Mapping[str, Result]) -> dict[str, object]:
        yes = [f.values for f in facts if f.values["accelerable"]]
        model_macs = deps["macs"].totals.get("macs", 0)
        accelerable_macs = sum(int(v["macs"]) for v in yes if isinstance(v["macs"], int))  # type: ignore[arg-type]
        cpu_times = [self.cpu_seconds(f.op, deps) for f in deps["roofline"].ops]
        cpu = sum(t for t in cpu_times if t is not None)
        timed = all(v["chain_cpu_s"] is not None for v in yes)
        freed = sum(float(v["chain_cpu_s"]) for v in yes if v["chain_cpu_s"] is not None)  # type: ignore[arg-type]
        accel = sum(float(v["accel_s"]) for v in yes)  # type: ignore[arg-type]
        rest = cpu - freed
        profiled = sum(1 for f in deps["roofline"].ops if f.label in self.profile)
        return {
            "spec": spec_name(self.spec),
            "compute_ops": len(facts),
            "accelerable_ops": len(yes),
            "macs": model_macs,
            "accelerable_macs": accelerable_macs,
            "macs_fraction": accelerable_macs / model_macs if isinstance(model_macs, int) and model_macs else 0.0,
            "cpu_s": cpu,
            "offloaded_cpu_s": freed,
            "accel_s": accel,
            "speedup": cpu / (rest + accel) if timed and rest + accel > 0 else None,
            "speedup_limit": cpu / rest if timed and rest > 0 else None,  # None: unbounded
            "cpu_time": "profile" if profiled == len(cpu_times) else "profile and roofline" if profiled else "roofline",
            "accel_time": "estimate, a lower bound" if self.cycles is None else "simulated",
        }


def report(result: Result) -> dict:
    """The result as JSON-able data: `{"totals": {...}, "ops": [{"name", "op", ...}]}`."""
    ops = [{"name": f.label, "op": f.op.name, **f.values} for f in result.ops]
    return {"totals": dict(result.totals), "ops": ops}


def _number(value: object, unit: str = "") -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}{unit}"
    return f"{value:,}{unit}" if isinstance(value, int) else str(value)


def text(data: dict, spec: AccelSpec) -> str:
    """`report`'s data as the lines `tilecraft-analyze --accel` prints."""
    totals = data["totals"]
    lines = [f"accelerability on {totals['spec']}: BATCH {spec.batch}, BLOCK {spec.block}, "
             f"{spec.macs_per_cycle} MACs a cycle at {spec.clock_mhz} MHz"]  # fmt: skip
    rows = [["name", "op", "macs", "accel", "cpu_s", "chain_cpu_s", "accel_s", "reason"]]
    for op in data["ops"]:
        rows.append([op["name"], op["op"], _number(op["macs"]) if op["macs"] is not None else "?",
                     "yes" if op["accelerable"] else "no", _number(op["cpu_s"]), _number(op.get("chain_cpu_s")),
                     _number(op.get("accel_s")), op["reason"] or ""])  # fmt: skip
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    for row in rows:
        cells = [cell.ljust(w) if k in (0, 1, 3, 7) else cell.rjust(w) for k, (cell, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    macs, share = totals["macs"], totals["macs_fraction"]
    lines.append(f"accelerable: {totals['accelerable_ops']} of {totals['compute_ops']} ops with multiply-adds, "
                 f"{_number(totals['accelerable_macs'])} of {_number(macs)} MACs ({share:.1%})")  # fmt: skip
    speedup, limit = totals["speedup"], totals["speedup_limit"]
    amdahl = (f"Amdahl: {_number(totals['cpu_s'], ' s')} on the CPU ({totals['cpu_time']}); the accelerator takes "
              f"{_number(totals['offloaded_cpu_s'], ' s')} of it in {_number(totals['accel_s'], ' s')} "
              f"({totals['accel_time']}): ")  # fmt: skip
    if speedup is None:
        amdahl += "speedup unknown (an offloaded op's CPU time is unknown)"
    else:
        amdahl += (
            f"speedup {_number(speedup, 'x')}, at most "
            f"{_number(limit, 'x') if limit is not None else 'unbounded'} with an infinitely fast accelerator"
        )
    lines.append(amdahl)
    return "\n".join(lines)
