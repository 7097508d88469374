"""A model in the JIT against the same model saved and loaded back (its shared library).

For each network of bench/networks.py asked for (default: MobileNet-v2, which makes
many short parallel launches, so the parallel runtime's launch cost shows): compile
it once with `tilecraft.compile`, save it (`CompiledModel.save`), load it back
(`tilecraft.runtime.load`), check that both give the same output bit for bit, and
time both with `timed` of bench/timing.py (interleaved rounds, medians, a pause
before each block). The JIT runs parallel loops on the process's pool, the saved
library on a pool of its own, the same code (see backends/llvm/runtime.py).

`--runtimes pthread` adds a saved copy built with threads created and joined per
launch (the runtime before the pool), to compare.

The last line is JSON: {"network": {"jit_ms": .., "saved_ms": .., "saved_over_jit": ..,
"<runtime>_ms": ..}, ...}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tilecraft as tc  # noqa: E402
from networks import NETWORKS  # noqa: E402
from tilecraft.backends.llvm import emit  # noqa: E402
from timing import timed  # noqa: E402


def measure(name: str, runtimes: list[str], repeat: int, rounds: int) -> dict[str, float]:
    build, shape = NETWORKS[name]
    model = tc.compile(build())
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    reference = model(x)
    fns = {"jit": lambda: model(x)}
    with tempfile.TemporaryDirectory() as tmp:
        default = emit.AOT_RUNTIME
        try:
            for runtime in ["saved", *runtimes]:
                emit.AOT_RUNTIME = default if runtime == "saved" else runtime
                model.save(os.path.join(tmp, runtime))
                loaded = tc.runtime.load(os.path.join(tmp, runtime))
                if not np.array_equal(loaded(x), reference):
                    raise SystemExit(f"{name}: the model saved with '{runtime}' gives another output")
                fns[runtime] = (lambda m: lambda: m(x))(loaded)
        finally:
            emit.AOT_RUNTIME = default
        times = timed(fns, repeat=repeat, rounds=rounds)
    result = {f"{k}_ms": round(v * 1e3, 3) for k, v in times.items()}
    result["saved_over_jit"] = round(times["saved"] / times["jit"], 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default="mobilenet_v2", help="comma-separated, of bench/networks.py")
    parser.add_argument("--runtimes", default="", help="also save with these: pthread")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runtimes = [r for r in args.runtimes.split(",") if r]
    results = {}
    for name in args.networks.split(","):
        results[name] = measure(name, runtimes, args.repeat, args.rounds)
        row = results[name]
        others = "".join(f", {r} {row[f'{r}_ms']:.2f} ms" for r in runtimes)
        print(f"{name}: jit {row['jit_ms']:.2f} ms, saved {row['saved_ms']:.2f} ms "
              f"(x{row['saved_over_jit']:.2f}){others}", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
