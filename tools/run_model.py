"""`tilecraft-run model.onnx` (or a graph-level function of an IR file): compile a
whole model and run it (see tools/run.py).

Kept apart from the IR mode of tools/run.py, which it shares the command line
and the array helpers with (the error handling is every tool's: tools/errors.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from tilecraft.tools.errors import UserError, writing


def _feeds(args: argparse.Namespace, model) -> dict[str, np.ndarray]:
    """The model's inputs from `--input [NAME=]FILE.npy`, or random ones."""
    from tilecraft.tools.run import Argument, random_array, read_npy, refuse_symbolic

    specs = {name: Argument(name, shape, dtype) for name, shape, dtype in model.inputs}
    names = list(specs)
    if not args.input:
        refuse_symbolic(list(specs.values()), list(specs.values()),
                        "random inputs need sizes: give --input NAME=FILE.npy for each input, or")  # fmt: skip
        rng = np.random.default_rng(args.seed)
        return {n: random_array(specs[n], rng) for n in names}
    feeds: dict[str, np.ndarray] = {}
    positional = iter(names)
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep:
            path = item
            name = next((n for n in positional if n not in feeds), None)
            if name is None:
                raise UserError(f"more --input files than model inputs ({', '.join(names)})")
        elif name not in specs:
            raise UserError(f"the model has no input '{name}' (its inputs: {', '.join(names)})")
        if name in feeds:
            raise UserError(f"input '{name}' is given twice")
        feeds[name] = read_npy(path, f"input file '{path}' for input '{name}'")
    missing = [n for n in names if n not in feeds]
    if missing:
        raise UserError(f"missing input(s) {', '.join(missing)}; give --input NAME=FILE.npy for each")
    return feeds


def run_model(args: argparse.Namespace, module=None) -> int:
    """Compile and run the model `args.file`, or the graph-level `module` (a graph
    function of an IR file, alone in it)."""
    from tilecraft.runtime import compile as compile_model
    from tilecraft.tools.options import STATIC_SHAPES, input_shapes, tuning_lookup
    from tilecraft.tools.run import summarize

    if args.check:
        raise UserError("--check compares a te function with its reference; it does not apply to models")
    if args.entry is not None and module is None:
        raise UserError("--entry names a function of an IR file; a model has one entry")
    if module is not None and args.input_shape:
        raise UserError(STATIC_SHAPES)
    model = compile_model(
        module if module is not None else args.file,
        input_shapes=input_shapes(args.input_shape) or None,
        num_threads=args.num_threads,
        schedule_configs=tuning_lookup(args.tuning_log) if args.tuning_log else None,
    )
    feeds = _feeds(args, model)
    try:
        results = model(**feeds)
    except ValueError as e:  # the model's input checks: name, shape, dtype
        raise UserError(str(e)) from e
    results = results if isinstance(results, tuple) else (results,)
    if args.output and len(args.output) != len(results):
        raise UserError(f"the model has {len(results)} outputs, got {len(args.output)} --output files")
    for path, array in zip(args.output, results):
        with writing(path):
            np.save(path, array)
    if not args.output:
        for n, array in enumerate(results):
            print(summarize(f"output{n}", array))
    if args.bench:
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            model(**feeds)
            times.append(time.perf_counter() - start)
        print(
            f"latency: median {statistics.median(times) * 1e3:.3f} ms over {args.runs} runs "
            f"(min {min(times) * 1e3:.3f} ms); compiled in {model.compile_seconds:.2f} s, "
            f"{len(model.kernel_calls)} kernel calls, planned memory {model.planned_bytes} of "
            f"{model.naive_bytes} bytes"
            + (f", {len(model.tuned)} workload(s) tuned by the log" if args.tuning_log else ""),
            file=sys.stdout,
        )
    return 0
