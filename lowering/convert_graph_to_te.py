"""convert-graph-to-te: each fused group becomes one te function with a schedule.

For every `graph.fused` op the pass builds the group's te program with topi (one
`te.placeholder` per region argument, in order; one topi compute per graph op,
`topi/strategy.py`), chooses its schedule by the group's anchor (the kernel's own
schedule for conv2d/dense/matmul, else the default CPU schedules of
`topi/schedule.py`: rows for softmax/layer_norm/reductions, fuse-split-vectorize-
parallel for injective groups), emits it with `te.build_module` and calls it:

```mlir
%y = graph.fused "fused_dense_relu" (%x, %w) : (...) -> (tensor<4x8xf32>) {
^bb0(%a: tensor<4x16xf32>, %b: tensor<8x16xf32>):
  %d = graph.dense %a, %b : ...
  %r = graph.relu %d : ...
  graph.yield %r : tensor<4x8xf32>
} {tc.offsets = array<i64: 0>}
```
becomes
```mlir
%y = func.call @fused_dense_relu(%x, %w) {tc.offsets = array<i64: 0>} : (...) -> tensor<4x8xf32>
func.func @fused_dense_relu(%p0: tensor<4x16xf32> {tc.name = "p0"}, ...) -> tensor<4x8xf32> {
  %dense = te.compute "dense" ... %relu = te.compute "relu" ...
  sched.schedule { ... }
  func.return %relu : tensor<4x8xf32>
}
```

- Groups of identical structure (op sequence, types, attributes, inlined
  constants) share one function: ResNet's repeated blocks compile once.
- A group input that is a small constant (`graph.constant`, or a `graph.weight` of
  at most `INLINE_CONSTANT_ELEMENTS` elements) is folded into the kernel instead of
  passed, so scalars (rank 0, which te tensors cannot be) work and a Pow by 2
  becomes a multiply. Larger constants and weights inside a region are hoisted out
  in front of the call and passed as arguments.
- A graph op outside any group is first wrapped in a group of its own
  (`wrap_unfused_ops`), which is how a model compiles with fusion off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter

from tilecraft.dialects import graph
from tilecraft.dialects.graph.shapes import shape_of
from tilecraft.frontends import te
from tilecraft.frontends.te.emit import symbolic_size
from tilecraft.topi import strategy
from tilecraft.topi.common import flat_index, te_dtype, te_size
from tilecraft.transforms.concat_in_place import is_in_place
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.symbolic import SymExpr
from tilecraft.utils.weights import WeightError, store_of

PASS = "convert-graph-to-te"
# Constants up to this many elements are folded into the kernels that use them.
INLINE_CONSTANT_ELEMENTS = 16
_VALUE_OPS = (graph.ConstantOp, graph.WeightOp)


# -- wrapping loose ops --------------------------------------------------------------


def wrap_unfused_ops(module: ModuleOp) -> int:
    """Put every graph compute op that is in no `graph.fused` group into a group of
    its own (named after the op); returns how many were wrapped."""
    count = 0
    for function in [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]:
        for op in list(function.body.block.ops):
            if not isinstance(op, graph.GraphOp) or is_in_place(op):  # (a view: no kernel)
                continue
            block = Block(arg_types=[v.type for v in op.operands])
            inner = op.clone()
            for n, arg in enumerate(block.args):
                inner.operands[n] = arg
            block.add_ops([inner, graph.YieldOp(list(inner.results))])
            name = f"{op.name.removeprefix('graph.')}_{count}"
            fused = graph.FusedOp(name, list(op.operands), [r.type for r in op.results], Region(block))
            fused.location = op.location  # errors about the group point at the op
            Rewriter.replace_op(op, fused)
            count += 1
    return count


# -- constants -------------------------------------------------------------------------


def constant_value(op: Operation, module: ModuleOp) -> np.ndarray | None:
    """The value of a graph.constant, or of a graph.weight in the module's store."""
    t = op.results[0].type
    assert isinstance(t, TensorType)
    shape = tuple(t.get_shape())
    if isinstance(op, graph.ConstantOp):
        values = np.array(op.value.get_values(), dtype=np.dtype(_numpy_name(t)))
        return np.broadcast_to(values.reshape(()), shape).copy() if values.size == 1 else values.reshape(shape)
    if isinstance(op, graph.WeightOp):
        store = store_of(module)
        if store is None:
            raise OpError(op, f"{PASS}: the module names no weight store for '{op.weight_name.data}'")
        try:
            return np.asarray(store[op.weight_name.data]).reshape(shape)
        except WeightError as e:
            raise OpError(op, f"{PASS}: {e}") from None
    return None


