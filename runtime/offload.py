"""`tc.compile(model, target="accel")`: a quantized model's convolutions on the
accelerator, the rest on the CPU.

The model is a graph module that `tc.quantize` made (int8 values, int32
accumulators, `graph.requantize` between layers). `partition-accel`
(transforms/partition_accel.py) outlines each chain the accelerator computes whole
into a `{tc.target = "accel"}` function and calls it (`model.ir` is that module); the
graph function is cut at those calls:

- each accelerator chain becomes one `AccelFunction` (`topi/accel_conv2d.conv2d_accel`
  through `tc.build(target="accel")`: inject-dma, inject-virtual-threads,
  convert-loop-to-accel, insert-dependences), its weights and bias packed once here.
  Its knobs are the best config a `tuning_log` measured for its workload (the
  `conv2d_accel` template of autotune/accel_templates.py, `accel_params`), else
  `accel_conv2d.default_config`;
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
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from tilecraft.backends.accel.spec import AccelSpec, default_spec
from tilecraft.topi import accel_conv2d as ac
from tilecraft.transforms.partition_accel import TARGET_ATTR, Chain, match_chain, partition
from tilecraft.utils.weights import attach, store_of


@dataclass
class AccelStep:
    chain: Chain
    function: object
    kernel: np.ndarray
    bias: np.ndarray
    out_shape: tuple[int, ...]
    spec: AccelSpec
    config: dict = field(default_factory=dict)  # conv2d_accel's knobs (tuned or default)
    x: SSAValue | None = None  # the call's operand and result in the model's function
    result: SSAValue | None = None

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
    ir: str = ""  # the graph module after partition-accel: what runs where

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
                values[step.result], result = step.run(values[step.x])
                self.stats.append(result.stats)
            else:
                outs = step.model(*[values[v] for v in step.inputs])
                outs = outs if isinstance(outs, tuple) else (outs,)
                values.update(zip(step.outputs, outs))
        results = [values[v] for v in self.results]
        return results[0] if len(results) == 1 else tuple(results)


def _refuse_symbolic(f: func.FuncOp) -> None:
    """The accelerator's programs are made for static shapes: a model with sizes
    known only when it runs is refused, naming them."""
    from tilecraft.dialects.graph.shapes import symbolic_dims

    names = sorted({str(d) for t in f.function_type.inputs.data for _, d in symbolic_dims(t)})
    if names:
        raise ValueError(
            f"target 'accel' compiles static shapes; the model has sizes known only when it runs "
            f"({', '.join(names)}): fix them with input_shapes="
        )


def compile_offload(model, *, spec: AccelSpec | None = None, input_shapes=None, store=None,
                    schedule_configs=None) -> OffloadedModel:

    from tilecraft.runtime.compile import compile as compile_cpu
    from tilecraft.driver.compile_model import graph_function, load_model
    from tilecraft.utils.diagnostics import verify_module

    spec = spec or default_spec()
    module = load_model(model, input_shapes, store)
    _refuse_symbolic(graph_function(module))
    store = store_of(module)
    partition(module, spec)
    verify_module(module)
    self_ir = str(module)
    kernels = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and TARGET_ATTR in f.attributes}
    f = graph_function(module)
    block = f.body.block
    steps: list[object] = []
    pending: list[Operation] = []
    order = list(block.ops)
    results = list(order[-1].operands)

    def flush() -> None:
        if pending:
            steps.append(_cpu_step(pending, results, store, compile_cpu, len(steps)))
            pending.clear()

    for op in order[:-1]:
        kernel = kernels.get(op.callee.root_reference.data) if isinstance(op, func.CallOp) else None
        if kernel is None:
            pending.append(op)
            continue
        flush()
        requantize = kernel.body.block.last_op.operands[0].owner
        chain = match_chain(requantize, spec)
        assert chain is not None, "partition-accel outlined a chain it does not match"
        step = _accel_step(chain, spec, schedule_configs)
        step.x, step.result = op.operands[0], op.results[0]
        steps.append(step)
    flush()
    model = OffloadedModel(steps, list(block.args), results)
    model.ir = self_ir
    return model


def accel_params(chain: Chain, spec: AccelSpec) -> tuple:
    """The chain's workload as the `conv2d_accel` tuning template names it."""
    return ac.conv2d_params(chain.input_shape(), chain.weight.shape, chain.strides, chain.pads, chain.shift,
                            chain.relu, spec)


def _accel_step(chain: Chain, spec: AccelSpec, schedule_configs=None) -> AccelStep:
    """The chain built with the config `schedule_configs("conv2d_accel", params)`
    gives (tc.compile's tuning_log: the log's best valid record), else the default."""
    from tilecraft.runtime.accel import build_accel

    n, c, h, w = chain.input_shape()
    o = chain.weight.shape[0]
    best = schedule_configs("conv2d_accel", accel_params(chain, spec)) if schedule_configs is not None else None
    config = best or ac.default_config((n, c, h, w), chain.weight.shape, chain.strides, chain.pads, spec)
    s, args = ac.conv2d_accel((n, c, h, w), chain.weight.shape, chain.strides, chain.pads, chain.shift,
                              relu=chain.relu, spec=spec, **config)
    function = build_accel(s, args, "main", "" if spec == default_spec() else spec.source)
    bias = chain.bias if chain.bias is not None else np.zeros(o, np.int32)
    bias = np.ascontiguousarray(np.broadcast_to(bias.astype(np.int32).reshape(o // spec.block, 1, spec.block),
                                                (o // spec.block, spec.batch, spec.block)))
    kernel = ac.pack_kernel(chain.weight.astype(np.int8), spec.block, spec.block)
    return AccelStep(chain, function, kernel, bias, tuple(args[3].shape), spec, config)


def _cpu_step(ops: list[Operation], results: list[SSAValue], store, compile_cpu, number: int) -> CpuStep:
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
