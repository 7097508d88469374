"""`te.extern`: a tensor computed by a registered Python function, and running a
computation that contains such tensors.

```python
@tvm.register_func("my.addone")
def addone(x, y):                      # NDArrays: the inputs, then the outputs
    y[:] = x.numpy() + 1
B = te.extern(A.shape, [A], lambda ins, outs: tvm.tir.call_packed("my.addone", ins[0], outs[0]))
```

Native code does not call back into Python here. Instead a computation with
extern tensors is cut at them (`build_pieces`): each compiled piece computes what
the next extern call (or the final result) needs from what is known so far, the
extern call fills its output arrays, and the last piece computes the requested
outputs. Each piece is an ordinary te function, built with the schedule steps of
its own stages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tilecraft.frontends.te.dtypes import _check_dtype
from tilecraft.frontends.te.schedule import Schedule, _reachable
from tilecraft.frontends.te.tensor import ComputeOp, PlaceholderOp, Tensor, _shape


@dataclass(eq=False)
class ExternOp:
    """What `te.extern` made: a call of a registered function on `inputs`."""

    name: str
    inputs: list[Tensor]
    call: object  # tir.PackedCall
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


def extern(shape, inputs, fcompute: Callable, name: str = "extern", dtype=None, **_) -> Tensor | list[Tensor]:
    """`te.extern(shape, [A, B], lambda ins, outs: tvm.tir.call_packed(...))`;
    `shape` may be a list of shapes for several outputs (then `dtype` a list too)."""
    from tilecraft.tir import PackedCall

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


def split_externs(args: Sequence) -> list[Tensor] | None:
    """The extern tensors the computation of `args` reaches, producers first, or
    None if it has none."""
    tensors = [t for t in args if isinstance(t, Tensor)]
    found = [t for t in _reachable(tensors) if isinstance(t.op, ExternOp)]
    return found or None


def build_pieces(s: Schedule, args: list, name: str, sizes: dict[int, int]):
    """A callable taking the call's arrays (args without explicit sizes) and the
    compiled module(s) behind it."""
    from tilecraft.api import lower_module
    from tilecraft.compiler import compile_loop_module
    from tilecraft.frontends.te.emit import scalar_input
    from tilecraft.frontends.te.symbolic import Var

    call_args = [a for a in args if not (isinstance(a, Var) and id(a) in sizes)]
    externs = split_externs(call_args)
    if externs is None:
        module = lower_module(s, call_args, name, sizes)
        compiled = compile_loop_module(module)[name]
        is_input = [isinstance(a, Var) or not isinstance(a.op, ComputeOp) for a in call_args]
        order = [n for n, i in enumerate(is_input) if i] + [n for n, i in enumerate(is_input) if not i]
        if order == list(range(len(call_args))):
            return compiled, module
        return (lambda *arrays: compiled(*(arrays[n] for n in order))), module
    return _extern_runner(s, call_args, name, sizes, externs, scalar_input)


def _extern_runner(s, call_args, name, sizes, externs, scalar_input):
    from tilecraft.api import lower_module
    from tilecraft.compiler import compile_loop_module
    from tilecraft.frontends.te.symbolic import Var, evaluate
    from tilecraft.nd import NDArray

    def as_tensor(a):
        return scalar_input(a) if isinstance(a, Var) else a

    arg_tensors = [as_tensor(a) for a in call_args]
    scalar_vars = [a for a in call_args if isinstance(a, Var)]
    known = {id(t) for t in arg_tensors if not isinstance(t.op, ComputeOp)}
    steps = []  # ("compiled", function, inputs, outputs) or ("extern", tensor)
    pieces: list = []

    def compute(targets: list[Tensor]):
        needed = [t for t in targets if id(t) not in known]
        if not needed:
            return
        inputs = [t for t in _reachable(needed, through_externs=False) if not isinstance(t.op, ComputeOp)]
        missing = [t.name for t in inputs if id(t) not in known]
        if missing:
            raise ValueError(f"{name}: {', '.join(missing)} must be listed in args")
        # Every piece takes the scalar parameters (a body may read them).
        inputs = [scalar_input(v) for v in scalar_vars] + inputs
        piece_name = f"{name}_part{len(pieces)}"
        module = lower_module(s, scalar_vars + inputs[len(scalar_vars):] + needed, piece_name, sizes,
                              only_own_stages=True)
        pieces.append(module)
        steps.append(("compiled", compile_loop_module(module)[piece_name], inputs, needed))
        known.update(id(t) for t in needed)

    for e in externs:
        compute([t for t in e.op.inputs if isinstance(t.op, ComputeOp)])
        steps.append(("extern", e))
        known.update(id(t) for t in e.op.outputs)
    compute([t for t in arg_tensors if isinstance(t.op, ComputeOp)])

    def run(*arrays):
        env = {id(t): x for t, x in zip(arg_tensors, arrays)}
        for step in steps:
            if step[0] == "compiled":
                _, compiled, ins, outs = step
                for t in outs:
                    if id(t) not in env:
                        shape = tuple(evaluate(d, sizes) for d in t.shape)
                        env[id(t)] = np.zeros(shape, dtype=t.dtype)
                compiled(*[env[id(t)] for t in ins], *[env[id(t)] for t in outs])
            else:
                e = step[1]
                for t in e.op.outputs:
                    if id(t) not in env:
                        shape = tuple(evaluate(d, sizes) for d in t.shape)
                        env[id(t)] = np.zeros(shape, dtype=t.dtype)
                _call_packed(e.op, env, NDArray)

    return run, pieces


def _call_packed(op: ExternOp, env: dict, ndarray_type) -> None:
    from tilecraft.ffi import get_global_func

    call = op.call
    f = get_global_func(call.name)
    values = []
    for a in call.args:
        if isinstance(a, Tensor):
            values.append(env[id(a)].view(ndarray_type))
        else:
            values.append(a)
    f(*values)
