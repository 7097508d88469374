"""`tilecraft.lower`, `tilecraft.build` and `tilecraft.compile`: TVM's entry points.

`compile` takes a whole model (see `tilecraft.runtime`); `lower` and `build` a
schedule.

`lower` and `build` build the te + sched module with `tilecraft.te.build_module` and run the same
passes as the tools (`tilecraft.compiler.lower_to_loops`), so what the Python API
compiles is what `tilecraft-opt` would print.

Calling convention of a built function (`Function`): `f(*args)` takes numpy
arrays (or `tvm.nd` arrays) in the order of `args`, placeholders read and
computed tensors written in place, and Python numbers for scalar `te.var`
parameters. The backend's own function takes the inputs first and then the
outputs (the te function's arguments, then its results); `Function` reorders.

Symbolic sizes (`te.var` in shapes) are bound at each call from the arrays'
shapes (`tilecraft.frontends.te.symbolic`): the computation is compiled for those
sizes on first use and cached, so one `Function` takes any size and checks that
the arrays agree. `lower` shows the IR for sizes given with `sizes={"n": 64}`, or
64 for each by default, and says so in a first comment line.

`te.extern` calls and `te.scan` loops run between compiled parts
(`tilecraft.te_pieces`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tilecraft.frontends import te

DEFAULT_PRINT_SIZE = 64


def lower_module(s: te.Schedule, args: Sequence, name: str = "main", sizes: dict[int, int] | None = None) -> ModuleOp:
    """The loop-level module of a schedule (te + sched lowered to the loop dialect)."""
    from tilecraft.te_pieces import lower_module as lower_pieces

    return lower_pieces(s, args, name, sizes)


def lower(
    s: te.Schedule,
    args: Sequence,
    name: str = "main",
    binds=None,
    simple_mode: bool = False,
    sizes: dict[str, int] | None = None,
) -> str:
    """The loop-level IR of a schedule, as text (TVM's `tvm.lower(s, args,
    simple_mode=True)`; our loop IR is always the simple form). `te.var` sizes are
    shown specialized to `sizes` (by name; 64 where not given), said in a comment."""
    if binds:
        raise NotImplementedError("tvm.lower(binds=...): buffer binding is not supported by tilecraft")
    args = _check_args(args)
    free = te.shape_vars(args)
    given = dict(sizes or {})
    unknown = set(given) - {v.name for v in free}
    if unknown:
        raise ValueError(f"tvm.lower: sizes names {sorted(unknown)}, which are not te.var sizes here")
    bindings = {id(v): int(given.get(v.name, DEFAULT_PRINT_SIZE)) for v in free}
    from tilecraft.te_pieces import build_pieces

    _, modules = build_pieces(s, args, name, bindings, jit=False)
    if isinstance(modules, ModuleOp):
        text = str(modules)
    else:  # cut at te.extern / te.scan: the pieces, in the order they run
        text = (
            "// this computation runs in parts, in this order, with te.extern calls and "
            "te.scan row loops between them\n"
            + "\n".join(
                f"// part {n}: {what}" + ("" if module is None else f"\n{module}")
                for n, (what, module) in enumerate(modules)
            )
        )
    if free:
        shown = ", ".join(f"{v.name} = {bindings[id(v)]}" for v in free)
        text = (
            f"// te.var sizes shown specialized to {shown}; the built function takes any "
            "size and compiles it on first use\n" + text
        )
    return text


def build(
    s: te.Schedule,
    args: Sequence | None = None,
    target="llvm",
    target_host=None,
    name: str = "main",
    binds=None,
) -> Function:
    """A native function computing `args`' outputs: `f(a, b, c)` writes `c` in place.
    TVM's name default (`default_func`) is not used: the function is called `name`."""
    from tilecraft.compat.target import resolve

    if args is None:
        raise ValueError("tvm.build needs the argument list: tvm.build(s, [A, B, C])")
    if binds:
        raise NotImplementedError("tvm.build(binds=...): buffer binding is not supported by tilecraft")
    target = resolve(target)  # "llvm" or "accel [-spec=FILE] [-force-serial]" (target.py)
    if target_host is not None:
        resolve(target_host)
    if target.kind.name == "accel":
        from tilecraft.runtime.accel import build_accel

        return build_accel(s, _check_args(args), name, target.spec, target.serial)
    args = _check_args(args)
    return Function(s, args, name)


def _check_args(args) -> list:
    from tilecraft.frontends.te.symbolic import Var

    args = list(args) if isinstance(args, (list, tuple)) else [args]
    for t in args:
        if not isinstance(t, (te.Tensor, Var)):
            kind = "a cache stage" if isinstance(t, te.CacheTensor) else type(t).__name__
            raise ValueError(f"args of lower/build are tensors and te.vars, not {kind} ({t!r})")
    return args


class Function:
    """What `tilecraft.build` returns (TVM's runtime module with one function):
    call it, time it (`time_evaluator`), show its code (`get_source`), save it
    (`export_library`, loaded back with `tilecraft.runtime.load_module`)."""

    def __init__(self, s: te.Schedule, args: list, name: str):
        from tilecraft.frontends.te.symbolic import Var

        self.entry_name = name
        self._schedule, self._args = s, args
        self._size_vars = te.shape_vars(args)
        size_ids = {id(v) for v in self._size_vars}
        # Each argument: a tensor, a scalar parameter, or a size given explicitly.
        self._kinds = [
            "size" if isinstance(a, Var) and id(a) in size_ids else "scalar" if isinstance(a, Var) else "tensor"
            for a in args
        ]
        self._compiled: dict[tuple[int, ...], Callable] = {}
        self._modules: dict[tuple[int, ...], ModuleOp] = {}
        self._direct: Callable | None = None  # static sizes, arrays only: no preparation
        if not self._size_vars:
            compiled = self._specialize(())  # compile now, so errors show at build
            if all(k == "tensor" for k in self._kinds):
                self._direct = compiled

    @property
    def is_symbolic(self) -> bool:
        return bool(self._size_vars)

    def _specialize(self, key: tuple[int, ...]) -> Callable:
        compiled = self._compiled.get(key)
        if compiled is None:
            from tilecraft.te_pieces import build_pieces

            bindings = {id(v): n for v, n in zip(self._size_vars, key)}
            compiled, modules = build_pieces(self._schedule, self._args, self.entry_name, bindings)
            self._compiled[key], self._modules[key] = compiled, modules
        return compiled

    def _prepare(self, arrays) -> tuple[Callable, list]:
        from tilecraft.frontends.te.symbolic import bind_sizes

        self._check_count(arrays)
        values = []
        for a, kind, x in zip(self._args, self._kinds, arrays):
            if kind == "tensor":
                if not isinstance(x, np.ndarray):
                    raise ValueError(
                        f"{self.entry_name}: argument {a.name} must be a numpy array or "
                        f"tvm.nd.array, not {type(x).__name__}"
                    )
                values.append(x)
            elif kind == "scalar":
                if isinstance(x, np.ndarray) and x.size != 1 or not np.isscalar(x) and not isinstance(x, np.ndarray):
                    raise ValueError(f"{self.entry_name}: argument {a.name} is a scalar, not {type(x).__name__}")
                values.append(np.array([x], dtype=a.dtype).reshape(1))
            else:
                values.append(x)
        key: tuple[int, ...] = ()
        if self._size_vars:
            shapes = [(a.name, a.shape) for a, k in zip(self._args, self._kinds) if k == "tensor"]
            actual = [x.shape for x, k in zip(values, self._kinds) if k == "tensor"]
            try:
                bindings = bind_sizes(shapes, actual)
            except ValueError as e:
                raise ValueError(f"{self.entry_name}: {e}") from None
            for a, k, x in zip(self._args, self._kinds, values):
                if k == "size" and int(x) != bindings.get(id(a)):
                    raise ValueError(f"{self.entry_name}: size {a.name} is {bindings.get(id(a))}, got {x}")
            missing = [v.name for v in self._size_vars if id(v) not in bindings]
            if missing:
                raise ValueError(
                    f"{self.entry_name}: the sizes {', '.join(missing)} are not a whole "
                    "dimension of any argument, so a call cannot tell them"
                )
            key = tuple(bindings[id(v)] for v in self._size_vars)
        arrays = [x for x, k in zip(values, self._kinds) if k != "size"]
        return self._specialize(key), arrays

    def _check_count(self, arrays) -> None:
        """One argument per entry of `args`, as given to build. The compiled
        callable cannot say it: it takes the arrays reordered (inputs first) or
        hands them to pieces, and would index past the end or drop some."""
        if len(arrays) == len(self._args):
            return
        names = [_arg_name(a) for a in self._args]
        missing = names[len(arrays):]
        detail = f": missing {', '.join(missing)}" if missing else f", {len(arrays) - len(names)} too many"
        raise TypeError(
            f"{self.entry_name}({', '.join(names)}) takes {len(names)} arguments "
            f"in the order of build's args, got {len(arrays)}{detail}"
        )

    def __call__(self, *arrays) -> None:
        if self._direct is not None:  # it checks shapes and dtypes itself
            self._check_count(arrays)
            return self._direct(*arrays)
        compiled, arrays = self._prepare(arrays)
        compiled(*arrays)

    def __getitem__(self, name: str) -> Function:
        if name != self.entry_name:
            raise KeyError(f"this module has one function, {self.entry_name!r}, not {name!r}")
        return self

    def time_evaluator(self, func_name: str | None = None, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, **_) -> Callable:
        """`f.time_evaluator(f.entry_name, dev, number=10)(a, b, c).mean`: seconds per
        call, averaged over `number` calls, `repeat` times."""
        if func_name is not None and func_name != self.entry_name:
            raise KeyError(f"this module has one function, {self.entry_name!r}, not {func_name!r}")
        from tilecraft.utils.time_evaluator import time_calls


        def evaluate(*arrays):
            compiled, prepared = self._prepare(arrays)
            return time_calls(lambda: compiled(*prepared), number, repeat, min_repeat_ms)

        return evaluate

    def _variants(self, what: str) -> list[tuple[str, ModuleOp]]:
        """(symbol, loop-level module) per compiled set of sizes: the one function
        of a static build; for te.var sizes, one per size it was called with."""
        from tilecraft.te_pieces import lower_module as lower_pieces

        if any(not isinstance(m, ModuleOp) for m in self._modules.values()):
            raise NotImplementedError(
                f"{what} of a function with te.extern or te.scan stages: it runs in parts "
                "from Python, so there is no one native function"
            )
        if not self._size_vars:
            return [(self.entry_name, self._modules[()])]
        if not self._modules:
            raise NotImplementedError(
                f"{what} of a function with te.var sizes before any call: tilecraft compiles "
                "one function per set of sizes, when it is first called with them"
            )
        variants = []
        for key in self._modules:
            bindings = {id(v): n for v, n in zip(self._size_vars, key)}
            symbol = self.entry_name + "".join(
                f"_{''.join(c if c.isalnum() else '_' for c in v.name)}{n}" for v, n in zip(self._size_vars, key)
            )
            variants.append((symbol, lower_pieces(self._schedule, self._args, symbol, bindings)))
        return variants

    def get_source(self, fmt: str = "ll") -> str:
        """The LLVM IR (`"ll"`) or assembly (`"asm"`/`"s"`) of the function."""
        from tilecraft.compiler import emit_assembly, emit_llvm_ir
        from tilecraft.te_library import merged_module

        module = merged_module(self._variants("get_source"))
        if fmt in ("ll", "llvm", ""):
            return emit_llvm_ir(module)
        if fmt in ("asm", "s"):
            return emit_assembly(module)
        raise ValueError(f"get_source: format {fmt!r} is not 'll' or 'asm'")

    def save(self, path: str, fmt: str = "") -> None:
        """Write the function as an object file (`.o`, with `<path>.json` for
        `tvm.contrib.cc.create_shared` and `load_module`) or LLVM IR (`.ll`)."""
        from tilecraft.te_library import save_object

        path = str(path)
        if path.endswith(".ll") or fmt == "ll":
            with open(path, "w") as f:
                f.write(self.get_source("ll"))
        elif path.endswith(".o") or fmt == "o":
            save_object(self, self._variants("save"), path)
        else:
            raise ValueError(f"save writes .o or .ll files, not {path!r}; use export_library for .so")

    def export_library(self, path: str, **_) -> None:
        """Write a shared library (`.so`) and, next to it, `<path>.json` with the
        argument order and types; `tilecraft.runtime.load_module(path)` loads both."""
        from tilecraft.te_library import export_library

        export_library(self, self._variants("export_library"), str(path))


def _arg_name(a) -> str:
    return getattr(a, "name", repr(a))


def compile(  # noqa: A001
    model_or_path,
    target: str = "llvm",
    *,
    fuse: bool = True,
    input_shapes=None,
    store=None,
    num_threads=None,
    extra_passes=None,
    tuning_log=None,
    timing: bool = False,
):
    """A whole model (ONNX model or path, `.mlir` graph file, or graph `ModuleOp`)
    compiled for the CPU: `m = tc.compile("model.onnx"); y = m(x)`. It runs the
    `compile-model` pipeline (what `tilecraft-opt -p compile-model` prints is
    `m.ir`) and calls the model as one native function.
    `extra_passes={"after:fuse-ops": [MyPass()]}` inserts passes at named points.
    `tuning_log="tune.jsonl"` applies the best tuned config of each workload the
    log holds (tilecraft-tune, `tilecraft.autotune`); records that are not configs
    of the current templates (an older log) are skipped with a warning.
    `target="accel"` runs a quantized model's (`tc.quantize`) int8 convolutions on the
    accelerator's simulator and the rest on the CPU (runtime/offload.py), each with
    the best config a `tuning_log` (autotune/records.py) holds for its workload.
    `timing=True` prints where the compilation spent its time on stderr (per pass
    and stage, as MLIR's `-mlir-timing`); `m.timing` holds it either way."""
    from tilecraft.compat.target import resolve

    if resolve(target).kind.name == "accel":
        from tilecraft.runtime.offload import compile_offload

        configs = None if tuning_log is None else _log_lookup(tuning_log, "accel", skip_invalid=True)
        return compile_offload(model_or_path, input_shapes=input_shapes, store=store, schedule_configs=configs)
    from tilecraft.runtime import compile as compile_model

    return compile_model(
        model_or_path,
        "llvm",  # (options after the kind, `llvm -mcpu=...`, change nothing: the host CPU)
        fuse=fuse,
        input_shapes=input_shapes,
        store=store,
        num_threads=num_threads,
        extra_passes=extra_passes,
        schedule_configs=None if tuning_log is None else _log_lookup(tuning_log, skip_invalid=True),
        timing=timing,
    )


def _log_lookup(tuning_log, target: str = "llvm", **options):
    from tilecraft.autotune.tasks import LogLookup

    return LogLookup(tuning_log, target, **options)
