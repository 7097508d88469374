// Unary math takes floating-point elements, the remainders no i1; anything else
// is an error at the op, one line, exit 1.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @sin_of_ints(%a: tensor<4xi32>) {
  // CHECK: math-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.sin' op: graph.sin takes floating-point elements, not i32
  %0 = graph.sin %a : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @round_of_bools(%a: tensor<4xi1>) {
  // CHECK: math-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.round' op: graph.round takes floating-point elements, not i1
  %0 = graph.round %a : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @fmod_of_bools(%a: tensor<4xi1>) {
  // CHECK: math-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.fmod' op: graph.fmod takes integer or float elements, not i1
  %0 = graph.fmod %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @fmod_of_mixed(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // CHECK: math-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.fmod' op: element types f32 and f64 differ
  %0 = graph.fmod %a, %b : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  func.return
}
