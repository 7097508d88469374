// RUN: tilecraft-opt %s --split-input-file -p convert-loop-to-accel --verify-diagnostics 2>&1 | filecheck %s

// A CPU scratch buffer has no place on the accelerator.
func.func @local_buffer(%A: memref<1x16xi8>) {
  // CHECK: convert-loop-to-accel-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-accel: a local buffer cannot live on the accelerator
  %t = loop.alloc "t" local : memref<1x16xi32>
  func.return
}

// -----

// An intrinsic without an accelerator lowering (a CPU micro-kernel).
func.func @cpu_intrinsic(%A: memref<4x8xf32>, %B: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %a = loop.alloc "a" inp_buffer : memref<4x8xf32>
  %b = loop.alloc "b" wgt_buffer : memref<16x16xf32>
  %c = loop.alloc "c" acc_buffer : memref<4x16xf32>
  // CHECK: convert-loop-to-accel-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-accel: tensor intrinsic 'gemm_4x16x8_f32' has no accelerator lowering
  loop.tensor_intrin "gemm_4x16x8_f32" ins(%a[%c0, %c0], %b[%c0, %c0]) outs(%c[%c0, %c0]) : memref<4x8xf32>, memref<16x16xf32>, memref<4x16xf32>
  func.return
}

// -----

// Elementwise math the ALU has no instruction for (a division by 3).
func.func @no_alu_form(%R: memref<1x16xi8>) {
  %acc = loop.alloc "acc" acc_buffer : memref<1x16xi32>
  loop.for %i = 0 to 16 {
    %c0 = arith.constant 0 : index
    %z = arith.constant 0 : i32
    memref.store %z, %acc[%c0, %i] : memref<1x16xi32>
  }
  loop.for %j = 0 to 16 {
    %c0 = arith.constant 0 : index
    %v = memref.load %acc[%c0, %j] : memref<1x16xi32>
    %three = arith.constant 3 : i32
    %q = arith.divsi %v, %three : i32
    // CHECK: convert-loop-to-accel-invalid.mlir:[[# @LINE + 1]]:5: error: convert-loop-to-accel: this elementwise computation has no ALU form
    memref.store %q, %acc[%c0, %j] : memref<1x16xi32>
  }
  func.return
}

// -----

// Only the accumulator is computed into; the input buffer is filled by DMA.
func.func @compute_into_input(%A: memref<1x16xi8>) {
  %a = loop.alloc "a" inp_buffer : memref<1x16xi8>
  loop.for %i = 0 to 16 {
    %c0 = arith.constant 0 : index
    %z = arith.constant 0 : i8
    // CHECK: convert-loop-to-accel-invalid.mlir:[[# @LINE + 1]]:5: error: convert-loop-to-accel: the accelerator computes into acc_buffer buffers only; this store writes a inp_buffer buffer
    memref.store %z, %a[%c0, %i] : memref<1x16xi8>
  }
  func.return
}

// -----

// A buffer larger than the accumulator (2048 elements at the default spec).
func.func @too_large(%R: memref<3000x16xi8>) {
  // CHECK: convert-loop-to-accel-invalid.mlir:[[# @LINE + 1]]:3: error: convert-loop-to-accel: the acc_buffer holds 2048 elements
  %acc = loop.alloc "acc" acc_buffer : memref<3000x16xi32>
  func.return
}
