"""From a model to kernels: the graph passes, convert-graph-to-te, and the split
into the graph function (what to call, in order) and the kernel module.

Passes are looked up by name in the registry (`registry.get_all_passes()` and
xDSL's own), the same ones `tilecraft-opt -p` runs; the list of passes that ran
is kept for reporting. The module is verified after each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.universe import Universe

from tilecraft.utils.diagnostics import verify_module
from tilecraft.utils.weights import WeightStore, attach, store_of

# The graph-level pipeline, in order; fuse-ops is left out when fusion is off.
# alter-layout runs before fold-constants, which then packs the weights once.
GRAPH_PASSES = (
    "infer-shapes",
    "simplify-inference",
    "alter-layout",
    "fold-constants",
    "cse",
    "dce",
    "fuse-ops",
    "plan-memory",
)

# The same lowering as one `tilecraft-opt -p` pipeline, graph IR in, loop IR out
# (bufferize-graph-function rewrites the graph function to call the loop kernels).
TEXT_PIPELINE = ",".join(
    (*GRAPH_PASSES, "convert-graph-to-te", "te-inline", "convert-te-to-loop", "bufferize-graph-function")
)


@dataclass
class Lowered:
    """What the pipeline gives the runtime."""

    module: ModuleOp  # holds the graph function (with func.call of kernels)
    main: func.FuncOp
    kernels: ModuleOp  # te-level kernel functions, moved out of `module`
    store: WeightStore | None
    passes: list[str] = field(default_factory=list)  # those that ran


def load_model(
    model, input_shapes: dict | None = None, store: WeightStore | None = None
) -> tuple[ModuleOp, WeightStore | None]:
    """A graph-level module and its weights from an ONNX model/path or a module."""
    if isinstance(model, ModuleOp):
        if store is not None:
            attach(model, store)
        return model, store_of(model)
    if isinstance(model, (str, Path)) and str(model).endswith(".mlir"):
        from tilecraft.compiler import parse_file

        module = parse_file(model)
        return module, store_of(module)
    from tilecraft.frontends.onnx import from_onnx

    return from_onnx(model, input_shapes=input_shapes)


def _pass(name: str) -> type[ModulePass]:
    """The registered pass class `name` (tilecraft's or xDSL's)."""
    from tilecraft.registry import get_all_passes

    factory = get_all_passes().get(name) or Universe.get_multiverse().all_passes.get(name)
    if factory is None:
        raise LookupError(f"the compile pipeline needs pass '{name}', which is not registered")
    return factory()


def lower_graph(module: ModuleOp, fuse: bool = True) -> Lowered:
    """Run the graph pipeline and convert-graph-to-te on `module` (in place)."""
    from xdsl.context import Context

    from tilecraft.compiler import make_context
    from tilecraft.lowering.convert_graph_to_te import ConvertGraphToTePass, wrap_unfused_ops

    ctx: Context = make_context()
    ran = []
    verify_module(module)
    for name in GRAPH_PASSES:
        if name == "fuse-ops" and not fuse:
            continue
        if name == "plan-memory":
            # Groups must exist before memory is planned over them: with fusion off
            # (or no fuse-ops yet) every op becomes a group of its own.
            wrap_unfused_ops(module)
        _pass(name)().apply(ctx, module)
        verify_module(module)
        ran.append(name)
    ConvertGraphToTePass().apply(ctx, module)
    verify_module(module)
    ran.append(ConvertGraphToTePass.name)
    store = store_of(module)
    main, kernels = split_kernels(module)
    return Lowered(module, main, kernels, store, ran)


def split_kernels(module: ModuleOp) -> tuple[func.FuncOp, ModuleOp]:
    """Move the te kernel functions of `module` into a module of their own; returns
    the graph function and that module."""
    from tilecraft.lowering.convert_te_to_loop import te_functions

    kernels = te_functions(module)
    for f in kernels:
        f.detach()
    rest = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]
    if not rest:
        raise ValueError("the module has no graph function to run")
    main = next((f for f in rest if f.sym_name.data == "main"), rest[0])
    return main, ModuleOp(kernels)
