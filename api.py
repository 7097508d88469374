"""`tilecraft.lower`, `tilecraft.build` and `tilecraft.compile`: TVM's entry points.

`compile` takes a whole model (see `tilecraft.runtime`); `lower` and `build` a
schedule.

`lower` and `build` build the te + sched module with `tilecraft.te.build_module` and run the same
passes as the tools (`tilecraft.compiler.lower_to_loops`), so what the Python API
compiles is what `tilecraft-opt` would print.

Calling convention of a built function: `f(*arrays)` takes numpy arrays in the
order of `args`, placeholders read and computed tensors written in place. The
backend's own function takes the inputs first and then the outputs (the te
function's arguments, then its results); `build` reorders when `args` interleaves
them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ModuleOp

from tilecraft.frontends import te


def lower_module(s: te.Schedule, args: Sequence[te.Tensor], name: str = "main") -> ModuleOp:
    """The loop-level module of a schedule (te + sched lowered to the loop dialect)."""
    from tilecraft.compiler import lower_to_loops

    return lower_to_loops(te.build_module(s, args, name))


def lower(s: te.Schedule, args: Sequence[te.Tensor], name: str = "main") -> str:
    """The loop-level IR of a schedule, as text."""
    return str(lower_module(s, args, name))


def build(
    s: te.Schedule, args: Sequence[te.Tensor], target: str = "llvm", name: str = "main"
) -> Callable[..., None]:
    """A native function computing `args`' outputs: `f(a, b, c)` writes `c` in place."""
    if target != "llvm":
        raise ValueError(f"unknown target {target!r}; tilecraft.build supports 'llvm'")
    from tilecraft.compiler import compile_loop_module

    compiled = compile_loop_module(lower_module(s, args, name))[name]
    args = list(args)
    is_input = [isinstance(t.op, te.PlaceholderOp) for t in args]
    # Position of each backend argument (inputs, then outputs) in the user's order.
    order = [n for n, i in enumerate(is_input) if i] + [n for n, i in enumerate(is_input) if not i]
    if order == list(range(len(args))):
        return compiled
    names = ", ".join(t.name for t in args)

    def call(*arrays):
        if len(arrays) != len(args):
            raise TypeError(f"{name}({names}) takes {len(args)} arrays, got {len(arrays)}")
        return compiled(*(arrays[n] for n in order))

    call.__name__ = name
    return call


def compile(  # noqa: A001
    model_or_path,
    target: str = "llvm",
    *,
    fuse: bool = True,
    input_shapes=None,
    store=None,
    num_threads=None,
    extra_passes=None,
):
    """A whole model (ONNX model or path, `.mlir` graph file, or graph `ModuleOp`)
    compiled for the CPU: `m = tc.compile("model.onnx"); y = m(x)`. It runs the
    `compile-model` pipeline (what `tilecraft-opt -p compile-model` prints is
    `m.ir`) and calls the model as one native function.
    `extra_passes={"after:fuse-ops": [MyPass()]}` inserts passes at named points."""
    from tilecraft.runtime import compile as compile_model

    return compile_model(
        model_or_path,
        target,
        fuse=fuse,
        input_shapes=input_shapes,
        store=store,
        num_threads=num_threads,
        extra_passes=extra_passes,
    )
