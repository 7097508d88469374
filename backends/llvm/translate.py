"""xDSL's `llvm` dialect (plus `llvmx`) to an llvmlite IR module.

xDSL ships a translator, `xdsl.backend.llvm.convert.convert_module`, but it stops
at ops it does not know (our `llvmx` ops) and drops function linkage and
function attributes (every outlined parallel task would be an exported symbol,
and nothing would be `nounwind`). So this module drives the translation itself
and reuses xDSL's per-op translator `convert_op` for every op of the `llvm`
dialect:

- functions are declared here, with linkage (`internal` for the outlined
  tasks), `nounwind`/`noinline` and the argument attributes (`noalias`, `nonnull`,
  `align`, `dereferenceable`, `noundef`);
- block arguments become phi nodes, filled in by the branches (as in xDSL);
- `llvmx` ops are translated by the handlers below, as are `llvm.getelementptr`
  and `llvm.alloca` (xDSL's versions produce llvmlite *typed* pointers, through
  which llvmlite refuses to store a vector or a pointer), and the math
  intrinsics (xDSL declares `llvm.exp` etc. without the type suffix, so a module
  using two vector widths gets one wrong declaration); all other ops go to
  xDSL's `convert_op`.

Masked loads/stores/gathers/scatters are emitted in the form with an explicit
`i32` alignment operand, which LLVM 22 still reads (and upgrades to an `align`
attribute) when the module text is parsed.

The mask of a masked load or store wider than the host's vector registers (16
floats on an AVX2 CPU) goes through an empty inline-asm barrier. LLVM 22's x86
backend miscompiles such an access when it splits it in register-wide halves and
one half of the mask is known to be all false: it loads that half unmasked (a
ConvTranspose's padding then read past its input). Behind the barrier the mask's
value is unknown, and both halves stay masked.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from tilecraft.dialects import llvmx
from tilecraft.backends.llvm.builder import mangle
from tilecraft.backends.llvm.target import native_vector_bits
from xdsl.backend.llvm.convert_op import convert_op
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue

_ARG_FLAGS = {
    "llvm.noalias": "noalias",
    "llvm.nonnull": "nonnull",
    "llvm.noundef": "noundef",
    "llvm.readonly": "readonly",
}
_ARG_INTS = {
    "llvm.align": "align",
    "llvm.dereferenceable": "dereferenceable",
}


class TranslationError(Exception):
    """The llvm-dialect module holds something this translator cannot express."""


def translate_module(module: ModuleOp, triple: str = "", data_layout: str = "") -> ir.Module:
    """Translate a module of `llvm.func`s to llvmlite IR."""
    result = ir.Module()
    if triple:
        result.triple = triple
    if data_layout:
        result.data_layout = data_layout
    functions = []
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            _global(op, result)
            continue
        if not isinstance(op, llvm.FuncOp):
            raise TranslationError(
                f"cannot translate '{op.name}' at module level; run convert-loop-to-llvm first"
            )
        functions.append(op)
    for op in functions:
        _declare(op, result)
    for op in functions:
        if op.body.blocks:
            _define(op, result.get_global(op.sym_name.data))
    return result


def _global(op: llvm.GlobalOp, module: ir.Module) -> None:
    """The globals convert-loop-to-llvm makes: an integer initialized by an
    IntegerAttr, a byte array by a StringAttr (the run-time error word and messages);
    and convert-gpu-to-nvvm's shared buffers: uninitialized, in address space 3."""
    ltype = convert_type(op.global_type)
    variable = ir.GlobalVariable(module, ltype, name=op.sym_name.data, addrspace=op.addr_space.value.data)
    value = op.value
    if value is None and op.addr_space.value.data != 0:
        # (a GPU kernel's shared buffer: no initial value, one per block)
        variable.initializer = ir.Constant(ltype, ir.Undefined)
        variable.linkage = "internal"
    elif isinstance(value, IntegerAttr):
        variable.initializer = ir.Constant(ltype, value.value.data)
    elif isinstance(value, StringAttr):
        variable.initializer = ir.Constant(ltype, bytearray(value.data.encode()))
    else:
        raise TranslationError(f"cannot translate global '{op.sym_name.data}' initialized by {value}")
    variable.global_constant = op.constant is not None
    if op.alignment is not None:
        variable.align = op.alignment.value.data


def _declare(op: llvm.FuncOp, module: ir.Module) -> None:
    ftype = convert_type(op.function_type)
    function = ir.Function(module, ftype, name=op.sym_name.data)
    linkage = op.linkage.linkage.data
    if op.body.blocks and linkage != "external":
        function.linkage = linkage
    if op.no_unwind is not None:
        function.attributes.add("nounwind")
    if op.no_inline is not None:
        function.attributes.add("noinline")
    if op.arg_attrs is None:
        return
    for argument, attrs in zip(function.args, op.arg_attrs.data):
        for key, value in attrs.data.items():
            if key in _ARG_FLAGS:
                argument.add_attribute(_ARG_FLAGS[key])
            elif key in _ARG_INTS and isinstance(value, IntegerAttr):
                setattr(argument.attributes, _ARG_INTS[key], value.value.data)


