"""ONNX frontend: an ONNX model (opset 13+; older opsets converted by onnx.version_converter) to a graph-dialect module and its weights.

```python
from tilecraft.frontends.onnx import from_onnx
module, store = from_onnx("model.onnx", input_shapes={"x": (1, 3, 224, 224)})
```

The module holds one `func.func @main`: one argument per graph input that is not an
initializer (`{tc.name = "<onnx name>"}`), one result per graph output. Initializers
and Constant nodes become `graph.weight "<name>"` (values in the returned
`WeightStore`, attached to the module in memory) or, if tiny, inline
`graph.constant`s. Shapes are static; a dynamic input dimension is an error that
says how to fix it. Anything unsupported raises `OnnxImportError` naming the
operator and node.

- `importer.py`: the walk, values (SSA or known arrays), the `Node` helper;
- `fold.py`: import-time evaluation of shape computations;
- `elementwise.py`, `activations.py`, `composed.py`, `nn.py`, `conv_variants.py`, `attention.py`,
  `losses.py`, `reduce.py`, `indexing.py`, `einsum.py`, `quantize.py`, `tensor.py`: one
  converter per ONNX operator;
- `freeze.py`: graph inputs made constants (for `runtime/onnx_backend.py`, shapes given as inputs);
- `skeleton.py`: a model without its weights' data (opset conversion, cache keys).
"""

from tilecraft.frontends.onnx import (  # noqa: F401  (registers converters)
    activations,
    attention,
    composed,
    conv_variants,
    einsum,
    elementwise,
    fold,
    indexing,
    losses,
    nn,
    quantize,
    reduce,
    tensor,
)
from tilecraft.frontends.onnx.importer import CONVERTERS, OnnxImportError, from_onnx

SUPPORTED_OPS = sorted(CONVERTERS)

__all__ = ["from_onnx", "OnnxImportError", "SUPPORTED_OPS"]
