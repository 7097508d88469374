"""`tilecraft-run`: compile a model, or one function of an IR file, and run it on arrays.

    tilecraft-run model.onnx --input x=x.npy --output y.npy [--bench]
    tilecraft-run model.onnx --input-shape x=1x3x224x224 --tuning-log tune.jsonl
    tilecraft-run matmul.mlir --entry matmul --input a.npy --input b.npy --output c.npy
    tilecraft-run matmul.mlir --entry matmul --seed 1 --check
    tilecraft-run model.mlir --entry main --input x=x.npy      # graph IR: a model

An ONNX model is compiled whole (`tilecraft.compile`): `--input NAME=FILE.npy` names
the model input each file is for (a plain `FILE.npy` takes the next input in
order; without any, inputs are random from `--seed`); `--output` saves the outputs
in order; `--bench` also prints the median latency over `--runs` calls.
`--input-shape NAME=1x3x224x224` fixes an input's dynamic dimensions and
`--tuning-log` applies a tilecraft-tune log, as tilecraft-tune and tilecraft-opt
spell them (tools/options.py).

A graph-level function (graph dialect ops, as tilecraft-import writes) is a model:
it is compiled whole and run as an ONNX file is. Otherwise the file holds a te
function (with its schedule, lowered to loops here) or a loop-level function
(a model's `@main` after the whole pipeline takes its weights from the weight
store the module names). The compiled function takes its inputs first and its outputs
after, all as arrays: inputs come from `.npy` files (or are random, from `--seed`),
outputs start zeroed and are printed or saved with `--output`.

For a te function, the inputs are its arguments and the outputs its results. A
loop-level function only has buffers: its inputs are the leading ones up to the
last buffer it only reads (each needs an `--input` file, or all are random), and
any more that `--input` fills (an accumulator's start); the rest are its outputs.
What it writes is shown or saved: its outputs and the inputs it updates.

`--check` evaluates the te function with the numpy reference evaluator on the same
inputs and compares, so a schedule that changes the result is caught.

Bad input (IR, arrays, command line) gives one error on stderr and exit code 1; a
bug in tilecraft gives a one-line internal error and exit code 2 (`--traceback`
prints the Python traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilecraft.dialects.te import ComputeOp
from tilecraft.tools.errors import ArgumentParser, UserError, add_traceback_option, run_tool, writing
from tilecraft.tools.options import (
    STATIC_SHAPES,
    add_input_shape_option,
    add_tuning_log_option,
    add_version_option,
)

if TYPE_CHECKING:  # numpy is imported where arrays are made: a command that stops
    import numpy as np  # at its command line or its IR does not pay for it

PROG = "tilecraft-run"

@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


# Like np.testing.assert_allclose: |actual - expected| <= atol + rtol * |expected|.
# By the dtype's name (numpy's float16, float32, float64).
TOLERANCES = {
    "float16": Tolerance(rtol=1e-2, atol=1e-3),
    "float32": Tolerance(rtol=1e-4, atol=1e-5),
    "float64": Tolerance(rtol=1e-9, atol=1e-12),
}
EXACT = Tolerance(rtol=0.0, atol=0.0)


@dataclass(frozen=True)
class Argument:
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype

    def describe(self) -> str:
        return f"{self.shape} {self.dtype}"


# -- the command line ---------------------------------------------------------


def make_arg_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="Compile a model (ONNX, or graph-level IR) or a te or loop function of an IR file "
        "for the CPU and run it on arrays.",
    )
    parser.add_argument("file", help="an ONNX model (.onnx), or an IR file (.mlir) with te or loop functions")
    parser.add_argument("--entry", help="the function of an IR file to run (required for .mlir)")
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="[NAME=]FILE.npy",
        help="an input array, once per input in argument order, or NAME=FILE.npy for a "
        "model input (default: random)",
    )
    parser.add_argument(
        "--output",
        action="append",
        default=[],
        metavar="FILE.npy",
        help="save an output array, once per output (default: print a summary)",
    )
    add_input_shape_option(parser)
    add_tuning_log_option(parser)
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare the outputs with the numpy reference evaluation of the te function",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs (default 0)"
    )
    parser.add_argument(
        "--bench", action="store_true", help="models: print the median latency over --runs calls"
    )
    parser.add_argument("--runs", type=int, default=50, help="calls timed by --bench (default 50)")
    parser.add_argument(
        "--num-threads",
        type=int,
        default=None,
        help="threads for parallel loops (default: OMP_NUM_THREADS, else the CPUs this "
        "process may run on)",
    )
    add_traceback_option(parser)
    add_version_option(parser)
    return parser


# -- arrays -----------------------------------------------------------------


def max_array_bytes() -> int:
    """The most bytes tilecraft-run allocates for one random input or output:
    half the machine's memory (filling more would swap or meet the OOM killer
    before numpy could raise MemoryError)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (AttributeError, ValueError, OSError):
        return 1 << 32


