"""tilecraft: a deep-learning compiler built the MLIR way on xDSL.

The Python API follows TVM:

```python
import tilecraft as tc
from tilecraft import te
C = te.compute(...); s = te.create_schedule(C)
print(tc.lower(s, [A, B, C]))
f = tc.build(s, [A, B, C], target="llvm")
m = tc.compile("model.onnx")              # a whole model: y = m(x)
```

Plugins lower their own graph-level ops with `tc.register_strategy`
(docs/guide/extending.md).

`te`, `lower`, `build` and `compile` are imported on first use, so the command-line tools,
which import `tilecraft.*` modules, do not pay for the Python API.

TVM's module names (`tilecraft.tir`, `tilecraft.nd`, ...) import the modules that
define them (`_MODULES`: the TVM-spelled package `compat/`, and `utils/` for what
the layers below use as well), as attributes and in import statements alike.
"""

import importlib
import importlib.abc
import importlib.util
import sys

__version__ = "0.1.0"
__all__ = [
    "te", "tir", "nd", "testing", "target", "runtime", "contrib", "lower", "build", "compile", "analyze",
    "quantize", "register_strategy", "register_func", "get_global_func", "cpu", "cuda", "device", "ext_dev", "__version__",
]  # fmt: skip

# TVM names that tilecraft does not provide, with the reason given to the user.
_NOT_HERE = {
    "relay": "Relay is not supported; import models with tilecraft.compile(model.onnx)",
    "relax": "Relax is not supported; import models with tilecraft.compile(model.onnx)",
    "autotvm": "AutoTVM is not supported; see tilecraft-tune",
    "auto_scheduler": "the auto-scheduler is not supported; see tilecraft-tune",
    "meta_schedule": "MetaSchedule is not supported; see tilecraft-tune",
    # (the GPU devices but CUDA's: where tilecraft runs instead is compat.WHERE_TILECRAFT_RUNS)
    "gpu": None,
    "cl": None,
    "rpc": "RPC is not supported",
    "ir": "IR objects and intrinsic lowering rules (register_intrin_lowering, register_op_attr) "
    "are not supported; te.exp, te.log, ... lower to LLVM's math functions",
    "IRModule": "IRModule is not supported; tilecraft.lower returns the loop IR as text",
    "transform": "TVM's pass infrastructure is not supported; see tilecraft-opt and its passes",
}


# TVM's module names -> where they are defined.
_MODULES = {
    "tir": "tilecraft.compat.tir",
    "contrib": "tilecraft.compat.contrib",
    "target": "tilecraft.compat.target",
    "testing": "tilecraft.compat.testing",
    "nd": "tilecraft.utils.ndarray",
}


class _ModuleNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import tilecraft.nd`, `from tilecraft.contrib import cc`: the module that
    `_MODULES` names, under both names (one module object)."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.partition(".")
        if package == __name__ and name in _MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        module = importlib.import_module(_MODULES[spec.name.partition(".")[2]])
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # The import system gave the defining module this name's spec; it keeps its own.
        module.__spec__ = self.own_spec


sys.meta_path.append(_ModuleNames())


def __getattr__(name: str):
    if name == "te":
        from tilecraft.frontends import te as value
    elif name in ("lower", "build", "compile", "analyze"):
        from tilecraft import api

        value = getattr(api, name)
    elif name in _MODULES:
        value = importlib.import_module(_MODULES[name])
    elif name == "runtime":
        value = importlib.import_module("tilecraft.runtime")
    elif name in ("cpu", "cuda", "device", "ext_dev"):
        value = getattr(importlib.import_module("tilecraft.utils.ndarray"), name)
    elif name in ("register_func", "get_global_func"):
        value = getattr(importlib.import_module("tilecraft.utils.packed_funcs"), name)
    elif name == "quantize":
        from tilecraft.runtime.quantize import quantize as value
    elif name == "register_strategy":
        from tilecraft.topi.strategy import register_strategy as value
    elif name in _NOT_HERE:
        from tilecraft.utils.unsupported import WHERE_TILECRAFT_RUNS, UnsupportedError

        raise UnsupportedError(f"tvm.{name}: {_NOT_HERE[name] or WHERE_TILECRAFT_RUNS}")
    else:
        raise AttributeError(f"module 'tilecraft' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
