"""`tilecraft-analyze`: what a model costs, op by op and in total, before it runs.

    tilecraft-analyze model.onnx|model.mlir [--analysis macs,bytes,...]
                      [--json F] [--csv F] [--input-shape x=1x3x224x224]
                      [--roofline F.png] [--machine DESCRIPTION.json]
                      [--accel SPEC.json|default] [--graph F.svg|F.png|F.dot]
                      [--level graph|loop] [--profile] [--dynamic]

prints a table (one row per op: its result's name, the op, and each analysis's
facts; then the totals) and writes it as JSON (`{"model", "totals", "ops",
"unknown"}`) or CSV. The analyses are those of `tilecraft.analysis` (the default:
op-histogram, macs, bytes, intensity, memory). An op no analysis can describe is listed
as unknown, never counted as zero. `--roofline` adds the `roofline` analysis and
draws the ops on the roofline of the machine `--machine` describes (else the host,
measured once: analysis/machine.py). `--accel` adds the `accelerability` analysis
for an accelerator spec (analysis/accelerability.py: per op, whether the
accelerator takes it or why not; the share of MACs; Amdahl's speedup) as a section
of its own and the JSON's "accelerability" key. `--graph` draws the fused graph
(analysis/fused_graph.py), coloured by accelerability with `--accel`. `--level
loop` runs loop-level analyses (default: loop-counts, memory-plan, cost-model) on the loop program the model
compiles to, one row per kernel (`--profile` adds their measured times, `--roofline`
then draws them); `--dynamic` runs the model once with counters
(runtime/counters.py) and checks them against loop-counts. Every error is one line
on stderr and exit code 1 (tools/errors.py).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tilecraft.tools.errors import ArgumentParser, UserError, add_traceback_option, run_tool, writing
from tilecraft.tools.options import add_input_shape_option, add_version_option, input_shapes

PROG = "tilecraft-analyze"
DEFAULT = ("op-histogram", "macs", "bytes", "intensity", "memory")
DEFAULT_LOOP = ("loop-counts", "memory-plan", "cost-model")
COLUMNS = ("calls", "iterations", "macs", "flops", "bytes_read", "bytes_written", "guards", "guards_taken",
           "predicted_s", "measured_s", "weights_bytes", "arena_bytes", "naive_bytes", "global_scratch_bytes",
           "local_scratch_bytes", "intensity", "live_bytes", "bound")  # fmt: skip


def make_arg_parser() -> ArgumentParser:
    parser = ArgumentParser(prog=PROG, description="What a model costs, op by op, as written.")
    parser.add_argument("model", help="an .onnx model or a graph-level .mlir file")
    parser.add_argument("--analysis",
                        help=f"the analyses to run, comma-separated (default: {','.join(DEFAULT)} at graph "
                        f"level, {','.join(DEFAULT_LOOP)} at loop level)")  # fmt: skip
    parser.add_argument("--level", choices=("graph", "loop"), default="graph",
                        help="graph: the model as written (default); loop: the loop program it compiles to, "
                        "kernel by kernel")  # fmt: skip
    parser.add_argument("--dynamic", action="store_true",
                        help="compile the model with counters in every block, run it once on random inputs "
                        "and show what it did, checked against the static loop-level counts")  # fmt: skip
    parser.add_argument("--json", help="write the results as JSON to this file")
    parser.add_argument("--csv", help="write one row per op as CSV to this file")
    parser.add_argument("--roofline", metavar="PNG",
                        help="draw the ops (at loop level: the kernels, where --profile measured them) on the "
                        "machine's roofline into this PNG")  # fmt: skip
    parser.add_argument("--profile", action="store_true",
                        help="at loop level: run the model on random inputs and add each kernel's measured time "
                        "(CompiledModel.profile) and the GFLOP/s it achieved")  # fmt: skip
    parser.add_argument("--machine", metavar="JSON",
                        help="a hardware description for the roofline and the cost model: name, peak_gflops, "
                        "bandwidth_gbs, and CPU fields (analysis/machine.py; default: the host, measured once)")  # fmt: skip
    parser.add_argument("--accel", metavar="SPEC",
                        help="report which ops the accelerator of this spec file ('default': VTA's) takes, "
                        "why not the others, and Amdahl's speedup")  # fmt: skip
    parser.add_argument("--graph", metavar="FILE",
                        help="draw the fused graph into FILE (.svg or .png with Graphviz's dot, else .dot), "
                        "coloured by fusion kind, or by accelerability with --accel")  # fmt: skip
    add_input_shape_option(parser)
    add_traceback_option(parser)
    add_version_option(parser)
    return parser


def report(model: str, results: dict) -> dict:
    """The results as one JSON-able object: totals, one entry per op, unknown ops."""
    rows: dict[object, dict] = {}
    totals: dict[str, object] = {}
    unknown: list[str] = []
    for name, result in results.items():
        if name == "op-histogram":
            totals["ops"] = result.totals
            continue
        if name == "accelerability":
            continue  # (a section of its own)
        totals |= result.totals
        unknown += result.unknown
        for facts in result.ops:
            row = rows.setdefault(facts.op, {"name": facts.label, "op": facts.op.name})
            row |= {k: v for k, v in facts.values.items() if k != "unknown"}
    position: dict[object, int] = {}
    if rows:  # the rows in program order, whichever analysis saw an op first
        top = next(iter(rows)).get_toplevel_object()  # type: ignore[attr-defined]
        position = {op: n for n, op in enumerate(top.walk())}
    ordered = [rows[op] for op in sorted(rows, key=lambda op: position.get(op, 0))]
    data = {"model": model, "totals": totals, "ops": ordered, "unknown": sorted(set(unknown))}
    if "accelerability" in results:
        from tilecraft.analysis import accelerability

        data["accelerability"] = accelerability.report(results["accelerability"])
    return data


def _cell(value) -> str:
    if value is None:
        return "?"
    if isinstance(value, float):
        return f"{value:.3g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def table(data: dict) -> str:
    columns = [c for c in COLUMNS if any(c in row for row in data["ops"]) or c in data["totals"]]
    lines = [["name", "op", *columns]]
    lines += [[row["name"], row["op"], *(_cell(row.get(c, "")) if c in row else "" for c in columns)] for row in data["ops"]]
    lines.append(["total", "", *(_cell(data["totals"].get(c)) if c in data["totals"] else "" for c in columns)])
    widths = [max(len(line[k]) for line in lines) for k in range(len(lines[0]))]
    text = ["  ".join(cell.ljust(w) if k < 2 else cell.rjust(w) for k, (cell, w) in enumerate(zip(line, widths)))
            for line in lines]  # fmt: skip
    if "peak_live_bytes" in data["totals"]:
        text.append(f"peak live bytes (activations): {_cell(data['totals']['peak_live_bytes'])}")
    if "ops" in data["totals"]:
        text.append("ops: " + ", ".join(f"{n} {op}" for op, n in data["totals"]["ops"].items()))
    text += [f"unknown: {u}" for u in data["unknown"]]
    return "\n".join(line.rstrip() for line in text)


def write_csv(path: str, data: dict) -> None:
    import csv

    columns = ["name", "op", *(c for c in COLUMNS if any(c in row for row in data["ops"]))]
    with writing(path), open(path, "w", newline="") as f:
        out = csv.DictWriter(f, columns, extrasaction="ignore")
        out.writeheader()
        out.writerows(data["ops"])


def run(args) -> None:
    import json

    from tilecraft.api import analyze

    if args.dynamic:
        run_dynamic(args)
        return
    chosen = args.analysis if args.analysis is not None else ",".join(DEFAULT_LOOP if args.level == "loop" else DEFAULT)
    names: list = [n.strip() for n in chosen.split(",") if n.strip()]
    if not names:
        raise UserError("--analysis names no analysis")
    if args.graph:
        from tilecraft.analysis.fused_graph import check_path

        check_path(args.graph)  # (before the work: a wrong suffix is known now)
    spec = None
    if args.accel or "accelerability" in names:
        from tilecraft.analysis.accelerability import Accelerability, accel_spec

        spec = accel_spec(args.accel)
    if args.profile and args.level != "loop":
        raise UserError("--profile measures kernels: use it with --level loop")
    machine = None
    if args.level == "loop" and (args.roofline or args.machine):
        from tilecraft.analysis.machine import host_machine, load_machine

        from tilecraft.analysis.cost_model import CostModel

        machine = load_machine(args.machine) if args.machine else host_machine()
        names = [CostModel(machine) if n == "cost-model" else n for n in names]  # (predicted for that machine)
    elif args.roofline or args.machine or spec is not None or "roofline" in names:
        from tilecraft.analysis.graph_costs import Roofline
        from tilecraft.analysis.machine import load_machine

        machine = load_machine(args.machine) if args.machine else None
        names = [n for n in names if n != "roofline"] + [Roofline(machine)]
        if "cost-model" in names:  # (predicted for the same machine)
            from tilecraft.analysis.cost_model import CostModel

            names = [CostModel(machine) if n == "cost-model" else n for n in names]
    if spec is not None:  # after the roofline it requires, so that it uses that machine's
        names = [n for n in names if n != "accelerability"] + [Accelerability(spec)]
    results = analyze(args.model, names, input_shapes=input_shapes(args.input_shape))
    data = report(args.model, results)
    if args.profile:
        measure_kernels(args, data)
    print(table(data))
    if spec is not None:
        from tilecraft.analysis import accelerability

        print(accelerability.text(data["accelerability"], spec))
    if args.json:
        with writing(args.json), open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    if args.csv:
        write_csv(args.csv, data)
    if args.roofline and args.level == "loop":
        plot_kernels(args.roofline, data, machine)
    elif args.roofline:
        plot_roofline(args.roofline, results)
    if args.graph:
        draw_graph(args, spec)


def draw_graph(args, spec) -> None:
    """The fused graph of the model into `args.graph` (analysis/fused_graph.py)."""
    from tilecraft.analysis.accelerability import verdicts
    from tilecraft.analysis.fused_graph import to_dot, write_graph
    from tilecraft.driver.context import make_context
    from tilecraft.pipelines.compile_model import fused_module
    from tilecraft.driver.compile_model import load_model

    module = load_model(args.model, input_shapes(args.input_shape))
    judged = verdicts(module, spec) if spec is not None else None  # on the model as written
    with writing(args.graph):
        note = write_graph(args.graph, to_dot(fused_module(make_context(), module), judged))
    if note:
        print(f"{PROG}: note: {note}", file=sys.stderr)


def random_inputs(model) -> dict:
    """Inputs for `model`: standard normal floats, zero integers (valid indices)."""
    import numpy as np

    rng = np.random.default_rng(0)
    return {name: (rng.standard_normal(shape).astype(dtype) if np.issubdtype(dtype, np.floating)
                   else np.zeros(shape, dtype)) for name, shape, dtype in model.inputs}  # fmt: skip


def measure_kernels(args, data: dict) -> None:
    """Each kernel row gets `measured_s` (per call, as `predicted_s`: the mean of
    its calls' medians) and `gflops` (its loop-level FLOPs per call over that time);
    the totals, the model's time (every call's)."""
    import statistics

    from tilecraft.runtime.compile import compile as compile_model

    model = compile_model(args.model, input_shapes=input_shapes(args.input_shape))
    measured: dict[str, list[float]] = {}
    for kernel, seconds in model.profile(**random_inputs(model)):
        measured.setdefault(kernel, []).append(seconds)
    for row in data["ops"]:
        times = measured.get(row["name"])
        if times:
            row["measured_s"] = statistics.mean(times)
            if isinstance(row.get("flops"), int) and row["measured_s"] > 0:
                row["gflops"] = row["flops"] / len(times) / row["measured_s"] / 1e9
    data["totals"]["measured_s"] = sum(sum(t) for t in measured.values())


def plot_kernels(path: str, data: dict, machine) -> None:
    """The kernels at (FLOPs per byte loaded or stored, GFLOP/s) under the machine's
    roofs (main memory's and each cache level's): measured (--profile) where they
    were, else as the cost model predicts. The bytes are those the loop program
    loads and stores, before LLVM keeps values in registers: a kernel above a roof
    reuses what it loaded in registers."""
    fig, ax = _roofline_axes(machine.peak_gflops, machine.bandwidth_gbs, machine.name)
    # Most loads of a tiled kernel hit a cache: its roof is that level's (per core, x cores).
    cores = machine.cores or 1
    for level, cache in zip(machine.level_names, machine.caches or ()):
        _roof(ax, machine.peak_gflops, cache.bandwidth_gbs * (1 if cache.shared else cores),
              linewidth=0.8, linestyle="--", label=level)  # fmt: skip
    for row in data["ops"]:
        flops, moved = row.get("flops"), (row.get("bytes_read") or 0) + (row.get("bytes_written") or 0)
        seconds, measured = (row["measured_s"], True) if "measured_s" in row else (row.get("predicted_s"), False)
        if not isinstance(flops, int) or not flops or not moved or not seconds or not row.get("calls"):
            continue
        ax.scatter([flops / moved], [flops / row["calls"] / seconds / 1e9], alpha=0.6,
                   color="tab:red" if measured else "tab:gray")  # fmt: skip
    ax.set_xlabel("FLOPs per byte loaded or stored (loop level)")
    ax.set_ylabel("GFLOP/s " + ("measured" if any("measured_s" in r for r in data["ops"]) else "predicted"))
    ax.legend(fontsize="small")
    _save(fig, path)


def _roofline_axes(peak: float, bandwidth: float, name: str):
    """A figure with log axes, titled with the machine, and its main-memory roof."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    _roof(ax, peak, bandwidth, color="black", linewidth=1, label="DRAM")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(f"{name}: {peak:.0f} GFLOP/s, {bandwidth:.1f} GB/s")
    return fig, ax


