"""tilecraft as an ONNX backend (`onnx.backend.base.Backend`), the interface every ONNX
backend implements and `onnx.backend.test.BackendTest` drives:

```python
from tilecraft.frontends.onnx.backend import TilecraftBackend
rep = TilecraftBackend.prepare(model)        # compiles with tc.compile
outputs = rep.run([x, y])                    # inputs in graph-input order
```

`prepare` raises what `tc.compile` raises: `OnnxImportError` for an operator,
attribute or element type the importer does not take, an `OpError` diagnostic for a
graph tilecraft rejects further down.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType


class TilecraftRep(BackendRep):
    """A prepared model: `run(inputs)` -> the outputs as a tuple, in graph order."""

    def __init__(self, compiled) -> None:
        self.compiled = compiled

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:  # noqa: ARG002
        if isinstance(inputs, dict):
            outputs = self.compiled(**inputs)
        elif isinstance(inputs, (list, tuple)):
            outputs = self.compiled(*inputs)
        else:
            outputs = self.compiled(inputs)
        return outputs if isinstance(outputs, tuple) else (outputs,)


class TilecraftBackend(Backend):
    """Compiles ONNX models for the CPU with `tilecraft.compile`."""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> TilecraftRep:
        import tilecraft

        if not cls.supports_device(device):
            raise ValueError(f"tilecraft runs ONNX models on the CPU, not on {device!r}")
        options = {k: kwargs[k] for k in ("fuse", "input_shapes", "num_threads") if k in kwargs}
        return TilecraftRep(tilecraft.compile(model, **options))

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
