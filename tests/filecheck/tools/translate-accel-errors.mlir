// Bad accel-bin input and bad accel IR: one line naming what is wrong, exit code 1.
// RUN: tilecraft-translate %s --emit=accel-bin -o %t.bin
// RUN: not tilecraft-translate --disassemble %s 2>&1 | filecheck %s --check-prefix=MAGIC
// RUN: head -c 100 %t.bin > %t.short
// RUN: not tilecraft-translate --disassemble %t.short 2>&1 | filecheck %s --check-prefix=SHORT
// RUN: head -c 10 %t.bin > %t.tiny
// RUN: not tilecraft-translate --disassemble %t.tiny 2>&1 | filecheck %s --check-prefix=TINY
// RUN: cp %t.bin %t.flipped
// RUN: printf '\377' | dd of=%t.flipped bs=1 seek=120 conv=notrunc 2>/dev/null
// RUN: not tilecraft-translate --disassemble %t.flipped 2>&1 | filecheck %s --check-prefix=CORRUPT
// A field no instruction can have, under a valid checksum: opcode 7 in the first word.
// RUN: python -c "import sys, zlib, struct; d = open(sys.argv[1], 'rb').read()[:-4]; i = 8 + 4 + 4 + 60 + 16 + 1; d = d[:i] + bytes([7]) + d[i + 1:]; open(sys.argv[2], 'wb').write(d + struct.pack('<I', zlib.crc32(d)))" %t.bin %t.badop
// RUN: not tilecraft-translate --disassemble %t.badop 2>&1 | filecheck %s --check-prefix=FIELD
// RUN: not tilecraft-translate --disassemble %t.missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not tilecraft-translate --disassemble %t.bin --emit=llvm-ir 2>&1 | filecheck %s --check-prefix=EMIT
// RUN: not tilecraft-translate %s 2>&1 | filecheck %s --check-prefix=LLVM
// RUN: not tilecraft-translate %S/../backends/../tools/Inputs/good.mlir --emit=accel-asm 2>&1 | filecheck %s --check-prefix=NOPROG

accel.program @p {
  %0 = accel.load inp sram(0) dram(0) size(1, 1) stride(1)
  accel.finish
}

// MAGIC: {{^}}{{.*}}translate-accel-errors.mlir: not a valid accel-bin file: wrong magic number (an accel-bin file starts with b'TCACCEL\x00')
// MAGIC-NOT: Traceback
// SHORT: {{^}}{{.*}}.short: not a valid accel-bin file: checksum mismatch: the file is corrupt or truncated
// TINY: {{^}}{{.*}}.tiny: not a valid accel-bin file: truncated: the version needs 4 bytes at offset 8, 2 are left
// CORRUPT: {{^}}{{.*}}.flipped: not a valid accel-bin file: checksum mismatch: the file is corrupt or truncated
// FIELD: {{^}}{{.*}}.badop: not a valid accel-bin file: unknown opcode 7 in instruction 0x00000001000100010000000000000107
// MISSING: tilecraft-translate: error: cannot read '{{.*}}.missing': no such file
// EMIT: tilecraft-translate: error: --disassemble gives accel IR, accel-asm or accel-bin, not --emit=llvm-ir
// LLVM: tilecraft-translate: error: the input is accel IR, which has no --emit=llvm-ir: use --emit=accel-bin or --emit=accel-asm
// NOPROG: tilecraft-translate: error: --emit=accel-asm takes accel IR: expected one accel.program in the input, found none