def _numpy_name(t: TensorType) -> str:
    name = te_dtype(t)
    return "bool" if name == "bool" else name


def const_tensor(value: np.ndarray, dtype: str) -> te.Tensor:
    """A small constant as a te compute: one literal, or a select on the flat index."""
    shape = value.shape or (1,)
    flat = value.reshape(-1)
    literal = (lambda v: bool(v)) if dtype == "bool" else (float if dtype.startswith("float") else int)
    if np.all(flat == flat[0]):
        return te.compute(shape, lambda *i: te.const(literal(flat[0]), dtype), name="const")

    def select(*i):
        at = flat_index(i, shape)
        result = te.const(literal(flat[-1]), dtype)
        for k in range(len(flat) - 2, -1, -1):
            result = te.if_then_else(at == k, te.const(literal(flat[k]), dtype), result)
        return result

    return te.compute(shape, select, name="const")


def _is_small(value: np.ndarray) -> bool:
    return value.size <= INLINE_CONSTANT_ELEMENTS


# -- one group ---------------------------------------------------------------------------


@dataclass
class Kernel:
    """A group's te function, and how its call passes arguments."""

    function: func.FuncOp
    passed: list[int]  # the group operands passed to the function (others folded in)
    hoisted: list[int]  # positions of region value ops to clone in front of the call


def _placeholder(value: SSAValue, name: str, op: Operation, sizes: dict[str, te.Var]) -> te.Tensor:
    """The te input for a group operand; a scalar is a one-element tensor, as the
    computes make a rank-0 result (te tensors have at least one axis). A size
    known when the program runs is a te.var of its name (one per name in `sizes`)."""
    t = value.type
    if not isinstance(t, TensorType):
        raise OpError(op, f"{PASS}: operand type {t} is not a tensor")
    shape = tuple(te_size(d, sizes) for d in shape_of(t))
    return te.placeholder(shape or (1,), te_dtype(t), name=name)


def _refuse_empty(op: Operation) -> None:
    """Kernels have no zero-extent loops or buffers: an empty tensor is an error at
    the op (compile-model folds them away first, with fold-empty-tensors)."""
    for v in (*op.operands, *op.results):
        if isinstance(v.type, TensorType) and 0 in v.type.get_shape():
            raise OpError(op, f"{PASS}: '{op.name}' works on an empty tensor ({v.type}), which no "
                          "kernel takes; run fold-empty-tensors first (compile-model does)")


