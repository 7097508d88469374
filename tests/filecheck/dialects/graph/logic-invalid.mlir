// Bitwise ops take integer (or i1) elements, mod no i1; anything else is an error
// at the op, one line, exit 1.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @xor_of_floats(%a: tensor<4xf32>) {
  // CHECK: logic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.bitwise_xor' op: graph.bitwise_xor takes integer or i1 elements, not f32
  %0 = graph.bitwise_xor %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @not_of_halves(%a: tensor<4xf16>) {
  // CHECK: logic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.bitwise_not' op: graph.bitwise_not takes integer or i1 elements, not f16
  %0 = graph.bitwise_not %a : (tensor<4xf16>) -> tensor<4xf16>
  func.return
}

// -----

func.func @mod_of_bools(%a: tensor<4xi1>) {
  // CHECK: logic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.mod' op: graph.mod takes integer or float elements, not i1
  %0 = graph.mod %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}
