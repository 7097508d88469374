"""`te.decl_tensor_intrin`: declare a tensor intrinsic, TVM's spelling.

```python
A = te.placeholder((4, 8), "float32", name="A")
B = te.placeholder((8, 16), "float32", name="B")
k = te.reduce_axis((0, 8), name="k")
C = te.compute((4, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")

def intrin_func(ins, outs):          # ins, outs: te.IntrinBuffer (name, shape, dtype, scope)
    return {"llvm": te.LoopKernel(kinds={"j": "vectorized"})}

gemm = te.decl_tensor_intrin(C.op, intrin_func, name="gemm_4x16x8")
s[CC].tensorize(ii, gemm)             # the nest under ii must compute what C computes
```

TVM's `intrin_func` returns TIR that calls extern functions; here it returns the
intrinsic's lowering per target: a dict keyed by target name ("llvm": a
`LoopKernel`, the intrinsic's own loop nest with the loop kinds it chooses; an
accelerator adds its own key), or one `LoopKernel` for "llvm" alone. The compute
becomes te IR and the intrinsic is registered by `name`
(`tilecraft.dialects.tensor_intrin`), which is how `sched.tensorize "name"`
finds it when a schedule is replayed from text. `binds` maps the compute's
tensors to the memory scope they must live in (a scope string, or an object with
a `.scope`, as TVM's `decl_buffer(..., scope=...)`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tilecraft.dialects import tensor_intrin as registry
from tilecraft.dialects.tensor_intrin import LoopKernel, TensorIntrin
from tilecraft.frontends.te.tensor import ComputeOp, PlaceholderOp, Tensor

__all__ = ["IntrinBuffer", "LoopKernel", "TensorIntrin", "decl_tensor_intrin"]


@dataclass(frozen=True)
class IntrinBuffer:
    """What `intrin_func` receives for each input and output of the intrinsic."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    scope: str | None = None


def decl_tensor_intrin(
    op: ComputeOp | Tensor,
    intrin_func: Callable[[list[IntrinBuffer], list[IntrinBuffer]], object] | None = None,
    name: str | None = None,
    binds: dict | None = None,
) -> TensorIntrin:
    """Declare (and register by `name`) the intrinsic computing `op`: see the module
    docstring. Without `intrin_func` the intrinsic lowers on "llvm" with the default
    `LoopKernel`."""
    from tilecraft.frontends.te.emit import build_module

    if isinstance(op, Tensor):
        op = op.op
    if not isinstance(op, ComputeOp):
        raise ValueError(f"decl_tensor_intrin takes a te.compute op (C.op), not {op!r}")
    if op.num_outputs != 1:
        raise ValueError("decl_tensor_intrin: the compute must have one output")
    out = op.output(0)
    name = name or f"{out.name}_intrin"
    inputs = op.input_tensors
    for t in inputs:
        if not isinstance(t.op, PlaceholderOp):
            raise ValueError(
                f"decl_tensor_intrin: {name} reads {t.name}, which is computed; an "
                "intrinsic's compute reads placeholders only"
            )
    for t in inputs + [out]:
        if not all(isinstance(d, int) for d in t.shape):
            raise ValueError(f"decl_tensor_intrin: {t.name} of {name} needs a constant shape")
    scopes = _scopes(binds or {}, inputs + [out], name)
    ins = [IntrinBuffer(t.name, tuple(t.shape), t.dtype, scopes.get(t.name)) for t in inputs]
    outs = [IntrinBuffer(out.name, tuple(out.shape), out.dtype, scopes.get(out.name))]
    lowerings = intrin_func(ins, outs) if intrin_func is not None else LoopKernel()
    if isinstance(lowerings, LoopKernel):
        lowerings = {"llvm": lowerings}
    if not isinstance(lowerings, dict) or not all(isinstance(k, str) for k in lowerings):
        raise ValueError(
            f"decl_tensor_intrin: intrin_func of {name} must return a dict of lowerings "
            f"keyed by target name (e.g. {{'llvm': te.LoopKernel()}}), not {lowerings!r}"
        )
    if "llvm" in lowerings and not isinstance(lowerings["llvm"], LoopKernel):
        raise ValueError(f"decl_tensor_intrin: the 'llvm' lowering of {name} must be a te.LoopKernel")
    module = build_module(None, [*inputs, out], name=name)
    function = module.body.block.first_op
    function.detach()
    intrin = registry.intrin_from_function(name, function, lowerings, scopes)
    _check_loop_kernel(intrin)
    return registry.register(intrin)


def _scopes(binds: dict, tensors: list[Tensor], name: str) -> dict[str, str]:
    known = {id(t): t for t in tensors}
    scopes = {}
    for t, b in binds.items():
        if id(t) not in known:
            raise ValueError(f"decl_tensor_intrin: binds of {name} names {t!r}, which the compute does not use")
        scope = b if isinstance(b, str) else getattr(b, "scope", None)
        if not isinstance(scope, str):
            raise ValueError(f"decl_tensor_intrin: binds of {name} maps {t.name} to {b!r}, not a scope")
        scopes[t.name] = scope
    return scopes


def _check_loop_kernel(intrin: TensorIntrin) -> None:
    kernel = intrin.lowering("llvm")
    if not isinstance(kernel, LoopKernel):
        return
    axes = intrin.spatial_names + intrin.reduce_names
    order = kernel.loop_order(intrin)
    if sorted(order) != sorted(axes):
        raise ValueError(
            f"decl_tensor_intrin: the LoopKernel order of {intrin.name} must list its axes "
            f"{', '.join(axes)} once each, not {', '.join(order)}"
        )
    from tilecraft.dialects.loop import LOOP_KINDS

    for axis, kind in kernel.kinds.items():
        if axis not in axes:
            raise ValueError(f"decl_tensor_intrin: LoopKernel of {intrin.name} names no axis {axis!r}")
        if kind not in LOOP_KINDS or kind == "parallel":
            raise ValueError(
                f"decl_tensor_intrin: LoopKernel kind of {axis!r} must be serial, unrolled "
                f"or vectorized, not {kind!r}"
            )
    vectorized = [a for a in axes if kernel.kind(intrin, a) == "vectorized"]
    if len(vectorized) > 1 or any(a in intrin.reduce_names for a in vectorized):
        raise ValueError(
            f"decl_tensor_intrin: LoopKernel of {intrin.name} may vectorize one spatial axis, "
            f"not {', '.join(vectorized)}"
        )