def build_kernel(fused: graph.FusedOp, module: ModuleOp, name: str) -> Kernel:
    block = fused.body.block
    for op in block.ops:
        _refuse_empty(op)
    env: dict[SSAValue, te.Tensor] = {}
    sizes: dict[str, te.Var] = {}  # the te.var of each size known when it runs
    constants: dict[SSAValue, np.ndarray] = {}
    placeholders: list[te.Tensor] = []
    passed: list[int] = []
    hoisted: list[int] = []
    for n, (arg, outer) in enumerate(zip(block.args, fused.inputs)):
        source = outer.owner if isinstance(outer.owner, _VALUE_OPS) else None
        value = constant_value(source, module) if source is not None else None
        if value is not None and (_is_small(value) or not value.shape):
            constants[arg] = value
            env[arg] = const_tensor(value, te_dtype(arg.type))
            continue
        env[arg] = _placeholder(arg, f"p{len(placeholders)}", fused, sizes)
        placeholders.append(env[arg])
        passed.append(n)
    anchor_op, anchor, anchor_stages = None, None, []
    for position, op in enumerate(block.ops):
        if isinstance(op, graph.YieldOp):
            break
        if isinstance(op, _VALUE_OPS):
            value = constant_value(op, module)
            constants[op.results[0]] = value
            if _is_small(value) or not value.shape:
                env[op.results[0]] = const_tensor(value, te_dtype(op.results[0].type))
            else:
                env[op.results[0]] = _placeholder(op.results[0], f"p{len(placeholders)}", op, sizes)
                placeholders.append(env[op.results[0]])
                hoisted.append(position)
            continue
        inputs = [env[v] for v in op.operands]
        known = [constants.get(v) for v in op.operands]
        before = {id(t) for t in _all_stages(list(env.values()))}
        try:
            outs = strategy.compute(op, inputs, known)
        except NotImplementedError:
            raise OpError(
                op,
                f"{PASS}: no te lowering for '{op.name}'; a plugin op gets one with "
                "tilecraft.register_strategy (see docs/guide/extending.md)",
            ) from None
        except (ValueError, graph.ShapeError) as e:
            raise OpError(op, f"{PASS}: cannot lower '{op.name}': {e}") from None
        except TypeError as e:  # (a computation that needs a static size met a te.var)
            if not sizes:
                raise
            raise OpError(op, f"{PASS}: '{op.name}' has sizes known only when it runs "
                          f"({', '.join(sizes)}), which its lowering cannot take yet ({e})") from None
        for r, t in zip(op.results, outs):
            if isinstance(r.type, TensorType) and r.type.get_shape() and not _same_shape(r.type, t, sizes):
                raise OpError(op, f"{PASS}: '{op.name}' computes shape {t.shape}, its result type says {r.type}")
            env[r] = t
        if anchor is None and op.name in strategy.ANCHOR_SCHEDULES:
            anchor_op, anchor = op.name, outs[0]
            anchor_stages = [t for t in _all_stages(outs) if id(t) not in before]
    outputs: list[te.Tensor] = []
    for v in block.last_op.operands:
        t = env[v]
        if isinstance(t.op, te.PlaceholderOp) or any(t is o for o in outputs):
            src = t  # a result must be a distinct compute: copy
            t = te.compute(src.shape, lambda *i, src=src: src[i], name="copy")
        outputs.append(t)
    try:
        s = strategy.schedule_group(outputs, anchor_op, anchor, anchor_stages)
        names = {id(v): name for name, v in sizes.items()}
        kernel_module = te.build_module(s, placeholders + outputs, name, names)
    except ValueError as e:
        raise OpError(fused, f"{PASS}: cannot build group '{fused.group_name.data}': {e}") from None
    except TypeError as e:  # (a heuristic that needs a static size met a te.var)
        if not sizes:
            raise
        raise OpError(fused, f"{PASS}: group '{fused.group_name.data}' has sizes known only when "
                      f"it runs ({', '.join(sizes)}), which its schedule cannot take yet ({e})") from None
    function = kernel_module.body.block.first_op
    assert isinstance(function, func.FuncOp)
    function.detach()
    return Kernel(function, passed, hoisted)


def _same_shape(t: TensorType, computed: te.Tensor, sizes: dict[str, te.Var]) -> bool:
    names = {id(v): name for name, v in sizes.items()}
    try:
        return tuple(shape_of(t)) == tuple(SymExpr.lift(symbolic_size(d, names)) if not isinstance(d, int)
                                           else d for d in computed.shape)  # fmt: skip
    except ValueError:
        return False


def _all_stages(tensors: list[te.Tensor]) -> list[te.Tensor]:
    from tilecraft.topi.schedule import stages

    return stages([t for t in tensors if isinstance(t.op, te.ComputeOp)])


