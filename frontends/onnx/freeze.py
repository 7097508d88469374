"""Graph inputs made constants: compile a model for known values of some inputs.

tilecraft compiles static shapes, so the operands that say how data moves (Reshape's
shape, Reduce*'s axes, Slice's starts, TopK's k...) must be known while importing.
Most models give them as initializers or compute them from shapes (`fold.py`), but
some take them as graph inputs. The ONNX backend learns their values only at `run`;
it then freezes those inputs (`freeze_inputs`: each becomes an initializer holding
the value given) and compiles the model specialized to them, once per distinct
value (`TilecraftRep` in runtime/onnx_backend.py). Which inputs to freeze comes from the importer:
`ConstantInputNeeded.tensor` names the tensor a node needed, `inputs_behind` the graph
inputs it is computed from. (An empty graph input, a 0 extent, needs no freezing:
it holds no data, and compile-model's fold-empty-tensors folds what reads it.)

`tc.compile` does not do this on its own: given such a model it reports the input
by name, as before; freezing is a decision of the caller that knows the values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import onnx
from onnx import numpy_helper

# A graph input is only frozen if it is this small: a shape, axes or a count, not data.
FREEZE_LIMIT = 1024  # elements


def graph_inputs(model: onnx.ModelProto) -> list[str]:
    """The names of the model's inputs that are not initializers, in order."""
    initializers = {i.name for i in model.graph.initializer}
    return [vi.name for vi in model.graph.input if vi.name not in initializers]


def inputs_behind(model: onnx.ModelProto, tensor: str) -> set[str]:
    """The graph inputs `tensor` is computed from (itself if it is one)."""
    producers = {out: node for node in model.graph.node for out in node.output if out}
    inputs = set(graph_inputs(model))
    found: set[str] = set()
    stack, seen = [tensor], set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in inputs:
            found.add(name)
        elif name in producers:
            stack.extend(n for n in producers[name].input if n)
    return found


def freezable(array: np.ndarray) -> bool:
    return np.asarray(array).size <= FREEZE_LIMIT


def freeze_inputs(model: onnx.ModelProto, values: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of `model` in which each named graph input is an initializer of that value."""
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    kept = [vi for vi in frozen.graph.input if vi.name not in values]
    del frozen.graph.input[:]
    frozen.graph.input.extend(kept)
    for name, array in values.items():
        frozen.graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
    return frozen


def key_of(values: Mapping[str, np.ndarray], names: Iterable[str]) -> tuple:
    """A hashable key of the values of `names` (dtype, shape and bytes)."""
    key = []
    for name in sorted(names):
        a = np.ascontiguousarray(values[name])
        key.append((name, a.dtype.str, a.shape, a.tobytes()))
    return tuple(key)