def _roof(ax, peak: float, bandwidth: float, **style) -> None:
    at = [0.01, peak / bandwidth, 1000.0]
    ax.plot(at, [min(peak, bandwidth * x) for x in at], **style)


def _save(fig, path: str) -> None:
    import matplotlib.pyplot as plt

    with writing(path):
        fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def run_dynamic(args) -> None:
    """Compile with counters, run once on random inputs, print the counts per
    kernel and whether they equal the static analysis's, block by block."""
    import json


    from tilecraft.runtime.compile import compile as compile_model

    model = compile_model(args.model, input_shapes=input_shapes(args.input_shape))
    counts = model.counters(**random_inputs(model))
    kernels = counts.kernels()
    rows = [{"name": name, "op": "func.func"} | {k: v for k, v in row.items() if k != "buffers"}
            for name, row in kernels.items() if row.get("calls")]  # fmt: skip
    totals = {k: v for k, v in counts.totals().items() if k != "calls"}
    mismatches = counts.mismatches()
    data = {"model": args.model, "totals": totals, "ops": rows, "unknown": [],
            "dynamic": {"equal_static": not mismatches, "blocks": len(counts.blocks), "mismatches": mismatches,
                        "buffers": {name: row["buffers"] for name, row in kernels.items() if row.get("calls")}}}  # fmt: skip
    print(table(data))
    if not mismatches:
        print(f"dynamic counts (random inputs): equal to the static loop-counts in all {len(counts.blocks)} blocks")
    else:
        print(f"dynamic counts (random inputs): differ from the static loop-counts in {len(mismatches)} of "
              f"{len(counts.blocks)} blocks:")  # fmt: skip
    for line in mismatches[:10]:
        print(f"  {line}")
    if args.json:
        with writing(args.json), open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    if args.csv:
        write_csv(args.csv, data)


