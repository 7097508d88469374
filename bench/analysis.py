"""How long the static analyses take, and what they find, on the zoo's models.

For each model (the onnx package's zoo graphs with random weights; ResNet-50 is the
issue's target: all static analyses in at most 2 s): the import (ONNX to graph IR,
timed apart), then every registered graph-level analysis run by a fresh
`AnalysisManager` (median of `--repeat` runs: the host's one-time roofline probe
falls in the first), and the model's MACs, FLOPs and
weight bytes. The MACs are checked against ONNX's own shape inference and the
formulas of tests/pytest/test_analysis.py (conv N*K*C/groups*R*S*P*Q, gemm M*N*K):
a difference prints WRONG and exits 1.

Usage: python bench/analysis.py [--models resnet50,squeezenet,...] [--repeat N]
The last line printed is one JSON object:
`{"bench": "analysis", "resnet50_static_s", "cost_model_spearman",
"dynamic_equals_static", "instrumented_overhead", "models": {...}}`; the cost model
and the instrumented (dynamic) analyses are not built yet, so their keys are null.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "pytest"))


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,squeezenet,googlenet,densenet121,shufflenet")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    models = {}
    print(f"{'model':12} {'import s':>9} {'static s':>9} {'GMACs':>8} {'GFLOPs':>8} {'weights MB':>11}  check")
    for name in args.models.split(","):
        m = models[name] = measure(name, args.repeat)
        check = "ok" if m["macs_match_onnx"] else "WRONG"
        print(f"{name:12} {m['import_s']:9.2f} {m['static_s']:9.3f} {m['macs'] / 1e9:8.3f} "
              f"{m['flops'] / 1e9:8.3f} {m['weights_bytes'] / 1e6:11.1f}  {check}")  # fmt: skip
    resnet = models.get("resnet50", {}).get("static_s")
    print(json.dumps({
        "bench": "analysis",
        "resnet50_static_s": resnet,
        "cost_model_spearman": None,
        "dynamic_equals_static": None,
        "instrumented_overhead": None,
        "models": models,
    }))  # fmt: skip
    return 0 if all(m["macs_match_onnx"] for m in models.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
