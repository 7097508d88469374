"""The seven scenarios of VTA's instruction unit tests (tvm vta/tests/python/unittest/
test_vta_insn.py), as hand-written instruction streams on the simulator, bit-exact
against numpy integer arithmetic: runtime array, save/load of outputs, padded load,
GEMM without and with two virtual threads, ALU ops with immediate and tensor operands,
relu, shift and scale. Each runs at VTA's default spec and at a BLOCK-32 / BATCH-2 one.

The GEMM streams are written the way VTA's compiler emits them: loads and GEMMs in
separate modules, the load module's push_next / the GEMM's pop_prev ordering each
loaded tile before its use, and the GEMM's push_prev / the next load's pop_next
releasing the buffer region (the pipelined token pattern). With two virtual threads
each thread has its own input/weight/accumulator regions, so one thread's loads run
while the other computes: the cycle tests check that this is faster and that a
GEMM-bound stream keeps the GEMM core near its ideal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from tilecraft.backends.accel.dram import Dram
from tilecraft.backends.accel.isa import (
    Alu,
    AluOpcode,
    Finish,
    Gemm,
    Instruction,
    Load,
    MemoryType,
    MicroOp,
    Store,
)
from tilecraft.backends.accel.simulator import GEMM_PIPELINE_CYCLES, simulate, simulate_stream
from tilecraft.backends.accel.isa import encode_stream
from tilecraft.backends.accel.spec import AccelSpec, default_spec

DEFAULT = default_spec()
# BLOCK 32, BATCH 2; the accumulator made large enough for the padded-load scenario.
BIG = dataclasses.replace(DEFAULT, log_block=5, log_batch=1, log_acc_buff_size=19)
SPECS = pytest.mark.parametrize("spec", [DEFAULT, BIG], ids=["default", "block32-batch2"])


def out_max(spec: AccelSpec) -> int:
    return (1 << (spec.inp_width - 1)) - 1


def to_out(values: np.ndarray, spec: AccelSpec) -> np.ndarray:
    """numpy's astype to the output width: the low bits, sign-extended."""
    half = 1 << (spec.out_width - 1)
    return (values.astype(np.int64) + half) % (2 * half) - half


def alu(op: AluOpcode, count: int, uop: int, imm: int | None = None, **flags) -> Alu:
    """An ALU over `count` consecutive accumulator elements from micro-op `uop`'s indices."""
    return Alu(
        alu_opcode=op,
        use_imm=imm is not None,
        imm=imm or 0,
        uop_begin=uop,
        uop_end=uop + 1,
        iter_out=count,
        iter_in=1,
        dst_factor_out=1,
        dst_factor_in=0,
        src_factor_out=1,
        src_factor_in=0,
        **flags,
    )


def acc_program(spec, operands: list[np.ndarray], ops: list[tuple[AluOpcode, int | None]], pads=(0, 0, 0, 0)):
    """VTA's ALU scenarios: load each operand (rows, cols, BATCH, BLOCK) int32 into the
    accumulator (the first with `pads` = (y_pad_0, y_pad_1, x_pad_0, x_pad_1)), run `ops`
    on the first (tensor operands read the second), store it as int8; returns DRAM out."""
    dram = Dram()
    rows, cols = operands[0].shape[:2]
    y0, y1, x0, x1 = pads
    count = (rows + y0 + y1) * (cols + x0 + x1)
    uop_base = dram.put_uops([MicroOp(0, count)], spec)
    out_base = dram.alloc_tiles(MemoryType.OUT, count, spec)
    insns: list[Instruction] = [
        Load(memory_type=MemoryType.UOP, sram_base=0, dram_base=uop_base, y_size=1, x_size=1, x_stride=1)
    ]
    for number, operand in enumerate(operands):
        base = dram.put_tiles(MemoryType.ACC, operand, spec)
        padding = dict(y_pad_0=y0, y_pad_1=y1, x_pad_0=x0, x_pad_1=x1) if number == 0 else {}
        insns.append(
            Load(
                memory_type=MemoryType.ACC,
                sram_base=number * count,
                dram_base=base,
                y_size=rows,
                x_size=cols,
                x_stride=cols,
                **padding,
            )
        )
    for number, (op, imm) in enumerate(ops):
        insns.append(alu(op, count, 0, imm, push_next=number == len(ops) - 1))
    insns += [
        Store(sram_base=0, dram_base=out_base, y_size=1, x_size=count, x_stride=count, pop_prev=True, push_prev=True),
        Finish(pop_next=True),
    ]
    result = simulate(insns, dram, spec)
    assert result.finished
    out = dram.get_tiles(MemoryType.OUT, out_base, count, spec)
    return out.reshape(rows + y0 + y1, cols + x0 + x1, spec.batch, spec.block), result


