"""`tilecraft.te`: TVM's tensor-expression API, producing te + sched IR.

The user describes *what* to compute with `placeholder`, `compute` and reductions,
and *how* with a `Schedule`; `build_module` turns both into one `func.func`:

```python
A = te.placeholder((64, 32), "float32", name="A")
B = te.placeholder((32, 64), "float32", name="B")
k = te.reduce_axis((0, 32), name="k")
C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
s = te.create_schedule(C)
io, ii = s[C].split(C.op.axis[0], factor=8)
s[C].vectorize(ii)
```

```mlir
// (SSA names simplified: the printer renames %i in the schedule to %i_1)
func.func @main(%A: tensor<64x32xf32> {tc.name = "A"}, %B: ...) -> tensor<64x64xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<64x64xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 32) -> f32 { ... }
    te.yield %s : f32
  }
  sched.schedule {
    %s_C = sched.stage %C : tensor<64x64xf32>
    %i = sched.axis %s_C "i"
    %i.outer, %i.inner = sched.split %i by 8
    sched.vectorize %i.inner
  }
  func.return %C : tensor<64x64xf32>
}
```

Design:
- Expressions are a small immutable tree (`Expr`). Types are checked and casts made
  explicit when a node is built, so a dtype error is raised at the user's line, and
  IR generation is one op per node. Python numbers take the other operand's dtype;
  two typed operands of different dtypes are promoted only where nothing is lost
  and nothing is surprising (int8 -> int32, float32 -> float64, an index variable
  -> the other operand's type); anything else asks for an explicit `astype`.
- `==` on expressions builds a comparison, as in TVM, so expressions have no truth
  value and this package compares IterVars by identity only (`is`, `id()` keys).
- A schedule is recorded as a list of steps and emitted into a `sched.schedule`
  region only when a function is built, so one schedule can be lowered and built
  many times. Every axis object is one SSA handle; `sched.stage`/`sched.axis` are
  emitted on first use. Steps carry the Python source location of the call that
  made them, so a schedule the verifier rejects is reported at the user's line.
- Axis naming convention shared with `tilecraft.dialects.sched_replay`: a compute's
  axes are named after its lambda parameters and reduce axes (suffixed `_1`, `_2`
  when two would clash); a `cache_read` stage has the spatial axis names of the
  stage it copies (`ax0, ax1, ...` for a placeholder); after
  `cache_write`, the cache stage has fresh axes with the compute's axis names
  (and its reduce axes), and the original stage (now the copy) keeps the
  compute's spatial axes, so `C.op.axis` still names its loops, as in TVM.
- TVM's spelling works as written (`import tilecraft as tvm`): `te.var` sizes are
  bound per call (`symbolic`), `te.comm_reducer` maps to sum/prod/max/min or an
  argmax rewrite (`reducer`), `s.rfactor` makes two computes (`rfactor`), and
  `te.extern` / `te.scan` cut a computation into compiled parts run from Python
  (`extern`, `scan`; the runner is `tilecraft.driver.te_pieces`).

The package's modules, each importing only the ones before it: `dtypes`; `expr`
(expression nodes, then the functions that build them with their type rules);
`ops` (elementwise functions and reductions); `symbolic` (`te.var`); `reducer`
(`te.comm_reducer`); `tensor` (tensors and `compute`); `schedule` (schedules and
cache stages); `rfactor`; `extern` and `scan`; `emit` (IR generation,
`build_module`); and `tensor_intrin` (`te.decl_tensor_intrin`, which `emit`s the
intrinsic's compute and registers it by name for `s[C].tensorize`). This file re-exports their public names.
"""

from tilecraft.frontends.te.dtypes import DTYPES, INDEX
from tilecraft.frontends.te.emit import build_module, shape_vars
from tilecraft.frontends.te.expr import (
    Binary,
    Cast,
    Compare,
    Const,
    Expr,
    IfThenElse,
    IterVar,
    Read,
    Reduce,
    Unary,
    _walk as _walk,  # topi.schedule walks expressions
    cast,
    const,
    reinterpret,
)
from tilecraft.frontends.te.ops import (
    abs,
    acos,
    acosh,
    all,
    any,
    asin,
    asinh,
    atan,
    atanh,
    ceil,
    cos,
    cosh,
    erf,
    exp,
    floor,
    fmod,
    if_then_else,
    log,
    max,
    max_value,
    maximum,
    min,
    min_value,
    minimum,
    reduce_axis,
    reduce_max,
    reduce_min,
    reduce_sum,
    power,
    round,
    sigmoid,
    sin,
    sinh,
    sqrt,
    sum,
    tan,
    tanh,
)
from tilecraft.frontends.te.schedule import (
    CacheTensor,
    Schedule,
    Stage,
    StageView,
    ThreadAxis,
    create_schedule,
    thread_axis,
)
from tilecraft.frontends.te.extern import ExternOp, extern
from tilecraft.frontends.te.reducer import CommReducer, comm_reducer
from tilecraft.frontends.te.scan import ScanOp, scan
from tilecraft.frontends.te.symbolic import Var, size_var, var
from tilecraft.frontends.te.tensor import ComputeOp, PlaceholderOp, Tensor, compute, placeholder
from tilecraft.frontends.te.tensor_intrin import IntrinBuffer, LoopKernel, TensorIntrin, decl_tensor_intrin


_NOT_HERE = {
    "hybrid": "hybrid scripts are not supported",
    "create_prim_func": "TensorIR (create_prim_func) is not supported; use te.create_schedule",
    "gradient": "automatic differentiation is not supported",
}


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    why = _NOT_HERE.get(name, "not supported by tilecraft (see docs/guide/compatibility.md)")
    from tilecraft.utils.unsupported import UnsupportedError

    raise UnsupportedError(f"te.{name}: {why}")

__all__ = [
    "CommReducer",
    "IntrinBuffer",
    "LoopKernel",
    "TensorIntrin",
    "decl_tensor_intrin",
    "ExternOp",
    "Var",
    "comm_reducer",
    "ScanOp",
    "scan",
    "extern",
    "max_value",
    "min_value",
    "shape_vars",
    "size_var",
    "var",
    "DTYPES",
    "INDEX",
    "Binary",
    "CacheTensor",
    "Cast",
    "Compare",
    "ComputeOp",
    "Const",
    "Expr",
    "IfThenElse",
    "IterVar",
    "PlaceholderOp",
    "Read",
    "Reduce",
    "Schedule",
    "Stage",
    "StageView",
    "Tensor",
    "Unary",
    "abs",
    "acos",
    "acosh",
    "all",
    "any",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "build_module",
    "cast",
    "ceil",
    "compute",
    "const",
    "cos",
    "cosh",
    "create_schedule",
    "thread_axis",
    "ThreadAxis",
    "erf",
    "exp",
    "floor",
    "fmod",
    "if_then_else",
    "log",
    "max",
    "maximum",
    "min",
    "minimum",
    "placeholder",
    "power",
    "reduce_axis",
    "reduce_max",
    "reduce_min",
    "reduce_sum",
    "reinterpret",
    "round",
    "sigmoid",
    "sin",
    "sinh",
    "sqrt",
    "sum",
    "tan",
    "tanh",
]
