// loop.tensor_intrin in its custom syntax: printed, parsed again, printed identically.
// RUN: tilecraft-opt %s -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir

func.func @gemm(%A: memref<8x16xf32>, %B: memref<16x32xf32>, %C: memref<8x32xf32>, %i: index, %j: index, %k: index) {
  loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%i, %k], %B[%k, %j]) outs(%C[%i, %j]) : memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>
  func.return
}

// CHECK: loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%i, %k], %B[%k, %j]) outs(%C[%i, %j]) : memref<8x16xf32>, memref<16x32xf32>, memref<8x32xf32>
