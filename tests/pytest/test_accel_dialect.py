"""The accel dialect, lower-accel-tokens, program.py (IR <-> isa lists) and the accel-bin
file: round trips over random programs, the token -> flag lowering checked against an
independent happens-before replay, the uop residency cache, and bad binaries."""

from __future__ import annotations

import dataclasses
import json
import struct
import zlib
from collections import defaultdict, deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tilecraft.backends.accel import isa
from tilecraft.backends.accel.binary import (
    BinaryFormatError,
    disassemble,
    read_binary,
    write_binary,
)
from tilecraft.backends.accel.program import (
    Program,
    UopResidency,
    find_program,
    format_asm,
    program_from_ir,
    program_to_ir,
)
from tilecraft.backends.accel.spec import default_spec
from tilecraft.backends.accel.verify import StreamError, check_flag_stream, plan_flags
from tilecraft.driver.context import parse_text
from tilecraft.dialects.accel import (
    AluOp,
    FinishOp,
    GemmOp,
    InstructionOp,
    LoadOp,
    ProgramOp,
    StoreOp,
    Unit,
    UopKernelOp,
)
from tilecraft.transforms.lower_accel_tokens import LowerAccelTokensPass
from tilecraft.utils.diagnostics import OpError, verify_module
from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i64

DEFAULT = default_spec()
BLOCK32 = dataclasses.replace(DEFAULT, log_block=5)
BLOCK32_ATTR = DictionaryAttr({"LOG_BLOCK": IntegerAttr(5, i64)})


# -- random token-level programs -------------------------------------------------------------
@st.composite
def programs(draw, spec_attr=None):
    """A valid token-level accel.program: kernels, loads, GEMM/ALU, stores, tokens to
    earlier instructions of any module (never load <-> store), FINISH last."""
    program = ProgramOp("random", spec=spec_attr)
    block = program.body.block
    n_kernels = draw(st.integers(1, 3))
    for k in range(n_kernels):
        uops = draw(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=4))
        block.add_op(UopKernelOp(f"k{k}", uops))
    made: list[InstructionOp] = []
    small = st.integers(0, 4)
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["inp", "wgt", "acc", "gemm", "alu", "store"]))
        if kind in ("inp", "wgt", "acc", "store"):
            fields = {
                "sram_base": draw(st.integers(0, 30)),
                "dram_base": draw(st.integers(0, 1 << 20)),
                "y_size": draw(st.integers(1, 3)),
                "x_size": draw(st.integers(1, 4)),
                "x_stride": draw(st.integers(4, 64)),
            }
            if kind == "store":
                op = StoreOp("out", **fields)
            else:
                op = LoadOp(kind, **fields, pads=tuple(draw(st.lists(st.integers(0, 2), min_size=4, max_size=4))))
        elif kind == "gemm":
            op = GemmOp(
                kernel=f"k{draw(st.integers(0, n_kernels - 1))}",
                iter_out=draw(st.integers(1, 4)), iter_in=draw(st.integers(1, 4)),
                dst=(draw(small), draw(small)), src=(draw(small), draw(small)), wgt=(draw(small), draw(small)),
                reset=draw(st.booleans()),
            )  # fmt: skip
        else:
            op = AluOp(
                draw(st.sampled_from(["min", "max", "add", "shr", "mul"])),
                imm=draw(st.one_of(st.none(), st.integers(-(1 << 15), (1 << 15) - 1))),
                kernel=f"k{draw(st.integers(0, n_kernels - 1))}",
                iter_out=draw(st.integers(1, 4)), iter_in=draw(st.integers(1, 4)),
                dst=(draw(small), draw(small)), src=(draw(small), draw(small)),
            )  # fmt: skip
        allowed = [p for p in made if {p.unit, op.unit} != {Unit.LOAD, Unit.STORE}]
        if allowed:
            deps = draw(st.lists(st.sampled_from(allowed), max_size=3, unique=True))
            op.operands = [d.token for d in deps]
        block.add_op(op)
        made.append(op)
    if draw(st.booleans()):
        finish = FinishOp()
        finish.operands = [d.token for d in draw(st.lists(st.sampled_from(made), max_size=2, unique=True))]
        block.add_op(finish)
    return ModuleOp([program])


def lower(module: ModuleOp) -> ModuleOp:
    verify_module(module)
    LowerAccelTokensPass().apply(Context(), module)
    verify_module(module)
    return module


