"""`tc.compile(model, target="accel")`: a quantized model's convolutions on the
accelerator, the rest on the CPU.

The model is a graph module that `tc.quantize` made (int8 values, int32
accumulators, `graph.requantize` between layers). Partitioning finds each chain the
accelerator computes whole — `requantize(relu?(conv2d(cast<i32>(x:i8),
cast<i32>(w:i8 known), bias:i32 known?)))`, 2-D, NCHW, no groups or dilation,
channels that fill the GEMM's blocks, or the same with a 2-D `dense` (run as a 1x1
convolution) — and cuts the graph function there:

- each accelerator chain becomes one `AccelFunction` (`topi/accel_conv2d.conv2d_accel`
  through `tc.build(target="accel")`: inject-dma, inject-virtual-threads,
  convert-loop-to-accel, insert-dependences), its weights and bias packed once here;
- each run of the other ops between them becomes a graph function of its own,
  compiled for the CPU by `tc.compile` (its arguments are the values it reads from
  earlier steps, its results what later steps or the model's results read).

Calling the model runs the steps in order with the values in a table: the CPU parts
natively, the accelerator parts on the cycle-level simulator (inputs packed into
the accelerator's layout and outputs unpacked by numpy on the host, as VTA's runtime
does). `stats` sums the simulator's statistics over the last call. The result equals
the numpy evaluation of the quantized graph bit for bit (the reference; tests).

The chains that end in a float dequantization (a residual block's second conv,
whose int32 sum is added in float) stay on the CPU: the accelerator's output buffer
is 8 bits wide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from tilecraft.backends.accel.spec import AccelSpec, default_spec
from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import known_value
from tilecraft.topi import accel_conv2d as ac
from tilecraft.utils.weights import attach, store_of


@dataclass
class Chain:
    """One accelerator chain: the ops it replaces, its input and result values."""

    ops: list[Operation]
    x: SSAValue  # the int8 input
    result: SSAValue  # the int8 output of requantize
    weight: np.ndarray
    bias: np.ndarray | None
    strides: tuple[int, int]
    pads: tuple[int, int, int, int]
    shift: int
    relu: bool
    dense: bool = False  # a dense layer, run as a 1x1 convolution of [N, K, 1, 1]

    def input_shape(self) -> tuple[int, ...]:
        shape = tuple(graph.shape_of(self.x.type))
        return (*shape, 1, 1) if self.dense else shape


def _int(value: SSAValue, width: int) -> bool:
    element = graph.ranked(value.type).get_element_type()
    return isinstance(element, IntegerType) and element.width.data == width


def _single_use(value: SSAValue) -> bool:
    return sum(1 for _ in value.uses) == 1


def match_chain(requantize: Operation, store, spec: AccelSpec) -> Chain | None:
    if not isinstance(requantize, graph.RequantizeOp) or not _int(requantize.outputs[0], 8):
        return None
    ops = [requantize]
    value = requantize.inputs[0]
    relu = False
    if isinstance(value.owner, graph.ReluOp) and _single_use(value):
        relu = True
        ops.append(value.owner)
        value = value.owner.inputs[0]
    conv = value.owner
    if isinstance(conv, graph.DenseOp):
        if conv.weight_layout != graph.WeightLayout.NK or len(graph.shape_of(conv.inputs[0].type)) != 2:
            return None
    elif not isinstance(conv, graph.Conv2dOp) or conv.layouts() != (0, (0, 0), 0):
        return None
    if not _single_use(value):
        return None
    x_cast, w_cast = conv.inputs[0].owner, conv.inputs[1].owner
    if not isinstance(x_cast, graph.CastOp) or not isinstance(w_cast, graph.CastOp):
        return None
    x, w = x_cast.inputs[0], w_cast.inputs[0]
    if not (_int(x, 8) and _int(w, 8) and _int(conv.outputs[0], 32)):
        return None
    weight = known_value(w, store, "accel offload")
    bias = known_value(conv.inputs[2], store, "accel offload") if len(conv.inputs) == 3 else None
    if weight is None or (len(conv.inputs) == 3 and bias is None):
        return None
    shape = graph.shape_of(x.type)
    dense = isinstance(conv, graph.DenseOp)
    if dense:  # x[N, K] . w[O, K]^T is a 1x1 convolution of N pixels' K channels
        weight = weight.reshape(*weight.shape, 1, 1)
        strides, pads = (1, 1), (0, 0, 0, 0)
    elif len(shape) != 4 or conv.groups != 1 or any(d != 1 for d in conv.dilations):
        return None
    else:
        strides, pads = tuple(conv.strides), tuple(conv.pads)
    n, c = shape[0], shape[1]
    o = weight.shape[0]
    if n % spec.batch or c % spec.block or o % spec.block:
        return None
    ops.append(conv)
    for cast in (x_cast, w_cast):
        if _single_use(cast.outputs[0]):
            ops.append(cast)
    return Chain(ops, x, requantize.outputs[0], weight, bias, strides, pads, requantize.shift, relu, dense)


def _divisor_at_most(n: int, limit: int) -> int:
    return max(d for d in range(1, min(n, limit) + 1) if n % d == 0)


def _tiles(chain: Chain, spec: AccelSpec) -> tuple[int, int]:
    """Output tile (rows, columns): divisors of the output size no larger than 14,
    shrunk until two threads' input tiles fit the input buffer."""
    _, c, h, w = chain.input_shape()
    kh, kw = chain.weight.shape[2:]
    sh, sw = chain.strides
    top, left, bottom, right = chain.pads
    oh, ow = (h + top + bottom - kh) // sh + 1, (w + left + right - kw) // sw + 1
    th, tw = _divisor_at_most(oh, 14), _divisor_at_most(ow, 14)
    while ((th - 1) * sh + kh) * ((tw - 1) * sw + kw) * 2 > spec.inp_depth and (th > 1 or tw > 1):
        if th >= tw and th > 1:
            th = _divisor_at_most(oh, th - 1)
        else:
            tw = _divisor_at_most(ow, tw - 1)
    return th, tw


