"""`tilecraft.quantize`: a float model made int8 by post-training quantization.

The model is loaded and simplified as compile-model's first stages do (shapes
inferred, batch norms folded into their convolutions by canonicalize), calibrated
on the given inputs (`analysis/calibration.py`), and rewritten by `quantize-int8`
(power-of-two symmetric scales; see that pass). The result is a graph-level module
with its weight store: print it, compile it (`tc.compile(q)`), or evaluate it with
the numpy reference, which is the definition of the quantized model.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects.builtin import ModuleOp

from tilecraft.utils.weights import WeightStore, attach, store_of


def quantize(model, calibration: Iterable, *, input_shapes: dict | None = None, store: WeightStore | None = None) -> ModuleOp:
    """int8 post-training quantization of an ONNX model (or path, .mlir path, graph
    ModuleOp) with per-tensor power-of-two scales from `calibration` (inputs: each a
    list of arrays by position, a dict by input name, or one array)."""
    from xdsl.transforms.canonicalize import CanonicalizePass

    from tilecraft.analysis.calibration import annotate
    from tilecraft.driver.context import make_context
    from tilecraft.driver.compile_model import graph_function, load_model
    from tilecraft.transforms.fold_empty_tensors import FoldEmptyTensorsPass
    from tilecraft.transforms.infer_shapes import InferShapesPass
    from tilecraft.transforms.quantize_int8 import QuantizeInt8Pass
    from tilecraft.pipelines.run_stages import run_stages

    module = load_model(model, input_shapes, store)
    source = store_of(module)
    if source is not None:
        attach(module, source.child())  # quantized weights stay with this module
    ctx = make_context()
    run_stages([FoldEmptyTensorsPass(), InferShapesPass(), CanonicalizePass()], ctx, module)
    annotate(module, calibration, graph_function(module).sym_name.data)
    run_stages([QuantizeInt8Pass(), CanonicalizePass()], ctx, module)
    return module
