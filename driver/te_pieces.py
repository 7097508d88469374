"""Running a computation that native code cannot run in one function: one with
`te.extern` calls (a registered Python function) or `te.scan` recurrences.

The computation is cut at those ops. `build_pieces` walks them producers first:
before each, one compiled piece computes the te.computes it needs from what is
known so far; then the op runs (the extern's function on NDArrays; for a scan,
its init rows, then one native call per row `t`, see `tilecraft.frontends.te.scan`);
a last piece computes the requested outputs. Each piece is an ordinary te
function built with the schedule steps of its own stages.

Without such ops the computation is one function, called with its arguments
reordered to the backend's convention (inputs, then outputs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tilecraft.frontends.te.emit import Sizes, build_module, scalar_input
from tilecraft.frontends.te.extern import ExternOp
from tilecraft.frontends.te.scan import ScanOp
from tilecraft.frontends.te.schedule import Schedule, _reachable
from tilecraft.frontends.te.symbolic import Var, evaluate
from tilecraft.frontends.te.tensor import ComputeOp, Tensor
from tilecraft.utils.gc_pause import compiling


def lower_module(s, args, name: str, sizes: Sizes | None = None, only_own_stages: bool = False):
    """The loop-level module of a schedule (te + sched lowered to the loop dialect)."""
    from tilecraft.driver.context import lower_to_loops

    return lower_to_loops(build_module(s, args, name, sizes, only_own_stages))


def call_packed_function(op: ExternOp, env: dict) -> None:
    """Run an extern op: its registered function on the arrays in `env` (by tensor
    id), as NDArrays, with its other arguments as given."""
    from tilecraft.utils.packed_funcs import get_global_func
    from tilecraft.utils.ndarray import NDArray

    call = op.call
    f = get_global_func(call.name)
    assert f is not None  # (get_global_func raises for a name not registered)
    f(*(env[id(a)].view(NDArray) if isinstance(a, Tensor) else a for a in call.args))


def cut_ops(args: Sequence) -> list | None:
    """The extern and scan ops the computation of `args` reaches, producers
    first, each once; None if there are none."""
    tensors = [t for t in args if isinstance(t, Tensor)]
    found: dict[int, ExternOp | ScanOp] = {}
    for t in _reachable(tensors):
        if isinstance(t.op, (ExternOp, ScanOp)):
            found.setdefault(id(t.op), t.op)
    return list(found.values()) or None


@compiling
def build_pieces(
    s: Schedule, args: list, name: str, sizes: Sizes, jit: bool = True
) -> tuple[Callable | None, ModuleOp | list]:
    """A callable taking the call's arrays (args without explicit sizes) and the
    loop-level modules behind it (one, or a list of (what it computes, module)).
    `sizes` gives each te.var size a value, or its name to keep it symbolic (one
    function for every size: only without te.extern and te.scan)."""
    from tilecraft.driver.kernels import compile_loop_module

    call_args = [a for a in args if not (isinstance(a, Var) and id(a) in sizes)]
    ops = cut_ops(call_args)
    if ops is None:
        module = lower_module(s, call_args, name, sizes)
        if not jit:
            return None, module
        compiled = compile_loop_module(module)[name]
        is_input = [isinstance(a, Var) or not isinstance(a.op, ComputeOp) for a in call_args]
        order = [n for n, i in enumerate(is_input) if i] + [n for n, i in enumerate(is_input) if not i]
        if order == list(range(len(call_args))):
            return compiled, module
        return (lambda *arrays: compiled(*(arrays[n] for n in order))), module
    return _Pieces(s, call_args, name, sizes, jit).build(ops)


class _Pieces:
    def __init__(self, s, call_args, name, sizes, jit):
        self.s, self.name, self.sizes, self.jit = s, name, sizes, jit
        self.scalar_vars = [a for a in call_args if isinstance(a, Var)]
        self.arg_tensors = [scalar_input(a) if isinstance(a, Var) else a for a in call_args]
        self.known = {id(t) for t in self.arg_tensors if not isinstance(t.op, ComputeOp)}
        self.steps: list[tuple] = []
        self.modules: list[tuple[str, object]] = []

    def piece(self, outputs: list[Tensor], what: str, extra: list | None = None):
        """Compile a function computing `outputs` from known tensors; `extra` are
        leading scalar parameters (a scan's time). Returns (function, inputs)."""
        from tilecraft.driver.kernels import compile_loop_module

        extra = extra or []
        inputs = [t for t in _reachable(outputs, through_externs=False) if not isinstance(t.op, ComputeOp)]
        missing = [t.name for t in inputs if id(t) not in self.known]
        if missing:
            raise ValueError(f"{self.name}: {', '.join(missing)} must be listed in args")
        # Every piece takes the scalar parameters (a body may read them).
        params = extra + self.scalar_vars
        piece_name = f"{self.name}_part{sum(m is not None for _, m in self.modules)}"
        module = lower_module(self.s, params + inputs + outputs, piece_name, self.sizes, only_own_stages=True)
        self.modules.append((what, module))
        function = compile_loop_module(module)[piece_name] if self.jit else None
        return function, [scalar_input(v) for v in params] + inputs

    def compute(self, targets: list[Tensor]):
        needed = [t for t in targets if isinstance(t.op, ComputeOp) and id(t) not in self.known]
        if needed:
            function, inputs = self.piece(needed, ", ".join(t.name for t in needed))
            self.steps.append(("compiled", function, inputs, needed))
            self.known.update(id(t) for t in needed)

    def build(self, ops):
        for op in ops:
            if isinstance(op, ExternOp):
                self.compute(op.inputs)
                self.steps.append(("extern", op))
                outs = ", ".join(t.name for t in op.outputs)
                self.modules.append((f"te.extern {op.name}: {op.call.name}(...) fills {outs}", None))
            else:
                self.compute(op.init)
                self.known.update(id(p) for p in op.state)
                t = Var(f"{op.name}.t", "int32")
                rows = op.row_computes(t)
                function, inputs = self.piece(rows, f"row t of {op.name} (run for each t)", [t])
                self.steps.append(("scan", op, function, inputs, rows))
            self.known.update(id(t) for t in op.outputs)
        self.compute(self.arg_tensors)
        return (self.run if self.jit else None), self.modules

    def array(self, env, t: Tensor) -> np.ndarray:
        if id(t) not in env:
            env[id(t)] = np.zeros(tuple(evaluate(d, self.sizes) for d in t.shape), dtype=t.dtype)
        return env[id(t)]

    def run(self, *arrays):
        env = {id(t): x for t, x in zip(self.arg_tensors, arrays)}
        for step in self.steps:
            if step[0] == "compiled":
                _, function, ins, outs = step
                function(*[env[id(t)] for t in ins], *[self.array(env, t) for t in outs])
            elif step[0] == "extern":
                for t in step[1].outputs:
                    self.array(env, t)
                call_packed_function(step[1], env)
            else:
                self.run_scan(env, *step[1:])

    def run_scan(self, env, op: ScanOp, function, ins, rows):
        results = [self.array(env, t) for t in op.outputs]
        for state, init, result in zip(op.state, op.init, results):
            env[id(state)] = result  # the update reads the rows computed so far
            start = evaluate(init.shape[0], self.sizes)
            result[:start] = env[id(init)]
        row_arrays = [self.array(env, r) for r in rows]
        time = ins[0]
        steps = evaluate(op.update[0].shape[0], self.sizes)
        for t in range(start, steps):
            env[id(time)] = np.array([t], dtype="int32")
            function(*[env[id(x)] for x in ins], *row_arrays)
            for result, row in zip(results, row_arrays):
                result[t] = row[0]
