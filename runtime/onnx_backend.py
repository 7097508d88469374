"""tilecraft as an ONNX backend (`onnx.backend.base.Backend`), the interface every ONNX
backend implements and `onnx.backend.test.BackendTest` drives:

```python
from tilecraft.runtime.onnx_backend import TilecraftBackend
rep = TilecraftBackend.prepare(model)        # compiles as tc.compile does
outputs = rep.run([x, y])                    # inputs in graph-input order
```

`prepare` raises what `tc.compile` raises: `OnnxImportError` for an operator,
attribute or element type the importer does not take, an `OpError` diagnostic for a
graph tilecraft rejects further down.

A model whose shapes, axes, pads or counts are graph inputs (or computed from them)
cannot be compiled before its inputs are known:
`prepare` then defers, and `run` compiles it with those inputs frozen to the values
given (`freeze.py`), once per distinct value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType


class TilecraftRep(BackendRep):
    """A prepared model: `run(inputs)` -> the outputs as a tuple, in graph order.

    Either compiled already (`compiled`), or, when some graph inputs must be known
    at compile time (`frozen`), compiled at `run` for their values (cached by value)."""

    def __init__(self, compiled, model: ModelProto | None = None, options=None, frozen=frozenset(),
                 reason: Exception | None = None) -> None:  # fmt: skip
        self.compiled = compiled
        self.model = model
        self.options = dict(options or {})
        self.frozen = set(frozen)
        self.reason = reason  # why `frozen` must be known: raised if one of them is data
        self.specialized: dict[tuple, Any] = {}

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:  # noqa: ARG002
        if self.compiled is None:
            return self._run_specialized(inputs)
        if isinstance(inputs, dict):
            outputs = self.compiled(**inputs)
        elif isinstance(inputs, (list, tuple)):
            outputs = self.compiled(*inputs)
        else:
            outputs = self.compiled(inputs)
        return outputs if isinstance(outputs, tuple) else (outputs,)

    def _run_specialized(self, inputs: Any) -> tuple[np.ndarray, ...]:
        from tilecraft.frontends.onnx import freeze
        from tilecraft.frontends.onnx.importer import ConstantInputNeeded
        from tilecraft.runtime.compile import compile as compile_model

        names = freeze.graph_inputs(self.model)
        if isinstance(inputs, dict):
            values = {k: np.asarray(v) for k, v in inputs.items()}
        else:
            values = dict(zip(names, [np.asarray(a) for a in (inputs if isinstance(inputs, (list, tuple)) else [inputs])]))
        missing = [n for n in names if n not in values]
        if missing:
            raise ValueError(f"the model takes input '{missing[0]}', which was not given")
        if self.reason is not None and not all(freeze.freezable(values[n]) for n in self.frozen):
            raise self.reason
        while True:
            key = freeze.key_of(values, self.frozen)
            compiled = self.specialized.get(key)
            if compiled is not None:
                break
            model = freeze.freeze_inputs(self.model, {n: values[n] for n in self.frozen})
            try:
                compiled = compile_model(model, **self.options)
            except ConstantInputNeeded as e:
                more = freeze.inputs_behind(self.model, e.tensor) - self.frozen
                if not more or not all(freeze.freezable(values[n]) for n in more):
                    raise
                self.frozen |= more
                continue
            self.specialized[key] = compiled
            break
        outputs = compiled(*[values[n] for n in names if n not in self.frozen])
        return outputs if isinstance(outputs, tuple) else (outputs,)


class TilecraftBackend(Backend):
    """Compiles ONNX models for the CPU with `tilecraft.compile`."""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> TilecraftRep:
        from tilecraft.runtime.compile import compile as compile_model

        if not cls.supports_device(device):
            raise ValueError(f"tilecraft runs ONNX models on the CPU, not on {device!r}")
        from tilecraft.frontends.onnx import freeze
        from tilecraft.frontends.onnx.importer import ConstantInputNeeded

        options = {k: kwargs[k] for k in ("fuse", "input_shapes", "num_threads") if k in kwargs}
        try:
            return TilecraftRep(compile_model(model, **options))
        except ConstantInputNeeded as e:
            frozen, reason = freeze.inputs_behind(model, e.tensor), e
            if not frozen:
                raise
        return TilecraftRep(None, model, options, frozen, reason)

    @classmethod
    def run_model(cls, model: ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info=None, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """Run one node on `inputs` (numpy arrays, in the node's input order): a model
        of that node alone, its input types taken from the arrays."""
        arrays = [np.asarray(a) for a in inputs]
        graph_inputs = [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in zip(node.input, arrays)
        ]
        graph_outputs = [helper.make_empty_tensor_value_info(name) for name in node.output]
        graph = helper.make_graph([node], "node", graph_inputs, graph_outputs)
        model = helper.make_model(graph)
        return cls.prepare(model, device, **kwargs).run(arrays)


prepare = TilecraftBackend.prepare
run_model = TilecraftBackend.run_model
run_node = TilecraftBackend.run_node
supports_device = TilecraftBackend.supports_device
