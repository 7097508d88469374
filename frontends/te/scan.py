"""`te.scan`: a recurrence over the first axis, as TVM's scan tutorial writes it.

```python
s_state = te.placeholder((m, n))
s_init = te.compute((1, n), lambda _, i: X[0, i])
s_update = te.compute((m, n), lambda t, i: s_state[t - 1, i] + X[t, i])
s_scan = te.scan(s_init, s_update, s_state, inputs=[X])      # cumulative sum
```

Row `t` of the result is `s_update` at `t`, where reads of `s_state` see the rows
already computed; the first rows are `s_init`. tilecraft runs it as a loop in
Python over `t` (`ScanOp.row_computes` gives what one iteration computes):

- the init computes are built as usual and copied into the first rows;
- each update compute (and every compute between it and a state, as in a
  multi-stage scan cell) is rewritten to compute the single row `t`, with `t` a
  scalar parameter of the compiled function and the states read from the result
  arrays; one native call per row fills row `t`.

A compute between the update and a state must be read at the time index itself
(`s1[t, i]`), which is what makes the row rewrite exact; anything else is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilecraft.frontends.te.dtypes import INDEX
from tilecraft.frontends.te.expr import Cast, Const, IterVar, Read
from tilecraft.frontends.te.reducer import _substitute
from tilecraft.frontends.te.schedule import _reachable
from tilecraft.frontends.te.symbolic import Var
from tilecraft.frontends.te.tensor import ComputeOp, PlaceholderOp, Tensor, _make_compute


@dataclass(eq=False)
class ScanOp:
    """What `te.scan` made: per state, its init, update and placeholder."""

    name: str
    init: list[Tensor]
    update: list[Tensor]
    state: list[Tensor]
    inputs: list[Tensor]
    outputs: list[Tensor] = field(default_factory=list)
    axis: tuple = ()
    reduce_axis: tuple = ()

    @property
    def input_tensors(self) -> list[Tensor]:
        return list(self.init) + list(self.update) + list(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def output(self, index: int) -> Tensor:
        return self.outputs[index]

    def row_computes(self, t: Var) -> list[Tensor]:
        """Per state, a compute of shape (1, ...) giving the update's row `t`."""
        state_ids = {id(p) for p in self.state}
        memo: dict[int, Tensor] = {}

        def depends(c: Tensor) -> bool:
            return any(id(x) in state_ids for x in _reachable([c]))

        def row(c: Tensor) -> Tensor:
            if id(c) in memo:
                return memo[id(c)]
            op = c.op
            if not isinstance(op, ComputeOp):
                raise ValueError(f"te.scan {self.name!r}: {c.name} between update and state must be a te.compute")
            time = op.axis[0]
            rest = [IterVar(a.name, a.dom) for a in op.axis[1:]]
            mapping = {id(time): Cast(t, INDEX)}
            mapping.update({id(a): b for a, b in zip(op.axis[1:], rest)})

            def read(e: Read):
                d = e.tensor
                if not isinstance(d.op, ComputeOp) or not depends(d):
                    return None
                if e.indices[0] is not time:
                    raise ValueError(
                        f"te.scan {self.name!r}: {c.name} reads {d.name}, which depends on the "
                        f"state, at a time index other than its own axis {time.name!r}"
                    )
                rest_indices = tuple(_substitute(i, mapping, read) for i in e.indices[1:])
                return Read(row(d), (Const(0, INDEX),) + rest_indices, e.dtype)

            body = _substitute(op.body, mapping, read)
            axes = (IterVar(f"{time.name}.row", (0, 1)),) + tuple(rest)
            shape = (1,) + tuple(c.shape[1:])
            memo[id(c)] = _make_compute(shape, axes, body, f"{c.name}.row", op.location)
            return memo[id(c)]

        return [row(u) for u in self.update]


def scan(init, update, state_placeholder, inputs=None, name: str = "scan", **_):
    """`te.scan(s_init, s_update, s_state, inputs=[X])`; lists for several states."""
    several = isinstance(init, (list, tuple))
    inits = list(init) if several else [init]
    updates = list(update) if isinstance(update, (list, tuple)) else [update]
    states = list(state_placeholder) if isinstance(state_placeholder, (list, tuple)) else [state_placeholder]
    if not (len(inits) == len(updates) == len(states)) or not inits:
        raise ValueError(f"te.scan {name!r}: give one init, update and state placeholder per state")
    for i, u, p in zip(inits, updates, states):
        if not (isinstance(i, Tensor) and isinstance(u, Tensor) and isinstance(p, Tensor)):
            raise ValueError(f"te.scan {name!r}: init, update and state must be tensors")
        if not isinstance(p.op, PlaceholderOp):
            raise ValueError(f"te.scan {name!r}: the state {p.name} must be a te.placeholder")
        if not isinstance(u.op, ComputeOp) or not isinstance(i.op, ComputeOp):
            raise ValueError(f"te.scan {name!r}: init and update must be te.computes")
        if len(u.shape) != len(p.shape) or len(i.shape) != len(p.shape):
            raise ValueError(f"te.scan {name!r}: init, update and state {p.name} must have one rank")
        if u.dtype != p.dtype or i.dtype != p.dtype:
            raise ValueError(f"te.scan {name!r}: init, update and state {p.name} must have one dtype")
    op = ScanOp(name, inits, updates, states, list(inputs or []))
    outs = [Tensor(u.shape, u.dtype, op) for u in updates]
    return outs if several else outs[0]

