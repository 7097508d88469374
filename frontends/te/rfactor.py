"""`s.rfactor(B, ki)`: factoring a reduction, written as two computes.

For `B[i] = sum(A[i, k], k)` with `ko, ki = s[B].split(k, factor=16)`:

```
B.rf[ki, i] = sum(A[i, ko * 16 + ki], ko)     # ki is now a spatial axis
B[i]        = sum(B.rf[ki, i], ki)
```

Both are ordinary te computes, so every later primitive (compute_at of `B.rf`,
vectorizing its `ki`, ...) is the usual one. A split that does not divide the
extent guards the tail (`where ko * 16 + ki < extent`), as the split would.
"""

from __future__ import annotations

from tilecraft.frontends.te.expr import IterVar, Read, Reduce
from tilecraft.frontends.te.ops import _identity, if_then_else
from tilecraft.frontends.te.reducer import _substitute
from tilecraft.frontends.te.tensor import ComputeOp, Tensor, _make_compute


def factor_reduction(stage, tensor: Tensor, axis: IterVar, factor_axis: int):
    op = stage.op
    if not isinstance(op, ComputeOp) or not isinstance(op.body, Reduce):
        raise ValueError(f"rfactor needs a reduction; {tensor.name}'s stage is not one")
    stage._leaf(axis)
    if axis.kind != "reduce":
        raise ValueError(f"rfactor factors over a reduce axis, and {axis.name!r} is spatial")
    reduce = op.body
    roots = list(reduce.axes)
    split = stage._splits.get(id(axis))
    if split is None and not any(axis is r for r in roots):
        raise ValueError(
            f"rfactor over {axis.name!r}: tilecraft factors over a reduce axis or one part "
            "of a single split of it"
        )
    if not 0 <= factor_axis <= len(op.axis):
        raise ValueError(f"rfactor: factor_axis must be in [0, {len(op.axis)}], not {factor_axis}")

    spatial = [IterVar(a.name, a.dom) for a in op.axis]
    kept = IterVar(axis.name, (0, axis.extent))  # the factored axis, now spatial
    mapping: dict[int, object] = {id(a): b for a, b in zip(op.axis, spatial)}
    new_reduce: list[IterVar] = []
    guard = None
    for r in roots:
        if r is axis:
            mapping[id(r)] = kept + r.dom[0] if r.dom[0] else kept
        elif split is not None and r is split[0]:
            parent, outer, inner, inner_ext = split
            rest = outer if axis is inner else inner
            other = IterVar(rest.name, (0, rest.extent), "reduce")
            new_reduce.append(other)
            o, i = (other, kept) if axis is inner else (kept, other)
            value = o * inner_ext + i
            mapping[id(r)] = value + r.dom[0] if r.dom[0] else value
            divides = all(isinstance(x, int) for x in (outer.extent, inner_ext, parent.extent)) and (
                outer.extent * inner_ext == parent.extent
            )
            if not divides:  # a symbolic extent may not divide: guard the tail
                guard = value < parent.extent
        else:
            fresh = IterVar(r.name, r.dom, "reduce")
            new_reduce.append(fresh)
            mapping[id(r)] = fresh
    if not new_reduce:
        raise ValueError(f"rfactor over {axis.name!r} leaves no axis to reduce in {tensor.name}.rf")
    body = _substitute(reduce.body, mapping)
    if guard is not None:
        body = if_then_else(guard, body, _identity(reduce.kind, body.dtype))
    rf_axes = spatial[:factor_axis] + [kept] + spatial[factor_axis:]
    rf_shape = tuple(a.extent for a in rf_axes)
    rf = _make_compute(rf_shape, tuple(rf_axes), Reduce(reduce.kind, body, tuple(new_reduce), reduce.dtype),
                       f"{tensor.name}.rf", op.location)

    # The tensor's new definition: reduce `T.rf` over the factored axis.
    k = IterVar(axis.name, (0, axis.extent), "reduce")
    indices = list(op.axis[:factor_axis]) + [k] + list(op.axis[factor_axis:])
    read = Read(rf, tuple(indices), rf.dtype)
    new_op = _make_compute(tensor.shape, op.axis, Reduce(reduce.kind, read, (k,), reduce.dtype),
                           op.name, op.location).op
    new_op.outputs = [tensor]  # the op of `tensor` in this schedule
    return rf, new_op