def random_acc(rng, low, high, shape, spec):
    return rng.integers(low, high, size=(*shape, spec.batch, spec.block)).astype(np.int32)


# -- 1. runtime array ---------------------------------------------------------------------
@SPECS
def test_runtime_array(spec):
    """An int8 array of tiles goes into DRAM and comes back unchanged (`tvm.nd.array`)."""
    rng = np.random.default_rng(1)
    x = rng.integers(1, 10, size=(100, 100, spec.batch, spec.block)).astype(np.int8)
    dram = Dram()
    base = dram.put_tiles(MemoryType.INP, x, spec)
    back = dram.get_tiles(MemoryType.INP, base, 100 * 100, spec).reshape(x.shape)
    np.testing.assert_array_equal(back, x)
    raw = dram.read(base * spec.inp_elem_bytes, x.shape, np.int8)  # the layout is plain int8 C order
    np.testing.assert_array_equal(raw, x)


# -- 2. save/load of outputs -----------------------------------------------------------------
@SPECS
def test_save_load_out(spec):
    """LOAD ACC, a no-op ALU (x >> 0) that writes the output buffer, STORE as int8."""
    rng = np.random.default_rng(2)
    x = random_acc(rng, 1, 10, (6, 6), spec)
    out, result = acc_program(spec, [x], [(AluOpcode.SHR, 0)])
    np.testing.assert_array_equal(out, x.astype(np.int8))
    assert result.stats.bytes_loaded["acc"] == x.size * 4
    assert result.stats.bytes_stored["out"] == x.size


# -- 3. padded load ------------------------------------------------------------------------------
@SPECS
def test_padded_load(spec):
    """A LOAD with padding: pad_before (0, 1), pad_after (1, 3) around a 21 x 20 tile grid."""
    rng = np.random.default_rng(3)
    n, m = 21, 20
    x = random_acc(rng, 1, 2, (n, m), spec)
    out, result = acc_program(spec, [x], [(AluOpcode.SHR, 0)], pads=(0, 1, 1, 3))
    expected = np.zeros((n + 1, m + 4, spec.batch, spec.block), np.int8)
    expected[0:n, 1 : 1 + m] = x
    np.testing.assert_array_equal(out, expected)
    # the padding costs load cycles (written at the DMA rate) but moves no DRAM bytes
    assert result.stats.bytes_loaded["acc"] == x.size * 4
    padded_bytes = (n + 1) * (m + 4) * spec.acc_elem_bytes
    load_acc = 1  # after the uop load
    assert result.end[load_acc] - result.start[load_acc] == spec.dma_latency_cycles + -(
        -padded_bytes // spec.dma_bytes_per_cycle
    )