def plot_roofline(path: str, results: dict) -> None:
    """The ops at (intensity, attainable GFLOP/s) under the machine's roofs, each a
    dot as large as its share of the FLOPs, coloured by what bounds it."""
    from tilecraft.analysis.graph_costs import flops_and_bytes

    roof = results["roofline"]
    fig, ax = _roofline_axes(roof.totals["peak_gflops"], roof.totals["bandwidth_gbs"], roof.totals["machine"])
    total = max(1, int(results["macs"].totals.get("flops") or 1))
    for f in roof.ops:
        value, moved = flops_and_bytes(f.op, results) or (0, 0)
        if not isinstance(value, int) or not value:
            continue  # (it moves data only: no point on a FLOP/s axis)
        intensity = value / max(1, moved)
        ax.scatter([max(intensity, 0.01)], [max(float(f.values["attainable_gflops"]), 1e-3)],  # type: ignore[arg-type]
                   s=10 + 400 * value / total, alpha=0.6,
                   color="tab:red" if f.values["bound"] == "compute" else "tab:blue")  # fmt: skip
    ax.set_xlabel("intensity (FLOPs per byte moved)")
    ax.set_ylabel("attainable GFLOP/s")
    _save(fig, path)


def main(argv: Sequence[str] | None = None) -> int:
    args = make_arg_parser().parse_args(argv)
    return run_tool(PROG, lambda: run(args), argv)


if __name__ == "__main__":
    sys.exit(main())
