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
  // CHECK: reductions-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.cumulative' op: graph.cumulative attribute 'kind' must be one of sum, prod (#graph<cumulative_kind ...>), not "max".
  %0 = graph.cumulative %x {kind = "max"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @cumulative_axis(%x: tensor<4xf32>) {
  // CHECK: error: 'graph.cumulative' op: axis 1 is out of range for rank 1.
  %0 = graph.cumulative %x {axis = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @gather_elements_float_ids(%x: tensor<4x5xf32>, %ids: tensor<3x2xf32>) {
  // CHECK: reductions-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.gather_elements' op: graph.gather_elements indices must be integers.
  %0 = graph.gather_elements %x, %ids : (tensor<4x5xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @gather_nd_too_many_ids(%x: tensor<4x5xf32>, %ids: tensor<3x3xi64>) {
  // CHECK: error: 'graph.gather_nd' op: indices (3, 3) do not index data (4, 5) with batch_dims 0.
  %0 = graph.gather_nd %x, %ids : (tensor<4x5xf32>, tensor<3x3xi64>) -> tensor<3xf32>
  func.return
}

// -----

func.func @scatter_reduction(%x: tensor<4xf32>, %ids: tensor<2xi64>, %upd: tensor<2xf32>) {
  // CHECK: error: 'graph.scatter_elements' op: graph.scatter_elements attribute 'reduction' must be one of none, add, mul, max, min (#graph<scatter_reduction ...>), not "avg".
  %0 = graph.scatter_elements %x, %ids, %upd {reduction = "avg"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @scatter_nd_updates(%x: tensor<4x5xf32>, %ids: tensor<2x1xi64>, %upd: tensor<2x4xf32>) {
  // CHECK: error: 'graph.scatter_nd' op: indices (2, 1) and updates (2, 4) do not fit data (4, 5).
  %0 = graph.scatter_nd %x, %ids, %upd : (tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x5xf32>
  func.return
}