# -- 4, 5. GEMM without and with two virtual threads ---------------------------------------------
def gemm_stream(spec: AccelSpec, dram: Dram, x, w, threads: int, serial: bool = False, shift: int = 8):
    """y = clip((sum over ko of x[:, ko] . w[:, ko]^T) >> shift, 0, out max) as int8, with
    x (o, n, BATCH, BLOCK) and w (m, n, BLOCK, BLOCK); the o rows split among `threads`
    virtual threads. `serial` is the ablation: the same instructions, but every load
    waits for the GEMM before it, whichever thread it belongs to. Returns (instructions,
    DRAM element address of y)."""
    o, n = x.shape[:2]
    m = w.shape[0]
    rows = o // threads  # rows of one thread
    x_base = dram.put_tiles(MemoryType.INP, x, spec)
    w_base = dram.put_tiles(MemoryType.WGT, w, spec)
    # micro-op t: thread t's GEMM origin; threads + t: its ALU origin
    uops = [MicroOp(t * rows * m, t * rows, t * m) for t in range(threads)]
    uops += [MicroOp(t * rows * m, 0) for t in range(threads)]
    uop_base = dram.put_uops(uops, spec)
    y_base = dram.alloc_tiles(MemoryType.OUT, o * m, spec)

    def gemm(t: int, **flags) -> Gemm:
        # acc[t*rows*m + i*m + j] (+)= inp[t*rows + i] . wgt[t*m + j]
        return Gemm(
            uop_begin=t,
            uop_end=t + 1,
            iter_out=rows,
            iter_in=m,
            dst_factor_out=m,
            dst_factor_in=1,
            src_factor_out=0 if flags.get("reset") else 1,
            src_factor_in=0,
            wgt_factor_out=0,
            wgt_factor_in=0 if flags.get("reset") else 1,
            **flags,
        )

    insns: list[Instruction] = [
        Load(memory_type=MemoryType.UOP, sram_base=0, dram_base=uop_base, y_size=1, x_size=len(uops), x_stride=1)
    ]
    insns += [gemm(t, reset=True) for t in range(threads)]
    for ko in range(n):
        for t in range(threads):
            insns.append(
                Load(
                    memory_type=MemoryType.INP,
                    sram_base=t * rows,
                    dram_base=x_base + t * rows * n + ko,
                    y_size=rows,
                    x_size=1,
                    x_stride=n,
                    # wait until this thread's GEMM of ko - 1 (serial: the GEMM before) is done
                    pop_next=ko > 0 or (serial and t > 0),
                )
            )
            insns.append(
                Load(
                    memory_type=MemoryType.WGT,
                    sram_base=t * m,
                    dram_base=w_base + ko,
                    y_size=m,
                    x_size=1,
                    x_stride=n,
                    push_next=True,  # this thread's tiles of ko are in
                )
            )
        for t in range(threads):
            last = ko == n - 1 and (t == threads - 1 or not serial)
            insns.append(gemm(t, pop_prev=True, push_prev=not last))
    for t in range(threads):
        insns.append(alu(AluOpcode.SHR, rows * m, threads + t, shift))
        insns.append(alu(AluOpcode.MAX, rows * m, threads + t, 0))
        insns.append(alu(AluOpcode.MIN, rows * m, threads + t, out_max(spec), push_next=True))
        insns.append(
            Store(
                sram_base=t * rows * m,
                dram_base=y_base + t * rows * m,
                y_size=1,
                x_size=rows * m,
                x_stride=rows * m,
                pop_prev=True,
                push_prev=t == threads - 1,
            )
        )
    insns.append(Finish(pop_next=True))
    return insns, y_base


def gemm_reference(x, w, spec, shift=8):
    acc = np.einsum("onbk,mnck->ombc", x.astype(np.int64), w.astype(np.int64))
    acc = to_out(acc, dataclasses.replace(spec, log_inp_width=spec.log_acc_width))  # int32 wraparound
    return np.clip(acc >> shift, 0, out_max(spec)).astype(np.int8)


def run_gemm(spec, o, n, m, threads, serial=False, seed=4):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, size=(o, n, spec.batch, spec.block)).astype(np.int8)
    w = rng.integers(-128, 128, size=(m, n, spec.block, spec.block)).astype(np.int8)
    dram = Dram()
    insns, y_base = gemm_stream(spec, dram, x, w, threads, serial)
    result = simulate(insns, dram, spec)
    y = dram.get_tiles(MemoryType.OUT, y_base, o * m, spec).reshape(o, m, spec.batch, spec.block)
    np.testing.assert_array_equal(y, gemm_reference(x, w, spec))
    assert result.stats.macs == o * n * m * spec.macs_per_cycle
    return result, insns


@SPECS
@pytest.mark.parametrize("n", [1, 3])
def test_gemm(spec, n):
    """VTA's default schedule: one thread, x and w loaded per reduction step ko."""
    run_gemm(spec, o=4, n=n, m=4, threads=1)


@SPECS
@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("serial", [False, True], ids=["pipelined", "serial"])
def test_gemm_two_virtual_threads(spec, n, serial):
    """VTA's smt schedule: the rows split over two virtual threads (cthread)."""
    result, insns = run_gemm(spec, o=4, n=n, m=4, threads=2, serial=serial)
    # same result through the binary stream
    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, size=(4, n, spec.batch, spec.block)).astype(np.int8)
    w = rng.integers(-128, 128, size=(4, n, spec.block, spec.block)).astype(np.int8)
    dram = Dram()
    insns, y_base = gemm_stream(spec, dram, x, w, threads=2, serial=serial)
    again = simulate_stream(encode_stream(insns, spec), dram, spec)
    assert again.start == result.start and again.cycles == result.cycles
    y = dram.get_tiles(MemoryType.OUT, y_base, 16, spec).reshape(4, 4, spec.batch, spec.block)
    np.testing.assert_array_equal(y, gemm_reference(x, w, spec))


def test_two_virtual_threads_hide_load_latency():
    """The double-buffered (two-thread) stream computes the same in fewer cycles than the
    same instructions serialized: one thread's loads overlap the other's GEMM."""
    serial, _ = run_gemm(DEFAULT, o=32, n=8, m=8, threads=2, serial=True)
    piped, _ = run_gemm(DEFAULT, o=32, n=8, m=8, threads=2)
    assert piped.cycles < serial.cycles
    assert piped.stats.gemm_utilization > serial.stats.gemm_utilization
    # serialized: the compute module waits on the load module every step
    assert serial.stats.modules["compute"].token_stall_cycles > piped.stats.modules["compute"].token_stall_cycles
    print("serialized", serial.cycles, "two threads", piped.cycles)


