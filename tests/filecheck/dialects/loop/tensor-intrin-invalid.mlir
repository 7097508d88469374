// loop.tensor_intrin verifier errors: the message and the file:line:col of the op.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s

func.func @unknown(%A: memref<4x8xf32>, %C: memref<4x16xf32>, %z: index) {
  // CHECK: tensor-intrin-invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.tensor_intrin' op: loop.tensor_intrin: no tensor intrinsic is named 'mystery' (registered: gemm_4x16x8_f32, gemv_1x16x16_i8).
  loop.tensor_intrin "mystery" ins(%A[%z, %z]) outs(%C[%z, %z]) : memref<4x8xf32>, memref<4x16xf32>
  func.return
}

// -----

func.func @operands(%A: memref<4x8xf32>, %C: memref<4x16xf32>, %z: index) {
  // CHECK: tensor-intrin-invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.tensor_intrin' op: loop.tensor_intrin 'gemm_4x16x8_f32' takes 2 inputs and one output.
  loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%z, %z]) outs(%C[%z, %z]) : memref<4x8xf32>, memref<4x16xf32>
  func.return
}

// -----

// The 8x16 region of B does not fit a 4x16 buffer.
func.func @small(%A: memref<4x8xf32>, %B: memref<4x16xf32>, %C: memref<4x16xf32>, %z: index) {
  // CHECK: tensor-intrin-invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.tensor_intrin' op: loop.tensor_intrin 'gemm_4x16x8_f32': operand B is a 8x16 region of f32, which memref<4x16xf32> cannot hold.
  loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%z, %z], %B[%z, %z]) outs(%C[%z, %z]) : memref<4x8xf32>, memref<4x16xf32>, memref<4x16xf32>
  func.return
}

// -----

func.func @dtype(%A: memref<4x8xf16>, %B: memref<8x16xf32>, %C: memref<4x16xf32>, %z: index) {
  // CHECK: tensor-intrin-invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.tensor_intrin' op: loop.tensor_intrin 'gemm_4x16x8_f32': operand A is a 4x8 region of f32, which memref<4x8xf16> cannot hold.
  loop.tensor_intrin "gemm_4x16x8_f32" ins(%A[%z, %z], %B[%z, %z]) outs(%C[%z, %z]) : memref<4x8xf16>, memref<8x16xf32>, memref<4x16xf32>
  func.return
}

// -----

func.func @indices(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>, %z: index) {
  // CHECK: tensor-intrin-invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.tensor_intrin' op: loop.tensor_intrin takes one base index per buffer dimension (6), not 5.
  "loop.tensor_intrin"(%A, %B, %C, %z, %z, %z, %z, %z) <{intrin = "gemm_4x16x8_f32", num_inputs = #builtin.int<2>, operandSegmentSizes = array<i32: 3, 5>}> : (memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>, index, index, index, index, index) -> ()
  func.return
}
