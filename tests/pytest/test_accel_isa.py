"""The accelerator's hardware spec and VTA's instruction encoding (backends/accel).

Golden words are written out by hand from the layout in isa.py's docstring (bit
positions as literal shifts), never produced by the encoder."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tilecraft.backends.accel import isa
from tilecraft.backends.accel.isa import (
    Alu,
    AluOpcode,
    EncodingError,
    Finish,
    Gemm,
    Load,
    MemoryType,
    MicroOp,
    Store,
)
from tilecraft.backends.accel.spec import (
    DEFAULT_SPEC_PATH,
    AccelSpec,
    SpecError,
    default_spec,
    load_spec,
)

DEFAULT = default_spec()
BIG = dataclasses.replace(DEFAULT, log_block=5, log_batch=1)  # BLOCK 32, BATCH 2


# -- the spec ----------------------------------------------------------------------------
def test_default_spec_is_vta_default():
    s = DEFAULT
    assert (s.inp_width, s.wgt_width, s.acc_width) == (8, 8, 32)
    assert (s.batch, s.block, s.macs_per_cycle) == (1, 16, 256)
    assert (s.inp_elem_bytes, s.wgt_elem_bytes, s.acc_elem_bytes, s.out_elem_bytes) == (16, 256, 64, 16)
    assert (s.uop_depth, s.inp_depth, s.wgt_depth, s.acc_depth, s.out_depth) == (8192, 2048, 1024, 2048, 2048)
    # the buffer sizes the issue names: 32 KiB uop and input, 256 KiB weight, 128 KiB acc
    assert s.uop_depth * s.uop_elem_bytes == 32 * 1024
    assert s.inp_depth * s.inp_elem_bytes == 32 * 1024
    assert s.wgt_depth * s.wgt_elem_bytes == 256 * 1024
    assert s.acc_depth * s.acc_elem_bytes == 128 * 1024
    assert (s.log_uop_depth, s.log_inp_depth, s.log_wgt_depth, s.log_acc_depth) == (13, 11, 10, 11)


def test_block32_batch2_spec_from_toml(tmp_path):
    values = {**DEFAULT.to_dict(), "LOG_BLOCK": 5, "LOG_BATCH": 1}
    path = tmp_path / "big.toml"
    path.write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
    s = load_spec(path)
    assert s == BIG
    assert (s.batch, s.block, s.macs_per_cycle) == (2, 32, 2048)
    assert (s.inp_elem_bytes, s.wgt_elem_bytes, s.acc_elem_bytes) == (64, 1024, 256)
    assert (s.inp_depth, s.wgt_depth, s.acc_depth) == (512, 256, 512)


def _write(tmp_path, values, name="spec.json"):
    path = tmp_path / name
    path.write_text(json.dumps(values) if isinstance(values, dict) else values)
    return path


def _spec_error(path) -> str:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"LOG_BLOCKS": 4}, ":LOG_BLOCKS: unknown key"),
        ({"LOG_BLOCK": True}, ":LOG_BLOCK: expected an integer, got True"),
        ({"LOG_BLOCK": 4.0}, ":LOG_BLOCK: expected an integer, got 4.0"),
        ({"LOG_BLOCK": "4"}, ":LOG_BLOCK: expected an integer, got '4'"),
        ({"LOG_BLOCK": -1}, ":LOG_BLOCK: -1 is out of range"),
        ({"GEMM_INITIATION_INTERVAL": 0}, ":GEMM_INITIATION_INTERVAL: 0 is out of range"),
        ({"LOG_ACC_WIDTH": 2}, ":LOG_ACC_WIDTH: the accumulator (4 bits) must be at least as wide"),
        ({"LOG_INP_WIDTH": 0, "LOG_WGT_WIDTH": 0, "LOG_BLOCK": 1}, ":LOG_INP_WIDTH: the input tile is 2 bits"),
        ({"LOG_INP_BUFF_SIZE": 3}, ":LOG_INP_BUFF_SIZE: the input buffer is smaller than one of its elements"),
        ({"LOG_INP_BUFF_SIZE": 21}, ":LOG_INP_BUFF_SIZE: the input buffer holds 2^17 elements"),
        # uop depth 2^14: GEMM word 0 needs 8 + 14 + 15 + 2 * 14 = 65 bits
        ({"LOG_UOP_BUFF_SIZE": 16}, (":LOG_UOP_BUFF_SIZE,LOG_ACC_BUFF_SIZE,LOG_INP_BUFF_SIZE,LOG_WGT_BUFF_SIZE: "
         "the GEMM layout needs 65 bits in its word 0")),
        # acc depth 2^12: ALU word 1 needs 4 * 12 + 3 + 1 + 16 = 68 bits (GEMM's 66 comes first)
        ({"LOG_ACC_BUFF_SIZE": 18}, "the GEMM layout needs 66 bits in its word 1"),
        ({"LOG_ACC_BUFF_SIZE": 18, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 17},
         ":LOG_UOP_BUFF_SIZE,LOG_ACC_BUFF_SIZE: the ALU layout needs 68 bits in its word 1"),
    ],
)
def test_bad_spec_value_names_the_key(tmp_path, change, expected):
    path = _write(tmp_path, {**DEFAULT.to_dict(), **change})
    message = _spec_error(path)
    assert message.startswith(str(path) + ":")
    assert expected in message


def test_missing_key(tmp_path):
    values = DEFAULT.to_dict()
    del values["DMA_LATENCY_CYCLES"]
    assert _spec_error(_write(tmp_path, values)).endswith(":DMA_LATENCY_CYCLES: missing (every key must be given)")


def test_bad_spec_files(tmp_path):
    assert ":2:1: not valid JSON" in _spec_error(_write(tmp_path, '{"LOG_BLOCK": 4,\n}'))
    assert "not valid TOML" in _spec_error(_write(tmp_path, "LOG_BLOCK = = 4", "spec.toml"))
    assert "a spec is a table" in _spec_error(_write(tmp_path, "[1, 2]"))
    assert "ends in .json or .toml" in _spec_error(_write(tmp_path, "{}", "spec.yaml"))
    assert "cannot read the spec file" in _spec_error(tmp_path / "absent.json")


def test_replace_validates():
    with pytest.raises(SpecError, match=r"vta_default\.json:LOG_BLOCK: 9 is out of range \[0, 8\]"):
        dataclasses.replace(DEFAULT, log_block=9)


def test_default_file_round_trips():
    assert json.loads(DEFAULT_SPEC_PATH.read_text()) == DEFAULT.to_dict()


# -- golden encodings ---------------------------------------------------------------------
def test_golden_load():
    insn = Load(
        memory_type=MemoryType.INP,
        sram_base=5,
        dram_base=0x1234,
        y_size=3,
        x_size=4,
        x_stride=16,
        y_pad_0=1,
        y_pad_1=2,
        x_pad_0=3,
        x_pad_1=15,
        pop_next=True,
        push_next=True,
    )
    word = (
        0  # opcode LOAD, bits 0-2
        | 1 << 4  # pop_next
        | 1 << 6  # push_next
        | 2 << 7  # memory_type INP, bits 7-9
        | 5 << 10  # sram_base, bits 10-25
        | 0x1234 << 26  # dram_base, bits 26-57
        | 3 << 64  # y_size
        | 4 << 80  # x_size
        | 16 << 96  # x_stride
        | 1 << 112  # y_pad_0
        | 2 << 116  # y_pad_1
        | 3 << 120  # x_pad_0
        | 15 << 124  # x_pad_1
    )
    assert isa.encode(insn, DEFAULT) == word
    assert isa.decode(word, DEFAULT) == insn


def test_golden_store_bytes():
    insn = Store(sram_base=0x7FF, dram_base=0xFFFFFFFF, y_size=1, x_size=1, x_stride=1, pop_prev=True)
    word = 1 | 1 << 3 | 4 << 7 | 0x7FF << 10 | 0xFFFFFFFF << 26 | 1 << 64 | 1 << 80 | 1 << 96
    assert isa.encode(insn, DEFAULT) == word
    # bytes: bit 0 is the low bit of byte 0
    data = isa.encode_stream([insn, Finish(push_prev=True)], DEFAULT)
    assert data[:16] == word.to_bytes(16, "little")
    assert data[16:] == bytes([0x23]) + bytes(15)  # FINISH=3 | push_prev (bit 5)


def test_golden_gemm():
    insn = Gemm(
        uop_begin=1,
        uop_end=9,
        iter_out=4,
        iter_in=2,
        dst_factor_out=16,
        dst_factor_in=1,
        src_factor_out=32,
        src_factor_in=2,
        wgt_factor_out=0,
        wgt_factor_in=3,
        pop_prev=True,
        push_prev=True,
    )
    word = (
        2  # opcode GEMM
        | 1 << 3  # pop_prev
        | 1 << 5  # push_prev
        | 0 << 7  # reset
        | 1 << 8  # uop_begin, bits 8-20
        | 9 << 21  # uop_end, bits 21-34
        | 4 << 35  # iter_out, bits 35-48
        | 2 << 49  # iter_in, bits 49-62
        | 16 << 64  # dst_factor_out, bits 64-74
        | 1 << 75  # dst_factor_in, bits 75-85
        | 32 << 86  # src_factor_out, bits 86-96
        | 2 << 97  # src_factor_in, bits 97-107
        | 0 << 108  # wgt_factor_out, bits 108-117
        | 3 << 118  # wgt_factor_in, bits 118-127
    )
    assert isa.encode(insn, DEFAULT) == word
    assert isa.decode(word, DEFAULT) == insn


def test_golden_gemm_reset_at_block32_batch2():
    # acc depth 2^9, input 2^9, weight 2^8: the high word's fields move
    insn = Gemm(
        reset=True,
        uop_begin=0,
        uop_end=1,
        iter_out=1,
        iter_in=1,
        dst_factor_out=1,
        dst_factor_in=1,
        src_factor_out=1,
        src_factor_in=1,
        wgt_factor_out=1,
        wgt_factor_in=255,
    )
    word = 2 | 1 << 7 | 0 << 8 | 1 << 21 | 1 << 35 | 1 << 49
    word |= 1 << 64 | 1 << 73 | 1 << 82 | 1 << 91 | 1 << 100 | 255 << 108
    assert isa.encode(insn, BIG) == word
    assert isa.decode(word, BIG) == insn


def test_golden_alu_immediate_and_tensor():
    shr = Alu(
        alu_opcode=AluOpcode.SHR,
        use_imm=True,
        imm=-1,
        uop_begin=0,
        uop_end=1,
        iter_out=1,
        iter_in=1,
        dst_factor_out=1,
        dst_factor_in=0,
        src_factor_out=0,
        src_factor_in=5,
        push_next=True,
    )
    word = 4 | 1 << 6 | 1 << 21 | 1 << 35 | 1 << 49 | 1 << 64 | 5 << 97 | 3 << 108 | 1 << 111 | 0xFFFF << 112
    assert isa.encode(shr, DEFAULT) == word
    assert isa.decode(word, DEFAULT) == shr
    mul = Alu(
        alu_opcode=AluOpcode.MUL,
        reset=False,
        uop_begin=2,
        uop_end=3,
        iter_out=1,
        iter_in=1,
        dst_factor_out=0,
        dst_factor_in=1,
        src_factor_out=0,
        src_factor_in=1,
    )
    word = 4 | 2 << 8 | 3 << 21 | 1 << 35 | 1 << 49 | 1 << 75 | 1 << 97 | 4 << 108
    assert isa.encode(mul, DEFAULT) == word
    assert isa.decode(word, DEFAULT) == mul


def test_golden_uops():
    assert isa.encode_uop(MicroOp(dst_idx=3, src_idx=7, wgt_idx=1000), DEFAULT) == 3 | 7 << 11 | 1000 << 22
    assert isa.encode_uop(MicroOp(dst_idx=3, src_idx=7, wgt_idx=200), BIG) == 3 | 7 << 9 | 200 << 18
    data = isa.encode_uops([MicroOp(1, 2, 3)], DEFAULT)
    assert data == (1 | 2 << 11 | 3 << 22).to_bytes(4, "little")
    assert isa.decode_uops(data, DEFAULT) == [MicroOp(1, 2, 3)]


# -- field overflow and bad words -------------------------------------------------------
def _loop(cls, **changes):
    base = {"uop_begin": 0, "uop_end": 1, "iter_out": 1, "iter_in": 1, "dst_factor_out": 0, "dst_factor_in": 0}
    base |= {"src_factor_out": 0, "src_factor_in": 0}
    if cls is Gemm:
        base |= {"wgt_factor_out": 0, "wgt_factor_in": 0}
    else:
        base |= {"alu_opcode": AluOpcode.ADD}
    return cls(**(base | changes))


@pytest.mark.parametrize(
    "insn, spec, expected",
    [
        (Load(memory_type=MemoryType.WGT, sram_base=1 << 16, dram_base=0, y_size=1, x_size=1, x_stride=1),
         DEFAULT, "LOAD field sram_base: 65536 does not fit in 16 unsigned bits (bits 10-25, range [0, 65535])"),
        (Store(sram_base=0, dram_base=-1, y_size=1, x_size=1, x_stride=1), DEFAULT,
         "STORE field dram_base: -1 does not fit in 32 unsigned bits"),
        (Load(memory_type=MemoryType.INP, sram_base=0, dram_base=0, y_size=1, x_size=1, x_stride=1, x_pad_1=16),
         DEFAULT, "LOAD field x_pad_1: 16 does not fit in 4 unsigned bits"),
        (_loop(Gemm, uop_begin=8192), DEFAULT, "GEMM field uop_begin: 8192 does not fit in 13 unsigned bits"),
        (_loop(Gemm, iter_out=1 << 14), DEFAULT, "GEMM field iter_out: 16384 does not fit in 14 unsigned bits"),
        # the same factor fits the default (11 bits) but not BLOCK 32 / BATCH 2 (9 bits)
        (_loop(Gemm, dst_factor_out=512), BIG, "GEMM field dst_factor_out: 512 does not fit in 9 unsigned bits"),
        (_loop(Alu, use_imm=True, imm=1 << 15), DEFAULT,
         "ALU field imm: 32768 does not fit in 16 signed bits (bits 112-127, range [-32768, 32767])"),
        (_loop(Alu, src_factor_in="1"), DEFAULT, "ALU field src_factor_in: expected an integer, got '1'"),
        (Finish(push_next=2), DEFAULT, "FINISH field push_next: 2 does not fit in 1 unsigned bits"),
    ],
)
def test_field_overflow_names_instruction_and_field(insn, spec, expected):
    with pytest.raises(EncodingError) as info:
        isa.encode(insn, spec)
    assert expected in str(info.value)


def test_factor_fits_default_but_not_big():
    assert isa.decode(isa.encode(_loop(Gemm, dst_factor_out=512), DEFAULT), DEFAULT).dst_factor_out == 512


def test_uop_overflow():
    with pytest.raises(EncodingError, match="micro-op field wgt_idx: 1024 does not fit in 10 unsigned bits"):
        isa.encode_uop(MicroOp(0, 0, 1024), DEFAULT)


def test_bad_words():
    with pytest.raises(EncodingError, match="unknown opcode 7"):
        isa.decode(7, DEFAULT)
    with pytest.raises(EncodingError, match="LOAD field memory_type: unknown value 7"):
        isa.decode(7 << 7, DEFAULT)
    with pytest.raises(EncodingError, match="ALU field alu_opcode: unknown value 5"):
        isa.decode(4 | 5 << 108, DEFAULT)
    with pytest.raises(EncodingError, match="GEMM instruction .* has bits set outside its fields"):
        isa.decode(2 | 1 << 63, DEFAULT)
    with pytest.raises(EncodingError, match="FINISH instruction .* has bits set outside its fields"):
        isa.decode(3 | 1 << 100, DEFAULT)
    with pytest.raises(EncodingError, match="multiple of 16 bytes"):
        isa.decode_stream(bytes(17), DEFAULT)


# -- round trips ----------------------------------------------------------------------------
def _value(bit_field):
    if bit_field.signed:
        half = 1 << (bit_field.width - 1)
        return st.integers(-half, half - 1)
    if bit_field.width == 1:
        return st.booleans()
    return st.integers(0, (1 << bit_field.width) - 1)


def _instructions(spec: AccelSpec):
    layouts = isa.layouts(spec)

    def build(cls, layout, **fixed):
        values = {f.name: _value(f) for f in layout if f.name != "opcode" and f.name not in fixed}
        return st.fixed_dictionaries(values).map(lambda v: cls(**v, **fixed))

    memory_types = st.sampled_from(list(MemoryType))
    return st.one_of(
        memory_types.flatmap(lambda m: build(Load, layouts.memory, memory_type=m)),
        memory_types.flatmap(lambda m: build(Store, layouts.memory, memory_type=m)),
        build(Gemm, layouts.gemm),
        st.sampled_from(list(AluOpcode)).flatmap(lambda op: build(Alu, layouts.alu, alu_opcode=op)),
        build(Finish, layouts.finish),
    )


@pytest.mark.parametrize("spec", [DEFAULT, BIG], ids=["default", "block32-batch2"])
def test_round_trip(spec):
    @settings(max_examples=300, deadline=None)
    @given(st.lists(_instructions(spec), min_size=1, max_size=8))
    def check(insns):
        data = isa.encode_stream(insns, spec)
        assert len(data) == 16 * len(insns)
        assert isa.decode_stream(data, spec) == insns

    check()


@pytest.mark.parametrize("spec", [DEFAULT, BIG], ids=["default", "block32-batch2"])
def test_uop_round_trip(spec):
    layout = isa.layouts(spec).uop

    @settings(max_examples=200, deadline=None)
    @given(st.fixed_dictionaries({f.name: _value(f) for f in layout}))
    def check(values):
        uop = MicroOp(**values)
        assert isa.decode_uop(isa.encode_uop(uop, spec), spec) == uop

    check()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << 128) - 1))
def test_any_word_decodes_exactly_or_is_refused(word):
    try:
        insn = isa.decode(word, DEFAULT)
    except EncodingError:
        return
    assert isa.encode(insn, DEFAULT) == word
