// Verifier errors of graph.reduce_min/reduce_prod/cumulative: the message at the op.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @min_axis_out_of_range(%x: tensor<2x3xf32>) {
  // CHECK: reductions-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reduce_min' op: axis 2 is out of range for rank 2.
  %0 = graph.reduce_min %x {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @prod_wrong_result(%x: tensor<2x3xf32>) {
  // CHECK: error: 'graph.reduce_prod' op: graph.reduce_prod result is tensor<2x3xf32> but its operands give tensor<2x1xf32>.
  %0 = graph.reduce_prod %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @cumulative_kind(%x: tensor<4xf32>) {
  // CHECK: reductions-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.cumulative' op: graph.cumulative kind must be 'sum' or 'prod', not 'max'.
  %0 = graph.cumulative %x {kind = "max"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @cumulative_axis(%x: tensor<4xf32>) {
  // CHECK: error: 'graph.cumulative' op: axis 1 is out of range for rank 1.
  %0 = graph.cumulative %x {axis = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}