def check_size(arg: Argument, what: str) -> None:
    """A user error, naming the argument and its size, for an array too large to
    allocate (rather than numpy's MemoryError, or an overflowing size)."""
    count = 1
    for extent in arg.shape:
        count *= extent
    size, limit = count * arg.dtype.itemsize, max_array_bytes()
    if size > limit:
        raise UserError(
            f"{what} '{arg.name}' is {arg.describe()}: {size / 2**30:.3g} GiB, more than "
            f"tilecraft-run allocates ({limit / 2**30:.3g} GiB, half this machine's memory); "
            "give smaller shapes"
        )


def allocate(make, arg: Argument, what: str) -> np.ndarray:
    check_size(arg, what)
    try:
        return make()
    except MemoryError:
        raise UserError(f"not enough memory for {what} '{arg.name}' ({arg.describe()})") from None


def random_array(arg: Argument, rng: np.random.Generator) -> np.ndarray:
    return allocate(lambda: _random_array(arg, rng), arg, "the random input")


def refuse_symbolic(arguments: list[Argument], inputs: list[Argument], why: str) -> None:
    """A UserError where an argument has sizes known only when the function runs
    (tilecraft-run cannot make or show arrays of them): `why`, and how to fix them."""
    symbolic = [a for a in arguments if not all(isinstance(d, int) for d in a.shape)]
    if not symbolic:
        return
    names = sorted({str(d) for a in symbolic for d in a.shape if not isinstance(d, int)})
    example = [a for a in inputs if a in symbolic] or symbolic
    dims = [[d if isinstance(d, int) else 1 for d in a.shape] for a in example]
    given = ", ".join(f"'{a.name}': ({', '.join(map(str, d))}{',' if len(d) == 1 else ''})" for a, d in zip(example, dims))
    flags = " ".join(f"--input-shape {a.name}={'x'.join(map(str, d))}" for a, d in zip(example, dims))
    raise UserError(
        f"'{example[0].name}' has sizes known only when it runs ({', '.join(names)}); {why} fix them "
        f"with input_shapes={{{given}}} or the tools' {flags}"
    )


def _random_array(arg: Argument, rng: np.random.Generator) -> np.ndarray:
    import numpy as np

    if arg.dtype == np.bool_:
        return rng.integers(0, 2, size=arg.shape).astype(np.bool_)
    if np.issubdtype(arg.dtype, np.integer):
        return rng.integers(-8, 8, size=arg.shape).astype(arg.dtype)
    return rng.standard_normal(size=arg.shape).astype(arg.dtype)


def read_npy(path: str, where: str) -> np.ndarray:
    """The one array of a .npy file; `where` names it in the errors."""
    import numpy as np

    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise UserError(f"cannot read {where}: {e}") from e
    if not isinstance(array, np.ndarray):
        raise UserError(f"{where} holds several arrays (.npz); give one .npy per input")
    return array


def load_input(path: str, arg: Argument) -> np.ndarray:
    import numpy as np

    where = f"input file '{path}' for argument '{arg.name}'"
    array = read_npy(path, where)
    if array.shape == () and arg.shape == (1,):  # a model's scalar, at the loop level
        array = array.reshape(1)
    if array.shape != arg.shape or array.dtype != arg.dtype:
        raise UserError(
            f"{where} holds a {array.shape} {array.dtype} array; "
            f"'{arg.name}' is {arg.describe()}"
        )
    return np.ascontiguousarray(array)


def summarize(name: str, array: np.ndarray, count: int = 8) -> str:
    import numpy as np

    flat = array.ravel()
    head = np.array2string(flat[:count], precision=6, separator=", ")
    more = f" ... ({flat.size} values)" if flat.size > count else ""
    return f"{name}: {array.shape} {array.dtype} {head}{more}"


