"""`tilecraft.compile`: a model in, a `CompiledModel` out.

The driver compiles it (driver/compile_model.py: the compile-model pipeline, LLVM
kernel by kernel, the compile cache); this wraps the result for the caller and
collects where the compilation spent its time.
"""

from __future__ import annotations

from tilecraft.driver.compile_model import compile_model
from tilecraft.pipelines.extra_passes import ExtraPasses
from tilecraft.runtime.model import CompiledModel
from tilecraft.utils.weights import WeightStore


def compile(  # noqa: A001 - TVM's and the issue's name
    model_or_path,
    target: str = "llvm",
    *,
    fuse: bool = True,
    input_shapes: dict | None = None,
    store: WeightStore | None = None,
    num_threads: int | None = None,
    extra_passes: ExtraPasses | None = None,
    schedule_configs=None,
    timing: bool = False,
    per_kernel: bool = True,
) -> CompiledModel:
    """Compile an ONNX model (a ModelProto or a path), a `.mlir` graph file, or a
    graph-level `ModuleOp` (with its `WeightStore` as `store`, unless one is
    attached to it). `fuse=False` compiles every op as its own kernel;
    `input_shapes` fixes dynamic input dimensions of an ONNX model; `num_threads`
    is how many threads parallel loops use (default: `OMP_NUM_THREADS`, else the
    CPUs this process may run on); `extra_passes={"after:fuse-ops": [MyPass()]}`
    runs passes of one's own at named points of compile-model
    (`pipelines/extra_passes.py`); `schedule_configs(template, params) -> config | None`
    is the tuning context the schedules ask (topi/tuning.py; tc.compile's
    `tuning_log` makes one of a log); what it answered for is `model.tuned`.
    `timing=True` prints where the compilation spent its time (each pass of
    compile-model and loop-to-llvm, translation, LLVM) on stderr, as MLIR's
    `-mlir-timing` does; `model.timing` holds it either way (a `Timer`).

    Kernels are compiled one object file each, in parallel, and cached on disk
    by their IR (utils/compile_cache.py), as is what the graph pipeline made of
    the model; `per_kernel=False` compiles the loop module as one LLVM module,
    uncached, in this process (for comparisons)."""
    from tilecraft.utils.compile_timing import collect_timing, current_timer

    outer = current_timer()
    with collect_timing(outer) if outer is not None else collect_timing() as timer:
        build = compile_model(
            model_or_path, target, fuse=fuse, input_shapes=input_shapes, store=store, num_threads=num_threads,
            extra_passes=extra_passes, schedule_configs=schedule_configs, per_kernel=per_kernel,
        )
    model = CompiledModel(**vars(build))
    model.timing = timer
    if timing:
        import sys

        print(timer.report(), file=sys.stderr)
    return model