def _define(op: llvm.FuncOp, function: ir.Function) -> None:
    blocks: dict[Block, ir.Block] = {}
    values: dict[SSAValue, ir.Value] = {}
    for block in op.body.blocks:
        blocks[block] = function.append_basic_block()
    values.update(zip(op.body.blocks.first.args, function.args))  # type: ignore[union-attr]
    for block in list(op.body.blocks)[1:]:
        builder = ir.IRBuilder(blocks[block])
        for arg in block.args:
            values[arg] = builder.phi(convert_type(arg.type))
    for block in op.body.blocks:
        builder = ir.IRBuilder(blocks[block])
        for inner in block.ops:
            handler = _HANDLERS.get(type(inner))
            if handler is not None:
                result = handler(inner, builder, values)
                if inner.results:
                    values[inner.results[0]] = result
            else:
                try:
                    convert_op(inner, builder, values, blocks)
                except NotImplementedError as e:
                    raise TranslationError(f"cannot translate '{inner.name}': {e}") from None
                for attribute, request in _LOOP_REQUESTS.items():
                    if attribute in inner.attributes:
                        branch = builder.block.instructions[-1]
                        branch.set_metadata("llvm.loop", _loop_id(function.module, request))


_LOOP_REQUESTS = {
    llvmx.UNROLL_FULL: "llvm.loop.unroll.full",
    llvmx.NO_RUNTIME_UNROLL: "llvm.loop.unroll.runtime.disable",
}


def _loop_id(module: ir.Module, name: str) -> ir.MDValue:
    """A loop ID asking LLVM for `name` (`llvm.loop.unroll.full`). A loop ID is a
    node of its own whose first operand is itself; llvmlite makes such nodes only
    for debug info, and `add_metadata` would merge equal ones, so it is built directly."""
    request = module.add_metadata([ir.MetaDataString(module, name)])
    loop_id = ir.MDValue(module, [request], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, request)
    return loop_id


def _intrinsic(builder: ir.IRBuilder, name: str, result: ir.Type, args: list[ir.Value]) -> ir.Value:
    module = builder.module
    try:
        function = module.get_global(name)
    except KeyError:
        function = ir.Function(module, ir.FunctionType(result, [a.type for a in args]), name=name)
    return builder.call(function, args)


def _vector_gep(
    builder: ir.IRBuilder, op: llvmx.MaskedGatherOp | llvmx.MaskedScatterOp, values: dict
) -> ir.Value:
    """`getelementptr T, ptr %base, <W x i64> %offsets`: a vector of pointers."""
    offsets = values[op.offsets]
    pointers = builder.gep(
        values[op.base], [offsets], inbounds=True, source_etype=convert_type(op.elem_type)
    )
    pointers.type = ir.VectorType(ir.PointerType(), offsets.type.count)  # llvmlite assumes a scalar
    return pointers


def _align(op: llvmx._MaskedMemoryOp) -> ir.Constant:
    return ir.Constant(ir.IntType(32), op.alignment.value.data)


def _split_safe_mask(vector: ir.VectorType, mask: ir.Value, builder: ir.IRBuilder) -> ir.Value:
    """`mask` behind an inline-asm barrier where LLVM would split the access (see
    the module docstring); as it is where the vector fits a register."""
    lanes = vector.count
    element = vector.element
    width = {ir.DoubleType: 64, ir.FloatType: 32, ir.HalfType: 16}.get(type(element))
    bits = lanes * (width or getattr(element, "width", 64))
    if bits <= native_vector_bits() or lanes not in (8, 16, 32, 64):
        return mask
    word = ir.IntType(lanes)
    barrier = ir.InlineAsm(ir.FunctionType(word, [word]), "", "=r,0")
    hidden = builder.call(barrier, [builder.bitcast(mask, word)])
    return builder.bitcast(hidden, mask.type)


def _masked_load(op: llvmx.MaskedLoadOp, builder: ir.IRBuilder, values: dict) -> ir.Value:
    result = convert_type(op.res.type)
    name = f"llvm.masked.load.{mangle(op.res.type)}.p0"
    mask = _split_safe_mask(result, values[op.mask], builder)
    return _intrinsic(builder, name, result, [values[op.ptr], _align(op), mask, values[op.passthru]])


def _masked_store(op: llvmx.MaskedStoreOp, builder: ir.IRBuilder, values: dict) -> None:
    name = f"llvm.masked.store.{mangle(op.value.type)}.p0"
    value = values[op.value]
    mask = _split_safe_mask(value.type, values[op.mask], builder)
    _intrinsic(builder, name, ir.VoidType(), [value, values[op.ptr], _align(op), mask])


