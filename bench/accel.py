"""The accelerator on ResNet-18's conv layers: GEMM utilization with and without latency hiding.

Every conv layer of ResNet-18 after conv1 (batch 1, 224x224 input: 19 layers, 10
shapes) runs as int8 on the default spec (VTA's: BATCH 1, BLOCK 16, 256 MACs a cycle)
with its bias, relu and requantization to int8 on the ALU, scheduled by
`topi.accel_conv2d.conv2d_accel` (VTA's conv2d schedule: output tiles of 14x14 or 7x7
pixels and as many output-channel blocks as fit the accumulator (its default), the
padded input and the weights loaded per input-channel block, two virtual threads over
the output channels) and compiled by `tc.build(target="accel")`: inject-dma,
inject-virtual-threads, convert-loop-to-accel, insert-dependences. Each layer is
simulated twice, with the dependence flags that let loads overlap compute and with
`-force-serial` (modules take turns: the ablation), on random data, and every output is
compared with numpy's integer arithmetic (`conv2d_reference`).

Reported per layer: instructions, cycles, GEMM-busy cycles against the ideal (MACs /
256), utilization (GEMM-busy / total cycles) with and without hiding, and whether
the layer is compute-bound (its ideal GEMM cycles exceed the cycles its DMA traffic
needs at the spec's DMA rate). Totals weight each shape by how often ResNet-18 has
it; every one of the 19 layers is simulated (a repeated shape on new data).

Then the whole ResNet-18 (bench/models.py, random weights), quantized by
`tc.quantize` (one calibration input), runs through `tc.compile(q, target="accel")`:
its requantized conv+relu chains on the simulator, the rest on the CPU
(runtime/offload.py); `resnet18_offload_bit_exact` says whether its output equals the
numpy evaluation of the quantized graph (the int8 reference) bit for bit.

With `--tune T`, each shape is first tuned (autotune/accel_templates.py: the
`conv2d_accel` template's tiles, channel blocks and virtual threads, T trials measured
on the simulator in a worker, records appended to `--log`), and a table compares the
untuned default (what tc.compile(q, target="accel") uses without a log) with the best
config found, both measured: cycles, speedup, tuning minutes. The per-layer runs after
it are unchanged (the table's tiles).

Usage: python bench/accel.py [--layers N] [--tune T [--log FILE]]   (N: only the first N shapes)
The last line printed is one JSON object with the issue's keys.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import tilecraft as tc
from tilecraft.backends.accel.spec import default_spec
from tilecraft.topi import accel_conv2d as ac

# (name, in channels, out channels, input size, kernel, stride, pad, count, output tile)
LAYERS = [
    ("layer1 3x3 64>64 @56", 64, 64, 56, 3, 1, 1, 4, 14),
    ("layer2.0 3x3 64>128 s2", 64, 128, 56, 3, 2, 1, 1, 14),
    ("layer2 3x3 128>128 @28", 128, 128, 28, 3, 1, 1, 3, 14),
    ("layer2 down 1x1 64>128 s2", 64, 128, 56, 1, 2, 0, 1, 14),
    ("layer3.0 3x3 128>256 s2", 128, 256, 28, 3, 2, 1, 1, 14),
    ("layer3 3x3 256>256 @14", 256, 256, 14, 3, 1, 1, 3, 14),
    ("layer3 down 1x1 128>256 s2", 128, 256, 28, 1, 2, 0, 1, 14),
    ("layer4.0 3x3 256>512 s2", 256, 512, 14, 3, 2, 1, 1, 7),
    ("layer4 3x3 512>512 @7", 512, 512, 7, 3, 1, 1, 3, 7),
    ("layer4 down 1x1 256>512 s2", 256, 512, 14, 1, 2, 0, 1, 7),
]
SHIFT = 9
IDEAL_TOTAL_MACS = 1_695_547_392  # the figure for these 19 layers


def run_layer(rng, c, o, hw, k, stride, pad, count, tile, spec):
    s, args = ac.conv2d_accel((1, c, hw, hw), (o, c, k, k), (stride, stride), (pad,) * 4, SHIFT,
                              spec=spec, tile_h=tile, tile_w=tile, threads=2)
    start = time.perf_counter()
    hidden = tc.build(s, args, target="accel")
    serial = tc.build(s, args, target="accel -force-serial")
    build_seconds = time.perf_counter() - start
    row = {"instructions": len(hidden.program.instructions), "build_s": build_seconds, "exact": True,
           "cycles": 0, "serial_cycles": 0, "gemm_busy": 0, "sim_s": 0.0, "macs": 0, "dma_bytes": 0}
    for _ in range(count):
        x = rng.integers(-128, 128, (1, c, hw, hw)).astype("int8")
        w = rng.integers(-128, 128, (o, c, k, k)).astype("int8")
        bias = rng.integers(-(1 << 14), 1 << 14, o).astype("int32")
        inputs = (ac.pack_data(x, spec.batch, spec.block), ac.pack_kernel(w, spec.block, spec.block),
                  bias.reshape(o // spec.block, spec.batch, spec.block))
        expected = ac.conv2d_reference(x, w, (stride, stride), (pad,) * 4, shift=SHIFT, bias=bias, relu=True)
        out = np.zeros(args[3].shape, "int8")
        t = time.perf_counter()
        result = hidden(*inputs, out)
        row["sim_s"] += time.perf_counter() - t
        row["exact"] &= bool(np.array_equal(ac.unpack_result(out), expected))
        out2 = np.zeros_like(out)
        slow = serial(*inputs, out2)
        row["exact"] &= bool(np.array_equal(out2, out))
        stats = result.stats
        row["cycles"] += result.cycles
        row["serial_cycles"] += slow.cycles
        row["gemm_busy"] += stats.gemm_busy_cycles
        row["macs"] += stats.macs
        row["dma_bytes"] += sum(stats.bytes_loaded.values()) + sum(stats.bytes_stored.values())
    row["ideal"] = row["macs"] / spec.macs_per_cycle
    row["compute_bound"] = row["ideal"] >= row["dma_bytes"] / spec.dma_bytes_per_cycle
    return row


def tune_layers(layers, trials: int, log_path: str, spec) -> list[dict]:
    """Tune each shape's conv2d_accel workload; its default and best config, measured."""
    from tilecraft.autotune.measure import Job, LocalExecutor
    from tilecraft.autotune.records import TuningLog
    from tilecraft.autotune.templates import get_template, workload_key
    from tilecraft.autotune.tuner import tune

    template = get_template("conv2d_accel")
    log = TuningLog(log_path)
    rows = []

    def cycles(seconds: float) -> int:
        return round(seconds * spec.clock_mhz * 1e6)

    print(f"tuning {len(layers)} shapes, {trials} trials each (log {log_path})")
    print(f"{'layer':28} {'default':>11} {'tuned':>11} {'speedup':>7} {'errors':>6} {'minutes':>7}  best config")
    with LocalExecutor(1) as executor:
        for name, c, o, hw, k, stride, pad, _, _ in layers:
            params = ac.conv2d_params((1, c, hw, hw), (o, c, k, k), (stride, stride), (pad,) * 4, SHIFT, True, spec)
            start = time.perf_counter()
            best = tune("conv2d_accel", params, log, trials, executor, batch=8, repeat=1, timeout=600)
            minutes = (time.perf_counter() - start) / 60
            (default,) = executor.run([Job(template.measure_job, {"template": "conv2d_accel", "shape": list(params),
                                                                  "config": None, "repeat": 1}, 600)])
            if default.error is not None or best is None:
                raise SystemExit(f"{name}: {default.error or 'no config of the tuning run measured'}")
            errors = sum(r.error is not None for r in log.measured(workload_key("conv2d_accel", params), "accel").values())
            row = {"name": name, "default": cycles(default.costs[0]), "tuned": cycles(best.cost), "errors": errors,
                   "minutes": minutes, "config": best.config}
            rows.append(row)
            print(f"{name:28} {row['default']:11,d} {row['tuned']:11,d} {row['default'] / row['tuned']:7.2f} "
                  f"{errors:6d} {minutes:7.1f}  {json.dumps(best.config, sort_keys=True)}", flush=True)
    default_total, tuned_total = sum(r["default"] for r in rows), sum(r["tuned"] for r in rows)
    print(f"tuned/default cycles over the shapes: {tuned_total:,} / {default_total:,} "
          f"({default_total / tuned_total:.2f}x); tuning {sum(r['minutes'] for r in rows):.1f} minutes\n")
    return rows


