"""`te.extern`: a tensor computed by a registered Python function, and running a
computation that contains such tensors.

```python
@tvm.register_func("my.addone")
def addone(x, y):                      # NDArrays: the inputs, then the outputs
    y[:] = x.numpy() + 1
B = te.extern(A.shape, [A], lambda ins, outs: tvm.tir.call_packed("my.addone", ins[0], outs[0]))
```

Native code does not call back into Python here: a computation with extern
tensors is cut at them and run piece by piece (`tilecraft.driver.te_pieces`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tilecraft.frontends.te.dtypes import _check_dtype
from tilecraft.frontends.te.tensor import Tensor, _shape


@dataclass(eq=False)
class ExternOp:
    """What `te.extern` made: a call of a registered function on `inputs`."""

    name: str
    inputs: list[Tensor]
    call: PackedCall  # tir.call_packed's
    outputs: list[Tensor] = field(default_factory=list)
    axis: tuple = ()
    reduce_axis: tuple = ()

    @property
    def input_tensors(self) -> list[Tensor]:
        return list(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def output(self, index: int) -> Tensor:
        return self.outputs[index]


class PackedCall:
    """`tvm.tir.call_packed("name", *args)` inside a `te.extern` body: a call of the
    global function `name` (tvm.register_func) on arrays and Python values."""

    def __init__(self, name: str, args: tuple):
        self.name, self.args = name, args

    def __repr__(self) -> str:
        return f"call_packed({self.name!r}, ...)"


def call_packed(name: str, *args) -> PackedCall:
    if not isinstance(name, str):
        raise ValueError(f"call_packed takes the function's name first, not {name!r}")
    return PackedCall(name, args)


def extern(shape, inputs, fcompute: Callable, name: str = "extern", dtype=None, **_) -> Tensor | list[Tensor]:
    """`te.extern(shape, [A, B], lambda ins, outs: tvm.tir.call_packed(...))`;
    `shape` may be a list of shapes for several outputs (then `dtype` a list too)."""
    inputs = list(inputs)
    for t in inputs:
        if not isinstance(t, Tensor):
            raise ValueError(f"te.extern {name!r}: inputs must be tensors, not {t!r}")
    several = isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple))
    shapes = [_shape(s, "te.extern") for s in shape] if several else [_shape(shape, "te.extern")]
    dtypes = dtype if isinstance(dtype, (list, tuple)) else [dtype] * len(shapes)
    dtypes = [_check_dtype(d) if d else (inputs[0].dtype if inputs else "float32") for d in dtypes]
    op = ExternOp(name, inputs, None)
    outs = [Tensor(s, d, op) for s, d in zip(shapes, dtypes)]
    call = fcompute(inputs, outs)
    if not isinstance(call, PackedCall):
        raise NotImplementedError(
            f"te.extern {name!r}: the body must be tvm.tir.call_packed(\"registered.name\", ...) "
            "of a function registered with tvm.register_func"
        )
    op.call = call
    return outs if several else outs[0]