@dataclass
class AccelStep:
    chain: Chain
    function: object
    kernel: np.ndarray
    bias: np.ndarray
    out_shape: tuple[int, ...]
    spec: AccelSpec

    def run(self, x: np.ndarray):
        packed = ac.pack_data(x.reshape(self.chain.input_shape()), self.spec.batch, self.spec.block)
        out = np.zeros(self.out_shape, np.int8)
        result = self.function(packed, self.kernel, self.bias, out)
        y = ac.unpack_result(out)
        return (y.reshape(y.shape[:2]) if self.chain.dense else y), result


@dataclass
class CpuStep:
    model: object
    inputs: list[SSAValue]
    outputs: list[SSAValue]


@dataclass
class OffloadedModel:
    steps: list[object]
    arguments: list[SSAValue]
    results: list[SSAValue]
    stats: list = field(default_factory=list)

    @property
    def offloaded(self) -> int:
        return sum(isinstance(s, AccelStep) for s in self.steps)

    def __call__(self, *inputs: np.ndarray):
        if len(inputs) != len(self.arguments):
            raise ValueError(f"the model takes {len(self.arguments)} inputs, got {len(inputs)}")
        values: dict[SSAValue, np.ndarray] = dict(zip(self.arguments, inputs))
        self.stats = []
        for step in self.steps:
            if isinstance(step, AccelStep):
                values[step.chain.result], result = step.run(values[step.chain.x])
                self.stats.append(result.stats)
            else:
                outs = step.model(*[values[v] for v in step.inputs])
                outs = outs if isinstance(outs, tuple) else (outs,)
                values.update(zip(step.outputs, outs))
        results = [values[v] for v in self.results]
        return results[0] if len(results) == 1 else tuple(results)


def compile_offload(model, *, spec: AccelSpec | None = None, input_shapes=None, store=None) -> OffloadedModel:
    from tilecraft.runtime.compile import compile as compile_cpu
    from tilecraft.runtime.compile import graph_function, load_model

    spec = spec or default_spec()
    module = load_model(model, input_shapes, store)
    store = store_of(module)
    f = graph_function(module)
    block = f.body.block
    chains: dict[Operation, Chain] = {}
    for op in block.ops:
        chain = match_chain(op, store, spec)
        if chain is not None:
            chains[op] = chain
    in_chain = {o for chain in chains.values() for o in chain.ops}
    steps: list[object] = []
    pending: list[Operation] = []
    order = list(block.ops)
    terminator = order[-1]
    results = list(terminator.operands)

    def flush(upto: int) -> None:
        if not pending:
            return
        later = set(order[upto:])
        steps.append(_cpu_step(pending, later, results, module, store, compile_cpu, len(steps)))
        pending.clear()

    for index, op in enumerate(order[:-1]):
        if op in chains:
            flush(index)
            steps.append(_accel_step(chains[op], spec))
        elif op not in in_chain:
            pending.append(op)
    flush(len(order) - 1)
    return OffloadedModel(steps, list(block.args), results)


def _accel_step(chain: Chain, spec: AccelSpec) -> AccelStep:
    from tilecraft.runtime.accel import build_accel

    n, c, h, w = chain.input_shape()
    o = chain.weight.shape[0]
    th, tw = _tiles(chain, spec)
    s, args = ac.conv2d_accel((n, c, h, w), chain.weight.shape, chain.strides, chain.pads, chain.shift,
                              relu=chain.relu, spec=spec, tile_h=th, tile_w=tw, threads=2)
    function = build_accel(s, args, "main")
    bias = chain.bias if chain.bias is not None else np.zeros(o, np.int32)
    bias = np.ascontiguousarray(np.broadcast_to(bias.astype(np.int32).reshape(o // spec.block, 1, spec.block),
                                                (o // spec.block, spec.batch, spec.block)))
    kernel = ac.pack_kernel(chain.weight.astype(np.int8), spec.block, spec.block)
    return AccelStep(chain, function, kernel, bias, tuple(args[3].shape), spec)


def _cpu_step(ops: list[Operation], later: set[Operation], results: list[SSAValue], module: ModuleOp, store,
              compile_cpu, number: int) -> CpuStep:
    """The ops as a graph function of what they read from outside and what is read
    after them, compiled for the CPU."""
    inside = set(ops)
    inputs: list[SSAValue] = []
    for op in ops:
        for v in op.operands:
            if v.owner not in inside and v not in inputs:
                inputs.append(v)
    outputs: list[SSAValue] = []
    for op in ops:
        for v in op.results:
            if any(u.operation not in inside for u in v.uses) or v in results:
                outputs.append(v)
    body = Block(arg_types=[v.type for v in inputs])
    mapping = dict(zip(inputs, body.args))
    for op in ops:
        clone = op.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    body.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
    function = func.FuncOp(f"cpu{number}", FunctionType.from_lists([v.type for v in inputs], [v.type for v in outputs]),
                           Region(body))
    part = ModuleOp([function])
    if store is not None:
        attach(part, store)
    return CpuStep(compile_cpu(part), inputs, outputs)
