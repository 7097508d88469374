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

Plugins lower their own graph-level ops with `tc.register_strategy` (README,
"Extending tilecraft").

`te`, `lower`, `build` and `compile` are imported on first use, so the command-line tools,
which import `tilecraft.*` modules, do not pay for the Python API.
"""

__version__ = "0.1.0"
__all__ = ["te", "lower", "build", "compile", "register_strategy", "__version__"]


def __getattr__(name: str):
    if name == "te":
        from tilecraft.frontends import te as value
    elif name in ("lower", "build", "compile"):
        from tilecraft import api

        value = getattr(api, name)
    elif name == "register_strategy":
        from tilecraft.topi.strategy import register_strategy as value
    else:
        raise AttributeError(f"module 'tilecraft' has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