def resnet18_offload(seed: int = 0) -> dict:
    from models import resnet18  # bench/models.py, beside this script

    from tilecraft.dialects.graph_reference import evaluate
    from tilecraft.driver.compile_model import graph_function
    from tilecraft.utils.weights import store_of

    rng = np.random.default_rng(seed)
    quantized = tc.quantize(resnet18(), [rng.standard_normal((1, 3, 224, 224)).astype(np.float32)])
    start = time.perf_counter()
    model = tc.compile(quantized, target="accel")
    compile_s = time.perf_counter() - start
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    start = time.perf_counter()
    got = model(x)
    run_s = time.perf_counter() - start
    expected = evaluate(graph_function(quantized), store_of(quantized), [x])[0]
    cycles = sum(s.cycles for s in model.stats if hasattr(s, "cycles"))
    return {"exact": bool(np.array_equal(got, expected)), "offloaded": model.offloaded, "steps": len(model.steps),
            "compile_s": compile_s, "run_s": run_s, "cycles": cycles}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=len(LAYERS))
    parser.add_argument("--tune", type=int, default=0, metavar="T", help="tune each shape with T trials first")
    parser.add_argument("--log", default="accel-tune.jsonl", help="the tuning log (--tune; resumed if it exists)")
    options = parser.parse_args()
    spec = default_spec()
    if options.tune:
        tune_layers(LAYERS[: options.layers], options.tune, options.log, spec)
    rng = np.random.default_rng(0)
    rows = []
    print(f"{'layer':28} {'n':>2} {'insns':>6} {'cycles':>11} {'GEMM/ideal':>10} {'util':>6} "
          f"{'serial':>6} {'speedup':>7} {'bound':>8} {'exact':>5} {'build s':>7} {'sim s':>6}")
    for name, c, o, hw, k, stride, pad, count, tile in LAYERS[: options.layers]:
        row = run_layer(rng, c, o, hw, k, stride, pad, count, tile, spec)
        row["name"], row["count"] = name, count
        rows.append(row)
        print(f"{name:28} {count:2d} {row['instructions']:6d} {row['cycles']:11,d} "
              f"{row['gemm_busy'] / row['ideal']:10.3f} {row['gemm_busy'] / row['cycles']:6.1%} "
              f"{row['gemm_busy'] / row['serial_cycles']:6.1%} {row['serial_cycles'] / row['cycles']:7.2f} "
              f"{'compute' if row['compute_bound'] else 'DMA':>8} {str(row['exact']):>5} "
              f"{row['build_s']:7.1f} {row['sim_s']:6.2f}", flush=True)
    bound = [r for r in rows if r["compute_bound"]] or rows
    total = {key: sum(r[key] for r in rows) for key in ("cycles", "serial_cycles", "gemm_busy", "ideal", "macs", "sim_s")}
    print(f"\nMACs simulated {total['macs']:,} (ResNet-18 after conv1: {IDEAL_TOTAL_MACS:,}); "
          f"ideal {total['ideal']:,.0f} cycles, GEMM busy {total['gemm_busy']:,} cycles")
    print(f"all layers: {total['cycles']:,} cycles with latency hiding, {total['serial_cycles']:,} without; "
          f"utilization {total['gemm_busy'] / total['cycles']:.1%} / {total['gemm_busy'] / total['serial_cycles']:.1%}")
    print(f"compute-bound layers ({len(bound)} shapes): utilization "
          f"{sum(r['gemm_busy'] for r in bound) / sum(r['cycles'] for r in bound):.1%}")
    whole = resnet18_offload()
    print(f"whole ResNet-18 (int8) via tc.compile(target='accel'): {whole['offloaded']} conv chains on the "
          f"accelerator, {whole['steps'] - whole['offloaded']} CPU parts; compile {whole['compile_s']:.1f} s, "
          f"run {whole['run_s']:.1f} s; bit-exact with the numpy int8 reference: {whole['exact']}")
    print(json.dumps({
        "bench": "accel",
        "gemm_utilization": round(sum(r["gemm_busy"] for r in bound) / sum(r["cycles"] for r in bound), 4),
        "utilization_no_hiding": round(sum(r["gemm_busy"] for r in bound) / sum(r["serial_cycles"] for r in bound), 4),
        "latency_hiding_speedup": round(total["serial_cycles"] / total["cycles"], 3),
        "gemm_cycles_over_ideal": round(total["gemm_busy"] / total["ideal"], 4),
        "bit_exact": all(r["exact"] for r in rows),
        "resnet18_offload_bit_exact": whole["exact"],
        "sim_seconds": round(total["sim_s"], 2),
    }))


if __name__ == "__main__":
    main()
