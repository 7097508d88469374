// RUN: tilecraft-opt %s --split-input-file -p 'lower-tensor-intrin{target=accel}' --verify-diagnostics 2>&1 | filecheck %s
// The lowering is per target: the built-in intrinsics have only an "llvm" one.

func.func @no_lowering(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>, %z: index) {
  // CHECK: lower-tensor-intrin-invalid.mlir:[[# @LINE + 1]]:3: error: lower-tensor-intrin: tensor intrinsic 'gemm_4x16x8_f32' has no loop-kernel lowering for target 'accel' (its lowerings: llvm)
  loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%z, %z], %B[%z, %z]) outs(%C[%z, %z]) : memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>
  func.return
}
