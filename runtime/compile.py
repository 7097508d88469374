"""`tilecraft.compile`: a model in, a `CompiledModel` out.

```
ONNX / graph module ──graph passes──▶ fused groups ──convert-graph-to-te──▶ kernels
  ──te-inline, convert-te-to-loop──▶ loop kernels ──LLVM (one module, JIT)──▶ plan + executor
```

Kernel calls whose inputs are all weights or constants (a layout transform of a
weight the graph passes left behind) run once here, and their results are bound
like weights.
"""

from __future__ import annotations

import time

import numpy as np

from tilecraft.runtime.extension import ExtraPasses
from tilecraft.runtime.model import CompiledModel
from tilecraft.runtime.pipeline import load_model, lower_graph
from tilecraft.runtime.plan import Plan, build_plan


def compile(  # noqa: A001 - TVM's and the issue's name
    model_or_path,
    target: str = "llvm",
    *,
    fuse: bool = True,
    input_shapes: dict | None = None,
    store=None,
    extra_passes: ExtraPasses | None = None,
) -> CompiledModel:
    """Compile an ONNX model (a ModelProto or a path), a `.mlir` graph file, or a
    graph-level `ModuleOp` (with its `WeightStore` as `store`, unless the module
    already names one). `fuse=False` compiles every op as its own kernel;
    `input_shapes` fixes dynamic input dimensions of an ONNX model;
    `extra_passes={"after:fuse-ops": [MyPass()]}` runs passes of one's own at named
    points of the pipeline (`runtime/extension.py`)."""
    if target != "llvm":
        raise ValueError(f"unknown target {target!r}; tilecraft.compile supports 'llvm'")
    start = time.perf_counter()
    module, _ = load_model(model_or_path, input_shapes, store)
    lowered = lower_graph(module, fuse=fuse, extra_passes=extra_passes)

    from tilecraft.backends.llvm import compile_loop_module
    from tilecraft.compiler import lower_to_loops

    kernels = lower_to_loops(lowered.kernels)
    jit = compile_loop_module(kernels)
    plan, constants = build_plan(lowered.main, lowered.store)
    functions = {}
    for name in jit:
        compiled = jit[name]
        functions[name] = compiled.unchecked  # no per-call checks: the plan validated the buffers
    check_signatures(plan, {name: jit[name].arg_types for name in jit})
    fold_constant_steps(plan, constants, functions)
    return CompiledModel(
        plan,
        functions,
        constants,
        compile_seconds=time.perf_counter() - start,
        kernel_module=kernels,
        owner=jit,
        passes=lowered.passes,
    )


def check_signatures(plan: Plan, signatures: dict) -> None:
    """Every step passes as many buffers as its kernel takes, of its shapes and dtypes
    (what makes the unchecked fast path safe)."""
    def same_shape(graph_shape, kernel_shape) -> bool:
        # A scalar (rank 0) is a one-element buffer to a kernel: te tensors have axes.
        return tuple(graph_shape or (1,)) == tuple(kernel_shape)

    for step in plan.steps:
        specs = signatures[step.kernel]
        slots = [plan.slots[a] for a in step.args]
        if len(specs) != len(slots) or any(
            not same_shape(s.shape, shape) or np.dtype(s.dtype) != dtype
            for s, (shape, dtype) in zip(slots, specs)
        ):
            have = [(tuple(s.shape), s.dtype) for s in slots]
            raise AssertionError(f"kernel {step.kernel} takes {specs}, its call passes {have}")


def fold_constant_steps(plan: Plan, constants: dict, functions: dict) -> None:
    """Run the steps that read only constants now; their results become constants."""
    kept = []
    for step in plan.steps:
        reads = step.args[: len(step.args) - step.results]
        writes = step.args[len(step.args) - step.results :]
        if not all(plan.slots[a].kind == "const" for a in reads) or any(
            plan.slots[a].kind == "output" for a in writes
        ):
            kept.append(step)
            continue
        arrays = [constants[plan.slots[a].ref] for a in reads]
        results = [np.empty(plan.slots[a].shape, plan.slots[a].dtype) for a in writes]
        functions[step.kernel](*[x.ctypes.data for x in arrays + results])
        for a, value in zip(writes, results):
            slot = plan.slots[a]
            slot.kind, slot.offset, slot.ref = "const", -1, f"folded{a}"
            constants[slot.ref] = value
    plan.steps = kept