def compare(name: str, actual: np.ndarray, expected: np.ndarray) -> tuple[bool, str]:
    """Whether `actual` matches `expected` within the dtype's tolerance, and a report."""
    import numpy as np

    tol = TOLERANCES.get(actual.dtype.name, EXACT) if actual.dtype.isnative else EXACT
    if actual.shape != expected.shape:
        return False, f"{name}: shape {actual.shape}, the reference has {expected.shape}"
    a = actual.astype(np.float64) if actual.dtype != np.bool_ else actual.astype(np.int8)
    e = expected.astype(np.float64) if expected.dtype != np.bool_ else expected.astype(np.int8)
    with np.errstate(invalid="ignore"):
        err = np.abs(a - e)
        bad = ~(err <= tol.atol + tol.rtol * np.abs(e))
    # NaN where the reference has NaN too is a match.
    bad &= ~(np.isnan(a) & np.isnan(e))
    finite = err[np.isfinite(err)]
    max_err = float(finite.max()) if finite.size else 0.0
    if not bad.any():
        return True, f"{name}: max abs err {max_err:.3g}"
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    return False, (
        f"{name}: {int(bad.sum())} of {bad.size} elements differ "
        f"(rtol {tol.rtol:g}, atol {tol.atol:g}); max abs err {max_err:.3g}; "
        f"first at {first}: got {actual[first]!r}, expected {expected[first]!r}"
    )


# -- the program ----------------------------------------------------------------


def bind_weights(module: ModuleOp, specs, weights: dict[int, str]) -> dict[int, np.ndarray]:
    """The arrays of the `tc.weight` arguments, from the module's weight store."""
    if not weights:
        return {}
    import numpy as np

    from tilecraft.utils.weights import WeightError, store_of

    try:
        store = store_of(module)
        if store is None:
            raise WeightError("the module names no weight store (attribute graph.weights)")
        bound = {}
        for n, name in weights.items():
            array = np.asarray(store[name])
            spec = specs[n]
            if array.size != int(np.prod(spec.shape)):
                raise WeightError(
                    f"weight '{name}' holds {array.shape}, argument #{n + 1} takes {tuple(spec.shape)}"
                )
            bound[n] = np.ascontiguousarray(array.reshape(spec.shape), dtype=spec.dtype)
        return bound
    except WeightError as e:
        raise UserError(str(e)) from None


def functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, func.FuncOp) and not op.is_declaration
    }


def find_entry(module: ModuleOp, entry: str) -> func.FuncOp:
    found = functions(module)
    declared = [op for op in module.ops if isinstance(op, func.FuncOp) and op.is_declaration]
    if any(op.sym_name.data == entry for op in declared):
        raise UserError(f"@{entry} is a declaration (it has no body); there is nothing to run")
    if entry not in found:
        listed = ", ".join(f"@{n}" for n in found) or "none"
        raise UserError(f"no function @{entry} in the file (its functions: {listed})")
    return found[entry]


def loop_inputs(specs, weights: dict[int, str], given: int) -> int:
    """How many leading (non-weight) arguments of a loop function are inputs: at
    least every buffer it only reads, and as many as `--input` files fill (a buffer
    it also writes may be given, as an accumulator's start). A buffer the function
    reads must never be taken for an output: it would be zeroed, and the result
    computed from zeros."""
    buffers = [s for n, s in enumerate(specs) if n not in weights]
    read_only = [n for n, s in enumerate(buffers) if not s.output]
    return max(given, read_only[-1] + 1 if read_only else 0)


