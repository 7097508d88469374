"""`Function`: what `tilecraft.build` returns for the CPU (TVM's runtime module
with one function).

Calling convention: `f(*args)` takes numpy arrays (or `tvm.nd` arrays) in the
order of `args`, placeholders read and computed tensors written in place, and
Python numbers for scalar `te.var` parameters. The backend's own function takes
the inputs first and then the outputs (the te function's arguments, then its
results); the compiled callable reorders.

Symbolic sizes (`te.var` in shapes) are bound at each call from the arrays'
shapes (`tilecraft.frontends.te.symbolic`); the driver (driver/te_function.py)
compiles the computation for those sizes on first use and keeps it, so one
`Function` takes any size and checks that the arrays agree.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tilecraft.driver.te_function import TeBuild
from tilecraft.frontends import te
from tilecraft.frontends.te.symbolic import Var, bind_sizes
from tilecraft.utils.time_evaluator import time_calls


class Function:
    """What `tilecraft.build` returns (TVM's runtime module with one function):
    call it, time it (`time_evaluator`), show its code (`get_source`), save it
    (`export_library`, loaded back with `tilecraft.runtime.load_module`)."""

    def __init__(self, s: te.Schedule, args: list, name: str):
        self.entry_name = name
        self._build = TeBuild(s, args, name)
        self._args, self._size_vars = args, self._build.size_vars
        size_ids = {id(v) for v in self._size_vars}
        # Each argument: a tensor, a scalar parameter, or a size given explicitly.
        self._kinds = [
            "size" if isinstance(a, Var) and id(a) in size_ids else "scalar" if isinstance(a, Var) else "tensor"
            for a in args
        ]
        self._direct: Callable | None = None  # static sizes, arrays only: no preparation
        if not self._size_vars:
            compiled = self._build.specialize(())  # compile now, so errors show at build
            if all(k == "tensor" for k in self._kinds):
                self._direct = compiled

    @property
    def is_symbolic(self) -> bool:
        return bool(self._size_vars)

    def _prepare(self, arrays) -> tuple[Callable, list]:
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
        return self._build.specialize(key), arrays

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
        def evaluate(*arrays):
            compiled, prepared = self._prepare(arrays)
            return time_calls(lambda: compiled(*prepared), number, repeat, min_repeat_ms)

        return evaluate

    def get_source(self, fmt: str = "ll") -> str:
        """The LLVM IR (`"ll"`) or assembly (`"asm"`/`"s"`) of the function."""
        return self._build.source(fmt)

    def save(self, path: str, fmt: str = "") -> None:
        """Write the function as an object file (`.o`, with `<path>.json` for
        `tvm.contrib.cc.create_shared` and `load_module`) or LLVM IR (`.ll`)."""
        self._build.save(path, fmt)

    def export_library(self, path: str, **_) -> None:
        """Write a shared library (`.so`) and, next to it, `<path>.json` with the
        argument order and types; `tilecraft.runtime.load_module(path)` loads both."""
        self._build.export_library(path)


def _arg_name(a) -> str:
    return getattr(a, "name", repr(a))