def _masked_gather(op: llvmx.MaskedGatherOp, builder: ir.IRBuilder, values: dict) -> ir.Value:
    t = op.res.type
    name = f"llvm.masked.gather.{mangle(t)}.v{t.get_shape()[0]}p0"
    pointers = _vector_gep(builder, op, values)
    return _intrinsic(
        builder, name, convert_type(t), [pointers, _align(op), values[op.mask], values[op.passthru]]
    )


def _masked_scatter(op: llvmx.MaskedScatterOp, builder: ir.IRBuilder, values: dict) -> None:
    t = op.value.type
    name = f"llvm.masked.scatter.{mangle(t)}.v{t.get_shape()[0]}p0"
    pointers = _vector_gep(builder, op, values)
    _intrinsic(
        builder, name, ir.VoidType(), [values[op.value], pointers, _align(op), values[op.mask]]
    )


def _gep(op: llvm.GEPOp, builder: ir.IRBuilder, values: dict) -> ir.Value:
    # xDSL's translator casts the base to a typed pointer, so the result is typed
    # too and llvmlite then refuses to store anything but that type through it.
    dynamic = iter(op.ssa_indices)
    indices = [
        values[next(dynamic)] if i == llvm.GEP_USE_SSA_VAL else ir.Constant(ir.IntType(32), i)
        for i in op.rawConstantIndices.iter_values()
    ]
    return builder.gep(
        values[op.ptr],
        indices,
        inbounds=op.inbounds is not None,
        source_etype=convert_type(op.elem_type),
    )


def _alloca(op: llvm.AllocaOp, builder: ir.IRBuilder, values: dict) -> ir.Value:
    instruction = builder.alloca(convert_type(op.elem_type), size=values[op.size])
    instruction.type = ir.PointerType()  # opaque, for the same reason as in _gep
    if op.alignment is not None:
        instruction.align = op.alignment.value.data
    return instruction


# Overloaded intrinsics xDSL's translator declares without the type suffix, so
# one declaration would serve (wrongly) every vector width in the module.
_INTRINSIC_OPS: dict[type[Operation], str] = {
    llvm.FAbsOp: "llvm.fabs",
    llvm.FExpOp: "llvm.exp",
    llvm.FExp2Op: "llvm.exp2",
    llvm.FLogOp: "llvm.log",
    llvm.FLog2Op: "llvm.log2",
    llvm.FSqrtOp: "llvm.sqrt",
    llvm.FCeilOp: "llvm.ceil",
    llvm.FFloorOp: "llvm.floor",
    llvm.FSinOp: "llvm.sin",
    llvm.FCosOp: "llvm.cos",
    llvm.FPowOp: "llvm.pow",
    llvm.FCopySignOp: "llvm.copysign",
    llvm.VectorFMaxOp: "llvm.maxnum",
    llvm.VectorFMinOp: "llvm.minnum",
}


def _intrinsic_op(op: Operation, builder: ir.IRBuilder, values: dict) -> ir.Value:
    result = op.results[0].type
    name = f"{_INTRINSIC_OPS[type(op)]}.{mangle(result)}"
    return _intrinsic(builder, name, convert_type(result), [values[v] for v in op.operands])


def _fcmp(op: llvmx.FCmpOp, builder: ir.IRBuilder, values: dict) -> ir.Value:
    instruction = ir.instructions.FCMPInstr(
        builder.block, op.predicate.data, values[op.lhs], values[op.rhs]
    )
    builder._insert(instruction)  # llvmlite's fcmp helpers take only a subset of predicates
    return instruction


# Ops translated here rather than by xDSL's convert_op: all of llvmx, and those
# of llvm whose xDSL translation is wrong for us (see above).
_HANDLERS: dict[type[Operation], Callable[[Operation, ir.IRBuilder, dict], ir.Value | None]] = {
    llvm.GEPOp: _gep,
    llvm.AllocaOp: _alloca,
    **{op: _intrinsic_op for op in _INTRINSIC_OPS},
    llvmx.FPToSIOp: lambda op, b, v: b.fptosi(v[op.arg], convert_type(op.res.type)),
    llvmx.FPToUIOp: lambda op, b, v: b.fptoui(v[op.arg], convert_type(op.res.type)),
    llvmx.UIToFPOp: lambda op, b, v: b.uitofp(v[op.arg], convert_type(op.res.type)),
    llvmx.AddrSpaceCastOp: lambda op, b, v: b.addrspacecast(v[op.arg], convert_type(op.res.type)),
    llvmx.FCmpOp: _fcmp,
    llvmx.SelectOp: lambda op, b, v: b.select(v[op.cond], v[op.lhs], v[op.rhs]),
    llvmx.ExtractElementOp: lambda op, b, v: b.extract_element(v[op.vector], v[op.index]),
    llvmx.MaskedLoadOp: _masked_load,
    llvmx.MaskedStoreOp: _masked_store,
    llvmx.MaskedGatherOp: _masked_gather,
    llvmx.MaskedScatterOp: _masked_scatter,
}  # type: ignore[dict-item]