def run(args: argparse.Namespace) -> int:
    from tilecraft.driver import context as compiler

    module = compiler.parse_file(args.file)
    entry = find_entry(module, args.entry)
    if any(op.name.startswith("graph.") for op in entry.walk()):
        # A graph function is a model: compiled whole, run like an ONNX file.
        from tilecraft.tools.run_model import run_model
        from tilecraft.utils.weights import ATTR

        alone = ModuleOp([entry.clone()])
        if ATTR in module.attributes:
            alone.attributes[ATTR] = module.attributes[ATTR]
        return run_model(args, alone)
    if args.input_shape:
        raise UserError(STATIC_SHAPES)
    if args.tuning_log:
        raise UserError(
            f"--tuning-log applies to models (ONNX, or graph-level IR); @{args.entry} is a "
            "te or loop function, scheduled as written"
        )
    entry_is_te = any(isinstance(op, ComputeOp) for op in entry.walk())
    if entry_is_te and not entry.function_type.outputs.data:
        raise UserError(
            f"@{args.entry} returns nothing, so it computes nothing: a te function's results "
            "are the tensors it computes (func.return them)"
        )
    if args.check and not entry_is_te:
        raise UserError(f"--check needs a te function; @{args.entry} is loop-level IR")
    import numpy as np

    # A te function's arguments are its inputs; a loop function's are the --input ones.
    n_inputs = len(entry.body.block.args) if entry_is_te else len(args.input)
    # Lowering rewrites the module in place: keep the te function for --check.
    reference_func = entry.clone() if args.check else None
    if compiler.has_te(module):
        compiler.lower_to_loops(module)

    from tilecraft.driver.kernels import compile_loop_module

    compiled = compile_loop_module(module, num_threads=args.num_threads)[args.entry]
    # A model's graph function takes its weights too: bound from the weight store.
    weights = {n: s.weight for n, s in enumerate(compiled.specs) if s.weight is not None}
    arguments = [
        Argument(s.name, tuple(s.shape), np.dtype(s.dtype))
        for n, s in enumerate(compiled.specs)
        if n not in weights
    ]
    written = [s.output for n, s in enumerate(compiled.specs) if n not in weights]
    if not entry_is_te:
        n_inputs = loop_inputs(compiled.specs, weights, len(args.input))
    inputs_args, output_args = arguments[:n_inputs], arguments[n_inputs:]
    # What the run shows or saves: the outputs, and the inputs a loop function
    # updates in place (an accumulator given with --input).
    shown = [n for n in range(len(arguments)) if n >= n_inputs or written[n]]
    shown_args = [arguments[n] for n in shown]
    bound = bind_weights(module, compiled.specs, weights)

    refuse_symbolic(arguments, inputs_args, "tilecraft-run takes static shapes of IR functions:")
    if args.input and len(args.input) != len(inputs_args):
        names = ", ".join(a.name for a in inputs_args)
        missing = inputs_args[len(args.input) :]
        raise UserError(
            f"@{args.entry} takes {len(inputs_args)} inputs ({names}), "
            f"got {len(args.input)} --input files"
            + (f": missing {', '.join(a.name for a in missing)}" if missing else "")
        )
    if args.output and len(args.output) != len(shown_args):
        names = ", ".join(a.name for a in shown_args)
        raise UserError(
            f"@{args.entry} has {len(shown_args)} outputs ({names}), "
            f"got {len(args.output)} --output files"
        )

    if args.input:
        inputs = [load_input(path, a) for path, a in zip(args.input, inputs_args)]
    else:
        rng = np.random.default_rng(args.seed)
        inputs = [random_array(a, rng) for a in inputs_args]
    outputs = [allocate(lambda a=a: np.zeros(a.shape, a.dtype), a, "the output") for a in output_args]

    arrays = [*inputs, *outputs]
    results = [arrays[n] for n in shown]
    for n in sorted(bound):
        arrays.insert(n, bound[n])
    compiled(*arrays)

    for path, array in zip(args.output, results):
        with writing(path):
            np.save(path, array)
    if not args.output:
        for a, array in zip(shown_args, results):
            print(summarize(a.name, array))

    if reference_func is None:
        return 0
    from tilecraft.backends.reference import evaluate

    expected = evaluate(reference_func, inputs)
    reports = [compare(a.name, x, e) for a, x, e in zip(output_args, outputs, expected)]
    if all(ok for ok, _ in reports):
        details = "; ".join(text for _, text in reports)
        print(f"check: OK ({details})")
        return 0
    print("check: MISMATCH", file=sys.stderr)
    for ok, text in reports:
        print(f"  {'ok' if ok else 'WRONG'} {text}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = make_arg_parser()
    args = parser.parse_args(argv)
    is_model = args.file.endswith(".onnx")
    if not is_model and args.entry is None:
        parser.error("the following arguments are required: --entry")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.num_threads is not None and args.num_threads < 1:
        parser.error(f"--num-threads must be a positive integer, got {args.num_threads}")
    if args.seed < 0:
        parser.error(f"--seed must be a non-negative integer, got {args.seed}")

    def body() -> int:
        if is_model:
            from tilecraft.tools.run_model import run_model

            return run_model(args)
        return run(args)

    return run_tool(PROG, body, argv)


if __name__ == "__main__":
    sys.exit(main())
