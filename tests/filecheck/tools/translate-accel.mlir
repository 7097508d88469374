// tilecraft-translate on accel IR: the listing, the binary, and the disassembler
// back to IR, which encodes to the same bytes.
// RUN: tilecraft-translate %s --emit=accel-asm | filecheck %s
// RUN: tilecraft-opt %s -t accel-asm | filecheck %s
// RUN: tilecraft-translate %s --emit=accel-bin -o %t.bin
// RUN: tilecraft-translate --disassemble %t.bin -o %t.dis.mlir
// RUN: filecheck %s --check-prefix=DIS --input-file %t.dis.mlir
// RUN: tilecraft-translate %t.dis.mlir --emit=accel-bin -o %t.again.bin
// RUN: cmp %t.bin %t.again.bin
// The listing of the binary is the listing of the IR.
// RUN: tilecraft-translate --disassemble %t.bin --emit=accel-asm | filecheck %s
// RUN: tilecraft-translate --disassemble - --emit=accel-bin < %t.bin | cmp %t.bin -

// Tokens are lowered to flags first (lower-accel-tokens); the kernel is placed
// after the buffers (byte 0x240 = uop element 144) and loaded once: the second
// GEMM finds it resident.
accel.program @layer {
  accel.buffer @x inp dram(0) elems(16)
  accel.buffer @w wgt dram(1) elems(1)
  accel.buffer @y out dram(32) elems(4)
  accel.uop_kernel @k {
    accel.uop 0, 0, 0
    accel.uop 1, 1, 0
  }
  %x = accel.load inp sram(0) dram(0) size(2, 8) stride(8) pad(0, 0, 1, 1)
  %w = accel.load wgt sram(0) dram(1) size(1, 1) stride(1)
  %z = accel.gemm reset @k out 2 in 1 dst(2, 0) src(0, 0) wgt(0, 0)
  %g = accel.gemm @k out 2 in 1 dst(2, 0) src(10, 0) wgt(0, 0) after %x, %w
  %r = accel.alu max imm(0) @k out 2 in 1 dst(2, 0) src(2, 0)
  %s = accel.store out sram(0) dram(32) size(1, 4) stride(4) after %r
  accel.finish after %s
}

// CHECK:      ; accel program @layer: 8 instructions, 2 micro-ops
// CHECK-NEXT: ; spec: BATCH 1, BLOCK 16, widths inp 8 wgt 8 acc 32; depths uop 8192 inp 2048 wgt 1024 acc 2048
// CHECK-NEXT: ; buffer @x inp bytes [0x0, 0x100)
// CHECK-NEXT: ; buffer @w wgt bytes [0x100, 0x200)
// CHECK-NEXT: ; buffer @y out bytes [0x200, 0x240)
// CHECK-NEXT: ; kernel @k bytes [0x240, 0x248): (0,0,0) (1,1,0)
// The first LOAD: x_pad_0 = x_pad_1 = 1 in the top byte (bits 120-127), then
// x_stride, x_size, y_size; word 0: opcode 0, memory_type INP (2) at bit 7 = 0x100.
// The wgt LOAD: dram_base 1 at bit 26, memory_type WGT (1) at bit 7, push_next bit 6.
// CHECK-NEXT: 0: 11000008000800020000000000000100  LOAD inp sram=0 dram=0 y=2 x=8 stride=8 pad=0,0,1,1
// CHECK-NEXT: 1: 000000010001000100000000040000c0  LOAD wgt sram=0 dram=1 y=1 x=1 stride=1  [push_next]
// CHECK-NEXT: 2: {{[0-9a-f]+}}  LOAD uop sram=0 dram=144 y=1 x=2 stride=2
// CHECK-NEXT: 3: {{[0-9a-f]+}}  GEMM reset uops=[0,2) out=2 in=1 dst=2,0 src=0,0 wgt=0,0
// CHECK-NEXT: 4: {{[0-9a-f]+}}  GEMM uops=[0,2) out=2 in=1 dst=2,0 src=10,0 wgt=0,0  [pop_prev]
// CHECK-NEXT: 5: {{[0-9a-f]+}}  ALU max imm=0 uops=[0,2) out=2 in=1 dst=2,0 src=2,0  [push_next]
// CHECK-NEXT: 6: {{[0-9a-f]+}}  STORE out sram=0 dram=32 y=1 x=4 stride=4  [pop_prev push_prev]
// FINISH: opcode 3, pop_next (bit 4).
// CHECK-NEXT: 7: 00000000000000000000000000000013  FINISH  [pop_next]
// CHECK-NOT:  {{.}}

// DIS:      accel.program @layer {
// DIS-NEXT:   accel.buffer @x inp dram(0) elems(16)
// DIS-NEXT:   accel.buffer @w wgt dram(1) elems(1)
// DIS-NEXT:   accel.buffer @y out dram(32) elems(4)
// DIS-NEXT:   accel.uop_kernel @k dram(144) {
// DIS-NEXT:     accel.uop 0, 0, 0
// DIS-NEXT:     accel.uop 1, 1, 0
// DIS-NEXT:   }
// DIS-NEXT:   accel.load inp sram(0) dram(0) size(2, 8) stride(8) pad(0, 0, 1, 1){{$}}
// DIS-NEXT:   accel.load wgt sram(0) dram(1) size(1, 1) stride(1) flags(push_next)
// DIS-NEXT:   accel.load uop sram(0) dram(144) size(1, 2) stride(2){{$}}
// DIS-NEXT:   accel.gemm reset uops(0, 2) out 2 in 1 dst(2, 0) src(0, 0) wgt(0, 0){{$}}
// DIS-NEXT:   accel.gemm uops(0, 2) out 2 in 1 dst(2, 0) src(10, 0) wgt(0, 0) flags(pop_prev)
// DIS-NEXT:   accel.alu max imm(0) uops(0, 2) out 2 in 1 dst(2, 0) src(2, 0) flags(push_next)
// DIS-NEXT:   accel.store out sram(0) dram(32) size(1, 4) stride(4) flags(pop_prev, push_prev)
// DIS-NEXT:   accel.finish flags(pop_next)
// DIS-NEXT: }