def test_gemm_bound_stream_is_near_ideal():
    """Long GEMMs behind double-buffered loads: after the first loads the GEMM core never
    waits, and GEMM cycles are the ideal MAC cycles plus the pipeline fill per GEMM."""
    o, n, m = 128, 32, 16  # a thread's GEMM (64 x 16 steps) outlasts its loads (1 KiB + 4 KiB)
    result, insns = run_gemm(DEFAULT, o=o, n=n, m=m, threads=2)
    stats = result.stats
    gemms = sum(1 for i in insns if isinstance(i, Gemm) and not i.reset)
    assert stats.gemm_busy_cycles == stats.ideal_gemm_cycles + gemms * GEMM_PIPELINE_CYCLES
    assert stats.gemm_busy_cycles <= 1.01 * stats.ideal_gemm_cycles
    first_gemm = next(k for k, i in enumerate(insns) if isinstance(i, Gemm) and not i.reset)
    last_gemm = max(k for k, i in enumerate(insns) if isinstance(i, Gemm) and not i.reset)
    # from the first to the last GEMM the core is busy all the time
    span = result.end[last_gemm] - result.start[first_gemm]
    assert span == stats.gemm_busy_cycles
    assert stats.gemm_utilization > 0.8


# -- 6. ALU with immediate and tensor operands --------------------------------------------------------
ALU_CASES = [
    # (name, opcode, imm or None (tensor), numpy meaning)
    ("shl_imm", AluOpcode.SHR, "neg", lambda a, b: np.left_shift(a, b)),
    ("max_imm", AluOpcode.MAX, "imm", np.maximum),
    ("max", AluOpcode.MAX, None, np.maximum),
    ("add_imm", AluOpcode.ADD, "imm", np.add),
    ("add", AluOpcode.ADD, None, np.add),
    ("shr_imm", AluOpcode.SHR, "imm", np.right_shift),
    ("min", AluOpcode.MIN, None, np.minimum),
    ("mul_imm", AluOpcode.MUL, "imm", np.multiply),
    ("mul", AluOpcode.MUL, None, np.multiply),
]


@SPECS
@pytest.mark.parametrize("name,opcode,kind,meaning", ALU_CASES, ids=[c[0] for c in ALU_CASES])
def test_alu(spec, name, opcode, kind, meaning):
    """acc = op(a, imm) or op(a, b) over 8 x 8 tiles, stored as int8 (VTA's check_alu)."""
    rng = np.random.default_rng(6)
    a = random_acc(rng, -16, 16, (8, 8), spec)
    imm = int(rng.integers(1, 5))
    if kind is None:
        b = random_acc(rng, -16, 16, (8, 8), spec)
        out, _ = acc_program(spec, [a, b], [(opcode, None)])
        expected = meaning(a.astype(np.int64), b.astype(np.int64))
    else:
        # VTA writes x << imm as a right shift by -imm
        out, _ = acc_program(spec, [a], [(opcode, -imm if kind == "neg" else imm)])
        expected = meaning(a.astype(np.int64), imm)
    np.testing.assert_array_equal(out, to_out(expected, spec))


# -- 7. relu --------------------------------------------------------------------------------------------
@SPECS
def test_relu(spec):
    """max(a, 0) then min(., 127): the clip of a relu into int8."""
    rng = np.random.default_rng(7)
    a = random_acc(rng, -256, 256, (8, 10), spec)
    out, _ = acc_program(spec, [a], [(AluOpcode.MAX, 0), (AluOpcode.MIN, out_max(spec))])
    np.testing.assert_array_equal(out, np.clip(a, 0, out_max(spec)).astype(np.int8))


# -- 8. shift and scale -------------------------------------------------------------------------------
@SPECS
def test_shift_and_scale(spec):
    """(a + imm_shift) >> imm_scale, as int8."""
    rng = np.random.default_rng(8)
    imm_shift, imm_scale = int(rng.integers(0, 8)), int(rng.integers(1, 5))
    a = random_acc(rng, -10, 10, (2, 8), spec)
    out, _ = acc_program(spec, [a], [(AluOpcode.ADD, imm_shift), (AluOpcode.SHR, imm_scale)])
    np.testing.assert_array_equal(out, to_out(np.right_shift(a + imm_shift, imm_scale), spec))
