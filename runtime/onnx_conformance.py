"""The ONNX backend conformance suite run on tilecraft: the node cases of
`onnx.backend.test` (the cases `BackendTest` generates, with their inputs, outputs and
tolerances) and the pytorch-converted / pytorch-operator / simple model cases shipped
in the onnx package, each compiled with `TilecraftBackend` and compared the way
`BackendTest` compares (`Runner.assert_similar_outputs`).

Every case ends in one of:
- `pass`: same shapes, dtypes and values within the case's tolerances;
- `unsupported`: the importer refused it with an `OnnxImportError` naming the operator,
  attribute or element type;
- `rejected`: another tilecraft diagnostic (an `OpError` from a pass);
- `wrong`: compiled and ran but the outputs differ — a bug;
- `error`: any other exception — a bug.

`python -m tilecraft.runtime.onnx_conformance` prints the per-operator table and, as
its last line, a JSON summary; it exits 1 on a wrong answer or an internal error.
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import time
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
import onnx

KINDS = ("node", "pytorch-converted", "pytorch-operator", "simple")
OUTCOMES = ("pass", "unsupported", "rejected", "wrong", "error")

# Operators left out of the suite, by reason (the exclusions).
EXCLUDED_OPS = {
    "training operator": {"Adagrad", "Adam", "Momentum", "Gradient"},
    "random generator": {"RandomNormal", "RandomNormalLike", "RandomUniform",
                         "RandomUniformLike", "Bernoulli", "Multinomial"},
    "image decoding": {"ImageDecoder"},
    "data-dependent output shape": {"NonZero", "Unique", "Compress",
                                    "NonMaxSuppression", "Loop"},
}
EXCLUDED_NAMES = {
    # Dropout in training mode draws a random mask.
    "random generator": re.compile(r"^test_training_dropout"),
}
NON_TENSOR_OPS = re.compile(r"Sequence|Optional|StringConcat|StringSplit|StringNormalizer"
                            r"|RegexFullMatch|ConcatFromSequence")


@dataclass
class Case:
    name: str
    kind: str
    operator: str
    model: onnx.ModelProto
    data_sets: list = field(default_factory=list)  # [(inputs, outputs)]
    rtol: float = 1e-3
    atol: float = 1e-7


@dataclass
class Result:
    case: str
    operator: str
    outcome: str
    message: str = ""
    seconds: float = 0.0


def _all_ops(model: onnx.ModelProto) -> set[str]:
    ops = set()

    def walk(graph):
        for node in graph.node:
            ops.add(node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                for g in attr.graphs:
                    walk(g)

    walk(model.graph)
    ops.update(f.name for f in model.functions)
    return ops


def _non_tensor(value: onnx.ValueInfoProto) -> bool:
    t = value.type
    if t.WhichOneof("value") != "tensor_type":
        return True
    return t.tensor_type.elem_type == onnx.TensorProto.STRING


def exclusion(case: Case) -> str | None:
    """Why `case` is left out of the suite, or None."""
    ops = _all_ops(case.model)
    for reason, names in EXCLUDED_OPS.items():
        if ops & names:
            return f"{reason} ({', '.join(sorted(ops & names))})"
    for reason, pattern in EXCLUDED_NAMES.items():
        if pattern.search(case.name):
            return reason
    if any(d.domain == "ai.onnx.preview.training" for d in case.model.opset_import):
        return "training operator"
    graph = case.model.graph
    if any(_non_tensor(v) for v in [*graph.input, *graph.output]) or any(
        NON_TENSOR_OPS.search(op) for op in ops
    ):
        return "sequence, optional, map or string type"
    return None


def _operator_names(cases: list) -> dict[str, str]:
    """The operator each node case tests: the op of a one-node case; an `_expanded`
    case (the operator's function body) counts for the operator it expands."""
    base = {}
    for c in cases:
        nodes = c.model.graph.node
        if len(nodes) == 1:
            base[c.name] = nodes[0].op_type
    names = {}
    for c in cases:
        stem = re.sub(r"_expanded.*$", "", c.name)
        if c.name in base:
            names[c.name] = base[c.name]
        elif stem in base:
            names[c.name] = base[stem]
        else:
            names[c.name] = "+".join(sorted(_all_ops(c.model)))
    return names


def _load_model_dir(test) -> tuple[onnx.ModelProto, list]:
    model = onnx.load(os.path.join(test.model_dir, "model.onnx"))
    data_sets = []
    for folder in sorted(glob.glob(os.path.join(test.model_dir, "test_data_set_*"))):
        arrays = []
        for prefix in ("input", "output"):
            files = sorted(glob.glob(os.path.join(folder, f"{prefix}_*.pb")),
                           key=lambda p: int(re.findall(r"(\d+)\.pb$", p)[0]))
            tensors = []
            for path in files:
                proto = onnx.TensorProto()
                with open(path, "rb") as f:
                    proto.ParseFromString(f.read())
                tensors.append(onnx.numpy_helper.to_array(proto))
            arrays.append(tensors)
        data_sets.append(tuple(arrays))
    return model, data_sets


def collect(kinds=KINDS) -> tuple[list[Case], list[tuple[str, str]]]:
    """The suite's cases, and the (name, reason) of those left out."""
    from onnx.backend.test.loader import load_model_tests

    cases, excluded = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind in kinds:
            tests = load_model_tests(kind=kind)
            if kind == "node":
                operators = _operator_names(tests)
            for test in tests:
                if kind == "node":
                    model, data_sets = test.model, test.data_sets
                    operator = operators[test.name]
                else:
                    model, data_sets = _load_model_dir(test)
                    operator = kind
                case = Case(test.name, kind, operator, model, list(data_sets),
                            test.rtol, test.atol)
                reason = exclusion(case)
                if reason:
                    excluded.append((case.name, reason))
                else:
                    cases.append(case)
    return cases, excluded


def _array(value) -> np.ndarray:
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    return np.asarray(value)


def run_case(case: Case) -> Result:
    from onnx.backend.test.runner import Runner
    from xdsl.utils.exceptions import DiagnosticException

    from tilecraft.runtime.onnx_backend import TilecraftBackend
    from tilecraft.frontends.onnx.importer import OnnxImportError

    start = time.perf_counter()
    outcome, message = "pass", ""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = TilecraftBackend.prepare(case.model, "CPU", num_threads=1)
            for inputs, expected in case.data_sets:
                outputs = rep.run([_array(a) for a in inputs])
                try:
                    Runner.assert_similar_outputs(
                        [_array(a) for a in expected], list(outputs), case.rtol, case.atol)
                except AssertionError as e:
                    outcome, message = "wrong", str(e).strip().splitlines()[0][:300]
                    break
    except OnnxImportError as e:
        outcome, message = "unsupported", str(e)
    except DiagnosticException as e:
        outcome, message = "rejected", str(e).strip().splitlines()[0]
    except Exception as e:  # noqa: BLE001 - an internal error is an outcome here
        outcome, message = "error", f"{type(e).__name__}: {str(e).strip()[:300]}"
    return Result(case.name, case.operator, outcome, message, time.perf_counter() - start)


def run_all(cases: list[Case], progress=None) -> list[Result]:
    results = []
    for case in cases:
        results.append(run_case(case))
        if progress:
            progress(results[-1])
    return results


def summary(results: list[Result], excluded: list) -> dict:
    counts = Counter(r.outcome for r in results)
    total = len(results)
    return {
        "cases": total,
        "excluded": len(excluded),
        **{k: counts.get(k, 0) for k in OUTCOMES},
        "pass_rate": round(counts.get("pass", 0) / total, 4) if total else 0.0,
    }


def operator_table(results: list[Result]) -> str:
    """A markdown table: per operator, how many cases pass of how many."""
    rows = defaultdict(Counter)
    for r in results:
        rows[r.operator][r.outcome] += 1
    lines = ["| operator | pass | of | not passing |", "|---|---:|---:|---|"]
    for op in sorted(rows):
        c = rows[op]
        total = sum(c.values())
        rest = ", ".join(f"{c[k]} {k}" for k in OUTCOMES[1:] if c[k])
        lines.append(f"| {op} | {c['pass']} | {total} | {rest} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", "--filter", help="only cases whose name matches this regex")
    parser.add_argument("--failures", action="store_true",
                        help="list every case that does not pass, with its message")
    parser.add_argument("--write-passing", metavar="FILE",
                        help="write the names of the passing cases to FILE")
    args = parser.parse_args(argv)
    cases, excluded = collect()
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c.name)]
    results = run_all(cases)
    print(operator_table(results))
    if args.failures:
        for r in results:
            if r.outcome != "pass":
                print(f"{r.outcome:11} {r.case}: {r.message}")
    if args.write_passing:
        with open(args.write_passing, "w") as f:
            f.writelines(f"{r.case}\n" for r in sorted(results, key=lambda r: r.case)
                         if r.outcome == "pass")
    reasons = Counter(reason.split(" (")[0] for _, reason in excluded)
    print("excluded: " + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())))
    result = summary(results, excluded)
    print(json.dumps(result))
    return 1 if result["wrong"] or result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
