// RUN: tilecraft-opt %s --split-input-file -p convert-graph-to-te --verify-diagnostics 2>&1 | filecheck %s

// A small weight is folded into the kernel, so its value is needed: the module
// must name a weight store.
func.func @no_weight_store(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: convert-graph-to-te-invalid.mlir:[[# @LINE + 1]]:3: error: convert-graph-to-te: the module names no weight store for 'scale'
  %w = graph.weight "scale" : tensor<4xf32>
  %r = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// An attribute value the te lowering does not support is named with the op.
func.func @negative_pads(%x: tensor<4x6xf32>) -> tensor<4x4xf32> {
  // CHECK: convert-graph-to-te-invalid.mlir:[[# @LINE + 1]]:3: error: convert-graph-to-te: cannot lower 'graph.pad': negative pads (cropping) are not supported; use slice
  %r = graph.pad %x {pads = array<i64: 0, -1, 0, -1>} : (tensor<4x6xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Kernels take no empty tensors: compile-model folds them away first
// (fold-empty-tensors); given one here, the op says so.
func.func @empty(%x: tensor<2x0xf32>) -> tensor<2x0xf32> {
  // CHECK: convert-graph-to-te-invalid.mlir:[[# @LINE + 1]]:3: error: convert-graph-to-te: 'graph.exp' works on an empty tensor (tensor<2x0xf32>), which no kernel takes; run fold-empty-tensors first (compile-model does)
  %e = graph.exp %x : (tensor<2x0xf32>) -> tensor<2x0xf32>
  func.return %e : tensor<2x0xf32>
}

// -----

// A kernel whose lowering does not take sizes known when it runs yet (concat
// along `seq`: the graph level adds the sizes, its te computation needs the
// offset of the second operand static).
func.func @symbolic_concat(%x: tensor<?x64xf32, ["seq"]>) -> tensor<?x64xf32, ["2 * seq"]> {
  %y = graph.fused "s" (%x) : (tensor<?x64xf32, ["seq"]>) -> (tensor<?x64xf32, ["2 * seq"]>) {
  ^bb0(%p: tensor<?x64xf32, ["seq"]>):
    // CHECK: convert-graph-to-te-invalid.mlir:[[# @LINE + 1]]:5: error: convert-graph-to-te: 'graph.concat' has sizes known only when it runs (seq), which its lowering cannot take yet
    %r = graph.concat %p, %p {axis = 0 : i64} : (tensor<?x64xf32, ["seq"]>, tensor<?x64xf32, ["seq"]>) -> tensor<?x64xf32, ["2 * seq"]>
    graph.yield %r : tensor<?x64xf32, ["2 * seq"]>
  }
  func.return %y : tensor<?x64xf32, ["2 * seq"]>
}
