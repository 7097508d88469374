// RUN: tilecraft-opt %s --split-input-file -p instrument-counters --verify-diagnostics 2>&1 | filecheck %s

// A tensor intrinsic is one op here, a loop nest only after lower-tensor-intrin:
// its blocks cannot be counted yet.
func.func @gemm(%A: memref<8x16xf32>, %B: memref<16x32xf32>, %C: memref<8x32xf32>) {
  %i = arith.constant 0 : index
  %j = arith.constant 0 : index
  %k = arith.constant 0 : index
  // CHECK: instrument-counters-invalid.mlir:[[# @LINE + 1]]:3: error: instrument-counters: loop.tensor_intrin is not a loop nest yet; run lower-tensor-intrin first
  loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%i, %k], %B[%k, %j]) outs(%C[%i, %j]) : memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>
  func.return
}
