// Symbolic sizes where they cannot go: one error at the op, naming the size.

// RUN: tilecraft-opt %s --split-input-file -p infer-shapes --verify-diagnostics 2>&1 | filecheck %s

// An op whose shape rule is not written for symbolic sizes refuses them.
func.func @squeeze(%x: tensor<?x1x4xf32, ["batch"]>) -> tensor<*xf32> {
  // CHECK: symbolic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.squeeze' op: graph.squeeze does not take symbolic sizes (yet): operand 0 is batch at dimension 0.
  %s = graph.squeeze %x {axes = array<i64: 1>} : (tensor<?x1x4xf32, ["batch"]>) -> tensor<*xf32>
  func.return %s : tensor<*xf32>
}

// -----

// `batch` against 5 would hold for one batch only; `batch` against `n` only
// where they are one size.
func.func @mismatch(%x: tensor<?x8xf32, ["batch"]>, %y: tensor<5x8xf32>) -> tensor<*xf32> {
  // CHECK: symbolic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.add' op: shapes (batch, 8) and (5, 8) do not broadcast.
  %a = graph.add %x, %y : (tensor<?x8xf32, ["batch"]>, tensor<5x8xf32>) -> tensor<*xf32>
  func.return %a : tensor<*xf32>
}

// -----

func.func @two_names(%x: tensor<?x8xf32, ["batch"]>, %z: tensor<?x8xf32, ["n"]>) -> tensor<*xf32> {
  // CHECK: symbolic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.add' op: shapes (batch, 8) and (n, 8) do not broadcast.
  %b = graph.add %x, %z : (tensor<?x8xf32, ["batch"]>, tensor<?x8xf32, ["n"]>) -> tensor<*xf32>
  func.return %b : tensor<*xf32>
}

// -----

// The encoding names every `?`, in order.
func.func @names(%x: tensor<?x?xf32, ["batch"]>) -> tensor<*xf32> {
  // CHECK: symbolic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.relu' op: 1 name(s) for the 2 '?' dimension(s) of ?x?.
  %r = graph.relu %x : (tensor<?x?xf32, ["batch"]>) -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}

// -----

func.func @syntax(%x: tensor<?x8xf32, ["batch * * 2"]>) -> tensor<*xf32> {
  // CHECK: symbolic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.relu' op: in size 'batch * * 2' at column 9: expected a number, a name or '('.
  %r = graph.relu %x : (tensor<?x8xf32, ["batch * * 2"]>) -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}

// -----

// A -1 that the other extents do not divide exactly for every size.
func.func @reshape_not_exact(%x: tensor<?x?x64xf32, ["batch", "seq"]>) -> tensor<*xf32> {
  // CHECK: symbolic-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reshape' op: cannot reshape (batch, seq, 64) to [batch, -1, 48].
  %r = graph.reshape %x {shape = array<i64: 0, -1, 48>} : (tensor<?x?x64xf32, ["batch", "seq"]>) -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}
