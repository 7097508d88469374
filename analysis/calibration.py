"""Calibration for post-training quantization: how large each anchor's input gets.

`calibrate(module, inputs)` runs the graph function on each calibration input with
the numpy evaluator (`dialects/graph_reference.py`, the oracle everything else is
checked against) and records, for every float conv2d and dense, the largest
magnitude its data operand took over all inputs. `annotate` writes it on the op as
`{tc.input_absmax = ... : f64}`, which `quantize-int8` reads: the measurement is
data, the rewrite is a pass, and the IR between them says what was measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, FloatAttr, ModuleOp, f64
from xdsl.ir import Operation

from tilecraft.dialects import graph
from tilecraft.dialects.graph_reference import evaluate_values
from tilecraft.utils.weights import WeightStore, store_of

ABSMAX_ATTR = "tc.input_absmax"
"""The attribute calibration writes on an anchor and quantize-int8 reads."""


def _anchors(f: func.FuncOp) -> list[Operation]:
    return [
        op
        for op in f.body.block.ops
        if isinstance(op, (graph.Conv2dOp, graph.DenseOp))
        and isinstance(graph.ranked(op.inputs[0].type).get_element_type(), Float32Type)
    ]


def _bind(f: func.FuncOp, x: Sequence[np.ndarray] | Mapping[str, np.ndarray] | np.ndarray) -> list[np.ndarray]:
    args = f.body.block.args
    if isinstance(x, np.ndarray):
        x = [x]
    if isinstance(x, Mapping):
        names = []
        for n in range(len(args)):
            attrs = f.arg_attrs.data[n].data if f.arg_attrs is not None else {}
            names.append(attrs["tc.name"].data if "tc.name" in attrs else f"arg{n}")
        missing = [name for name in names if name not in x]
        if missing:
            raise ValueError(f"calibration input lacks {', '.join(missing)}")
        x = [x[name] for name in names]
    if len(x) != len(args):
        raise ValueError(f"calibration input has {len(x)} arrays, @{f.sym_name.data} takes {len(args)}")
    arrays = []
    for n, (arg, a) in enumerate(zip(args, x)):
        shape = tuple(graph.shape_of(arg.type))
        a = np.asarray(a)
        if a.shape != shape:
            raise ValueError(f"calibration input {n} has shape {a.shape}, @{f.sym_name.data} takes {shape}")
        arrays.append(a)
    return arrays


def calibrate(
    f: func.FuncOp, inputs: Iterable, store: WeightStore | None = None
) -> dict[Operation, float]:
    """max |data operand| of each float conv2d/dense of graph function `f` over `inputs`
    (each a list of arrays by position, a dict by argument name, or one array)."""
    anchors = _anchors(f)
    absmax: dict[Operation, float] = {op: 0.0 for op in anchors}
    count = 0
    for x in inputs:
        count += 1
        env = evaluate_values(f, store, _bind(f, x))
        for anchor in anchors:
            seen = float(np.max(np.abs(env[anchor.inputs[0]]), initial=0.0))
            absmax[anchor] = max(absmax[anchor], seen)
    if count == 0:
        raise ValueError("calibration needs at least one input")
    return absmax


def annotate(module: ModuleOp, inputs: Iterable, function: str | None = None) -> int:
    """Calibrate the module's graph function and write `tc.input_absmax` on its
    anchors; returns how many it annotated."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if function is not None:
        functions = [f for f in functions if f.sym_name.data == function]
    if len(functions) != 1:
        raise ValueError("calibration needs a module with one graph function (or its name)")
    found = calibrate(functions[0], inputs, store_of(module))
    for op, value in found.items():
        op.attributes[ABSMAX_ATTR] = FloatAttr(value, f64)
    return len(found)