def structure_key(fused: graph.FusedOp, module: ModuleOp) -> str:
    """What makes two groups compile to the same kernel: the ops, their attributes
    and types, how values flow, and the values of constants folded in."""
    numbers: dict[SSAValue, int] = {}
    parts = []
    block = fused.body.block
    for arg, outer in zip(block.args, fused.inputs):
        numbers[arg] = len(numbers)
        source = outer.owner if isinstance(outer.owner, _VALUE_OPS) else None
        value = constant_value(source, module) if source is not None else None
        folded = value is not None and (_is_small(value) or not value.shape)
        parts.append(f"arg {arg.type} {value.tolist() if folded else ''}")
    for op in block.ops:
        operands = [numbers[v] for v in op.operands]
        attrs = sorted((k, str(v)) for k, v in op.attributes.items())
        props = sorted((k, str(v)) for k, v in op.properties.items())
        if isinstance(op, _VALUE_OPS):  # folded in: its value matters; passed: its type
            value = constant_value(op, module)
            props = [value.tolist()] if _is_small(value) or not value.shape else []
        types = [str(r.type) for r in op.results]
        parts.append(f"{op.name} {operands} {attrs} {props} {types}")
        for r in op.results:
            numbers[r] = len(numbers)
    return "\n".join(parts)


# -- the pass ------------------------------------------------------------------------------


class LowerFusedGroup(RewritePattern):
    """A fused group becomes a call of its kernel, a te function built on first use
    and shared by every group of the same structure (`structure_key`)."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.kernels: dict[str, Kernel] = {}
        self.taken = {op.sym_name.data for op in module.body.block.ops if isinstance(op, func.FuncOp)}

    def kernel(self, fused: graph.FusedOp) -> Kernel:
        key = structure_key(fused, self.module)
        kernel = self.kernels.get(key)
        if kernel is None:
            name, n = _symbol(fused.group_name.data), 1
            while name in self.taken:
                name, n = f"{_symbol(fused.group_name.data)}_{n}", n + 1
            self.taken.add(name)
            kernel = build_kernel(fused, self.module, name)
            self.module.body.block.add_op(kernel.function)
            self.kernels[key] = kernel
        return kernel

    @op_type_rewrite_pattern
    def match_and_rewrite(self, fused: graph.FusedOp, rewriter: PatternRewriter) -> None:
        kernel = self.kernel(fused)
        args = [fused.inputs[n] for n in kernel.passed]
        for op in _hoisted_ops(fused, kernel):
            clone = op.clone()
            rewriter.insert(clone, InsertPoint.before(fused))
            args.append(clone.results[0])
        # A scalar crosses the call as the kernel's one-element tensor (te tensors
        # have axes): graph.reshape at the boundary, which runtimes treat as a view.
        ftype = kernel.function.function_type
        args = [_retyped(a, t, fused, rewriter) for a, t in zip(args, ftype.inputs.data)]
        call = func.CallOp(kernel.function.sym_name.data, args, list(ftype.outputs.data))
        call.attributes.update(fused.attributes)
        rewriter.insert(call, InsertPoint.before(fused))
        results = [_retyped(r, o.type, fused, rewriter) for r, o in zip(call.results, fused.outputs)]
        rewriter.replace(fused, [], results)


def convert_graph_to_te(module: ModuleOp) -> None:
    wrap_unfused_ops(module)
    # Once over the groups in program order: kernels are named and shared in it.
    PatternRewriteWalker(LowerFusedGroup(module), apply_recursively=False).rewrite_module(module)


def _retyped(value: SSAValue, t: Attribute, before: Operation, rewriter: PatternRewriter) -> SSAValue:
    """`value` as type `t` (same elements): itself, or a graph.reshape before `before`."""
    if value.type == t:
        return value
    assert isinstance(t, TensorType)
    reshape = graph.ReshapeOp([value], {"shape": t.get_shape()})
    rewriter.insert(reshape, InsertPoint.before(before))
    return reshape.outputs[0]


def _hoisted_ops(fused: graph.FusedOp, kernel: Kernel) -> list[Operation]:
    """This group's value ops at the kernel's hoisted positions (a shared kernel was
    built from another group of the same structure)."""
    ops = list(fused.body.block.ops)
    return [ops[p] for p in kernel.hoisted]


def _symbol(name: str) -> str:
    clean = "".join(c if c.isalnum() or c in "_." else "_" for c in name)
    return clean if clean and not clean[0].isdigit() else f"k_{clean}"


@dataclass(frozen=True)
class ConvertGraphToTePass(ModulePass):
    """Lower every fused group to a te function and call it (module docstring)."""

    name = "convert-graph-to-te"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_graph_to_te(op)