def happens_before(units: list[Unit], flags: list[set[str]]) -> list[set[int]]:
    """For each instruction, every instruction that must have finished before it starts,
    replayed from the flags alone: module order plus the k-th push -> k-th pop of each queue."""
    from tilecraft.backends.accel.verify import flag_queue

    preds: dict[int, list[int]] = defaultdict(list)
    last: dict[Unit, int] = {}
    pushes: dict[tuple, list[int]] = defaultdict(list)
    pops: dict[tuple, list[int]] = defaultdict(list)
    for i, (unit, names) in enumerate(zip(units, flags)):
        if unit in last:
            preds[i].append(last[unit])
        last[unit] = i
        for name in names:
            (pushes if name.startswith("push") else pops)[flag_queue(unit, name)].append(i)
    for queue, popped in pops.items():
        for k, consumer in enumerate(popped):
            preds[consumer].append(pushes[queue][k])
    before: list[set[int]] = []
    for i in range(len(units)):
        seen: set[int] = set()
        work = deque(preds[i])
        while work:
            j = work.popleft()
            if j not in seen:
                seen.add(j)
                work.extend(preds[j])
        before.append(seen)
    return before


@pytest.mark.parametrize("spec_attr", [None, BLOCK32_ATTR], ids=["default", "block32"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_tokens_lower_to_flags_that_keep_every_dependence(spec_attr, data):
    module = data.draw(programs(spec_attr))
    program = find_program(module)
    ops = [op for op in program.body.block.ops if isinstance(op, InstructionOp)]
    edges = [(ops.index(d.owner), i) for i, op in enumerate(ops) for d in op.deps]
    lower(module)
    ops = [op for op in program.body.block.ops if isinstance(op, InstructionOp)]
    assert not any(op.deps for op in ops)
    before = happens_before([op.unit for op in ops], [set(op.flags()) for op in ops])
    for producer, consumer in edges:
        assert producer in before[consumer], (producer, consumer)
    # each instruction pushes and pops at most once per queue, by construction of flags
    check_flag_stream([op.unit for op in ops], [set(op.flags()) for op in ops])


@pytest.mark.parametrize("spec_attr", [None, BLOCK32_ATTR], ids=["default", "block32"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_ir_to_binary_to_ir_round_trips(spec_attr, data):
    module = lower(data.draw(programs(spec_attr)))
    program = program_from_ir(find_program(module))
    assert program.spec == (DEFAULT if spec_attr is None else BLOCK32)
    data_bytes = write_binary(program)
    assert read_binary(data_bytes) == program
    again = disassemble(data_bytes)
    assert write_binary(program_from_ir(find_program(again))) == data_bytes
    # the disassembled IR prints and parses back to the same program
    reparsed = parse_text(str(again))
    assert write_binary(program_from_ir(find_program(reparsed))) == data_bytes
    assert format_asm(read_binary(data_bytes)) == format_asm(program)


def test_plan_flags_keeps_one_edge_per_queue_order():
    # Two consumers of one load: the second GEMM's dependence is implied by the first's.
    module = parse_text(
        """
        accel.program @p {
          accel.uop_kernel @k {
            accel.uop 0, 0, 0
          }
          %a = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
          %b = accel.load inp sram(1) dram(1) size(1, 1) stride(1)
          %g = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %b
          %h = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %a, %b
        }
        """
    )
    plan = plan_flags(find_program(module))
    assert sorted((op.name, sorted(f)) for op, f in plan.items()) == [
        ("accel.gemm", ["pop_prev"]),
        ("accel.load", ["push_next"]),
    ]


# -- the flag stream checker ------------------------------------------------------------------------
L, C, S = Unit.LOAD, Unit.COMPUTE, Unit.STORE


def test_flag_stream_accepts_a_pipelined_stream():
    # load pushes, compute pops and pushes back, the next load pops it
    check_flag_stream([L, C, L, C], [{"push_next"}, {"pop_prev", "push_prev"}, {"pop_next", "push_next"}, {"pop_prev"}])


def test_flag_stream_pop_may_wait_for_a_later_push():
    # compute's pop comes first in the stream; the load module runs ahead: no deadlock
    check_flag_stream([C, L], [{"pop_prev"}, {"push_next"}])


def test_flag_stream_deadlock_names_every_blocked_module():
    with pytest.raises(StreamError) as e:
        check_flag_stream(
            [C, S, C, S],
            [{"pop_next"}, {"pop_prev"}, {"push_next"}, {"push_prev"}],
        )
    assert e.value.index == 0 and e.value.others == (1,)
    assert "deadlocks" in e.value.message and "compute->store" in e.value.message and "store->compute" in e.value.message


def test_flag_stream_counts():
    with pytest.raises(StreamError, match="pop 1 on the compute->store queue has no matching push"):
        check_flag_stream([S], [{"pop_prev"}])
    with pytest.raises(StreamError, match="push 1 on the store->compute queue is never popped"):
        check_flag_stream([S], [{"push_prev"}])
    with pytest.raises(StreamError, match="the store module has no next module"):
        check_flag_stream([S], [{"push_next"}])


# -- micro-op kernels in the uop buffer -------------------------------------------------------------
def _uop_loads(program: Program) -> list[isa.Load]:
    return [i for i in program.instructions if isinstance(i, isa.Load) and i.memory_type == isa.MemoryType.UOP]


def test_resident_kernel_is_not_reloaded():
    module = parse_text(
        """
        accel.program @p {
          accel.uop_kernel @a {
            accel.uop 0, 0, 0
            accel.uop 1, 1, 1
          }
          accel.uop_kernel @b {
            accel.uop 2, 2, 2
          }
          %0 = accel.gemm @a out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
          %1 = accel.gemm @b out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
          %2 = accel.gemm @a out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
          %3 = accel.alu add imm(1) @b out 1 in 1 dst(0, 0) src(0, 0)
        }
        """
    )
    program = program_from_ir(find_program(module))
    loads = _uop_loads(program)
    assert [(l.sram_base, l.dram_base, l.x_size) for l in loads] == [(0, 0, 2), (2, 2, 1)]
    gemms = [i for i in program.instructions if isinstance(i, (isa.Gemm, isa.Alu))]
    assert [(g.uop_begin, g.uop_end) for g in gemms] == [(0, 2), (2, 3), (0, 2), (2, 3)]
    # DRAM holds each kernel once
    assert [(k.name, k.dram_base) for k in program.kernels] == [("a", 0), ("b", 2)]


def test_uop_ring_evicts_what_it_overwrites():
    spec = dataclasses.replace(DEFAULT, log_uop_buff_size=5)  # 8 micro-ops
    assert spec.uop_depth == 8
    from tilecraft.backends.accel.program import Kernel

    a = Kernel("a", 0, tuple(isa.MicroOp(i, 0) for i in range(5)))
    b = Kernel("b", 5, tuple(isa.MicroOp(i, 1) for i in range(5)))
    cache = UopResidency(spec, {k.dram_base + i: u for k in (a, b) for i, u in enumerate(k.uops)})
    assert cache.ensure(a)[0] == 0 and cache.ensure(a)[1] is None
    begin, load = cache.ensure(b)  # does not fit after a: wraps to 0, evicting a
    assert begin == 0 and load is not None
    assert cache.uops(0, 5) == list(b.uops)
    begin, load = cache.ensure(a)  # evicted: loaded again, and b goes
    assert (begin, load is not None) == (0, True)
    assert cache.ensure(b)[1] is not None


def test_explicit_uop_load_evicts_a_resident_kernel():
    module = parse_text(
        """
        accel.program @p {
          accel.uop_kernel @a dram(0) {
            accel.uop 0, 0, 0
          }
          accel.uop_kernel @b dram(1) {
            accel.uop 1, 1, 1
          }
          %0 = accel.gemm @a out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
          %1 = accel.load uop sram(0) dram(1) size(1, 1) stride(1)
          %2 = accel.gemm uops(0, 1) out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
          %3 = accel.gemm @a out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0)
        }
        """
    )
    program = program_from_ir(find_program(module))
    assert len(_uop_loads(program)) == 3  # a, the explicit b, a again


def test_program_from_ir_needs_flags():
    module = parse_text(
        """
        accel.program @p {
          %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
          accel.finish after %0
        }
        """
    )
    with pytest.raises(OpError, match="run lower-accel-tokens"):
        program_from_ir(find_program(module))
    lower(module)
    assert [type(i) for i in program_from_ir(find_program(module)).instructions] == [isa.Load, isa.Finish]


def test_spec_from_a_file(tmp_path):
    path = tmp_path / "block32.json"
    path.write_text(json.dumps({**DEFAULT.to_dict(), "LOG_BLOCK": 5}))
    module = parse_text(f'accel.program @p spec "{path}" {{\n  accel.finish\n}}\n')
    program = program_from_ir(find_program(module))
    assert program.spec == BLOCK32
    # the binary records the spec; the disassembler writes the keys that differ
    text = str(disassemble(write_binary(program)))
    assert "spec {LOG_BLOCK = 5 : i64}" in text


# -- bad binaries -------------------------------------------------------------------------------------
def _binary(text: str) -> bytes:
    return write_binary(program_from_ir(find_program(parse_text(text))))


SIMPLE = """
accel.program @p {
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
  }
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
  %1 = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) flags(pop_prev)
  accel.finish
}
"""


def _resealed(data: bytes, offset: int, new: bytes) -> bytes:
    body = data[:-4]
    body = body[:offset] + new + body[offset + len(new) :]
    return body + struct.pack("<I", zlib.crc32(body))


def _instructions_offset(data: bytes) -> int:
    name_bytes = struct.unpack_from("<I", data, 8 + 4 + 4 + 4 * 15 + 12)[0]
    return 8 + 4 + 4 + 4 * 15 + 16 + name_bytes


def test_bad_binaries_are_one_line_errors():
    data = _binary(SIMPLE)
    insns = _instructions_offset(data)
    cases = {
        "wrong magic number": b"XXXXXXXX" + data[8:],
        "version 2; this reader knows version 1": _resealed(data, 8, struct.pack("<I", 2)),
        "checksum mismatch": data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
        "truncated": data[:9],
        "unknown opcode 7": _resealed(data, insns, bytes([7])),
        "bad spec": _resealed(data, 16, struct.pack("<I", 99)),  # LOG_INP_WIDTH 99
        "bytes after the DRAM table": _resealed(data[:-4] + b"\0" + data[-4:], 0, b""),
    }
    # a trailing byte: reseal over the longer body
    longer = data[:-4] + b"\0"
    cases["bytes after the DRAM table"] = longer + struct.pack("<I", zlib.crc32(longer))
    for message, bad in cases.items():
        with pytest.raises(BinaryFormatError, match=message) as e:
            disassemble(bad, "x.bin")
        assert "\n" not in str(e.value) and str(e.value).startswith("x.bin")


def test_disassembler_names_the_instruction_a_verifier_rejects():
    data = _binary(SIMPLE)
    insns = _instructions_offset(data)
    # clear the GEMM's pop_prev (bit 3 of its first byte): the load's push is never popped
    gemm = insns + 2 * 16  # load inp, load uop, gemm
    flipped = _resealed(data, gemm, bytes([data[gemm] & ~0x08]))
    with pytest.raises(BinaryFormatError, match=r"x.bin: instruction 0 \(LOAD inp .*\[push_next\]\): push 1 on the load->compute queue is never popped"):
        disassemble(flipped, "x.bin")


def test_alu_imm_without_use_imm_is_refused():
    program = Program(
        "p",
        DEFAULT,
        [isa.Alu(uop_begin=0, uop_end=1, iter_out=1, iter_in=1, dst_factor_out=0, dst_factor_in=0,
                 src_factor_out=0, src_factor_in=0, alu_opcode=isa.AluOpcode.ADD, use_imm=False, imm=3)],
    )  # fmt: skip
    with pytest.raises(BinaryFormatError, match="imm is 3 but use_imm is 0"):
        disassemble(write_binary(program), "x.bin")


def test_program_to_ir_round_trip_of_every_field():
    spec = DEFAULT
    insns = [
        isa.Load(memory_type=isa.MemoryType.ACC, sram_base=5, dram_base=123456, y_size=3, x_size=2, x_stride=9,
                 y_pad_0=1, y_pad_1=2, x_pad_0=3, x_pad_1=4, push_next=False, pop_next=False),
        isa.Load(memory_type=isa.MemoryType.UOP, sram_base=0, dram_base=0, y_size=1, x_size=1, x_stride=1),
        isa.Gemm(reset=True, uop_begin=0, uop_end=1, iter_out=2, iter_in=3, dst_factor_out=4, dst_factor_in=5,
                 src_factor_out=6, src_factor_in=7, wgt_factor_out=8, wgt_factor_in=9),
        isa.Alu(uop_begin=0, uop_end=1, iter_out=1, iter_in=1, dst_factor_out=0, dst_factor_in=0,
                src_factor_out=0, src_factor_in=0, alu_opcode=isa.AluOpcode.SHR, use_imm=True, imm=-5),
        isa.Store(sram_base=0, dram_base=7, y_size=1, x_size=1, x_stride=1),
        isa.Finish(),
    ]  # fmt: skip
    from tilecraft.backends.accel.program import Kernel

    program = Program("all", spec, insns, [Kernel("k", 0, (isa.MicroOp(1, 2, 3),))])
    module = ModuleOp([program_to_ir(program)])
    verify_module(module)
    assert program_from_ir(find_program(module)) == program


def test_program_without_its_checks_is_an_error_not_a_pass(monkeypatch):
    # The spec checks live in backends/accel/verify.py (above the dialects layer); a
    # program verified without them loaded must fail loudly.
    from tilecraft.dialects import accel
    from xdsl.utils.exceptions import VerifyException

    monkeypatch.setattr(accel, "_PROGRAM_CHECKS", [])
    with pytest.raises(VerifyException, match="accel program checks are not loaded"):
        ProgramOp("p").verify()


def test_dram_overlap_is_found_past_an_empty_region():
    # @E is empty and sits between @A and the kernel that overlaps @A.
    text = """
    accel.program @p {
      accel.buffer @A inp dram(0) elems(4)
      accel.buffer @E inp dram(1) elems(0)
      accel.uop_kernel @k dram(8) {
        accel.uop 0, 0, 0
      }
    }
    """
    with pytest.raises(OpError, match=r"'accel.uop_kernel' op: its DRAM bytes \[0x20, 0x24\) overlap those of the accel.buffer"):
        parse_text(text)


# -- end to end on the simulator -------------------------------------------------------------------
DENSE = """
accel.program @dense {
  accel.buffer @x inp dram(0) elems(2)
  accel.buffer @w wgt dram(1) elems(4)
  accel.buffer @y out dram(128) elems(2)
  // acc[o] += inp[k] x wgt[2 o + k]^T for k in 0, 1; o is the outer loop
  accel.uop_kernel @gemv {
    accel.uop 0, 0, 0
    accel.uop 0, 1, 1
  }
  accel.uop_kernel @each {
    accel.uop 0, 0, 0
  }
  %x = accel.load inp sram(0) dram(0) size(1, 2) stride(2)
  %w = accel.load wgt sram(0) dram(1) size(1, 4) stride(4)
  %z = accel.gemm reset @each out 2 in 1 dst(1, 0) src(0, 0) wgt(0, 0)
  %g = accel.gemm @gemv out 2 in 1 dst(1, 0) src(0, 0) wgt(2, 0) after %x, %w
  %r = accel.alu max imm(0) @each out 2 in 1 dst(1, 0) src(1, 0)
  %s = accel.alu shr imm(4) @each out 2 in 1 dst(1, 0) src(1, 0)
  %c = accel.alu min imm(127) @each out 2 in 1 dst(1, 0) src(1, 0)
  %o = accel.store out sram(0) dram(128) size(1, 2) stride(2) after %c
  accel.finish after %o
}
"""


def test_a_program_runs_on_the_simulator_bit_exactly():
    """IR -> tokens lowered -> Program -> accel-bin -> Program -> the simulator, against numpy:
    y = min(max(x W^T, 0) >> 4, 127) over two output blocks and two input blocks (small
    values, so that the shift, not the clip, decides most elements)."""
    simulator = pytest.importorskip("tilecraft.backends.accel.simulator")
    import numpy as np
    from tilecraft.backends.accel.dram import Dram

    spec = DEFAULT
    module = lower(parse_text(DENSE))
    program = read_binary(write_binary(program_from_ir(find_program(module))))
    rng = np.random.default_rng(0)
    x = rng.integers(-8, 8, (2, spec.batch, spec.block))
    w = rng.integers(-8, 8, (2, 2, spec.block, spec.block))  # [o, k]: (block_out, block_in)
    dram = Dram()
    dram.alloc(program.dram_bytes(), align=1)
    dram.write_tiles(isa.MemoryType.INP, program.buffer("x").dram_base, x, spec)
    dram.write_tiles(isa.MemoryType.WGT, program.buffer("w").dram_base, w.reshape(4, spec.block, spec.block), spec)
    for address, words in program.uop_segments():
        dram.write(address, words)
    simulator.simulate(program.instructions, dram, spec)
    got = dram.get_tiles(isa.MemoryType.OUT, program.buffer("y").dram_base, 2, spec)
    acc = np.einsum("kbi,okji->obj", x, w)  # int64, no overflow at these sizes
    want = np.minimum(np.maximum(acc, 0) >> 4, 127)
    assert 0 < np.count_nonzero(want) and np.count_nonzero(want == 127) < want.size // 4
    np.testing.assert_array_equal(got, want)


def test_python_api_of_the_ops():
    # ProgramOp.spec and UopKernelOp from isa.MicroOps: what convert-loop-to-accel uses.
    program = ProgramOp("p", spec=BLOCK32_ATTR)
    assert program.spec == BLOCK32
    kernel = UopKernelOp("k", [isa.MicroOp(1, 2, 3), (4, 5, 6)])
    assert kernel.uops() == [(1, 2, 3), (4, 5, 6)]
