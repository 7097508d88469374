// RUN: tilecraft-opt %s --split-input-file -p fold-empty-tensors --verify-diagnostics 2>&1 | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p fold-empty-tensors,check-graph-level --verify-diagnostics 2>&1 | filecheck %s --check-prefix=LEFT

// Folding needs a weight that the store the module names cannot give: reported
// at the module.
// CHECK: fold-empty-tensors-invalid.mlir:[[# @LINE + 1]]:1: error: fold-empty-tensors: cannot read weight store '{{.*}}no-such-store.npz'
builtin.module attributes {graph.weights = "no-such-store.npz"} {
  func.func @f(%x: tensor<1x0x4x4xf32>, %w: tensor<2x0x3x3xf32>) -> tensor<1x2x2x2xf32> {
    %b = graph.weight "b" : tensor<2xf32>
    %y = graph.conv2d %x, %w, %b : (tensor<1x0x4x4xf32>, tensor<2x0x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
    func.return %y : tensor<1x2x2x2xf32>
  }
}

// -----

// An op on an empty tensor that cannot be folded (its bias is not known) stays;
// check-graph-level, the next stage of compile-model, reports it at the op.
func.func @g(%x: tensor<1x0x4x4xf32>, %w: tensor<2x0x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}}, %b
  // LEFT: fold-empty-tensors-invalid.mlir:[[# @LINE + 1]]:3: error: check-graph-level: 'graph.conv2d' on an empty tensor (tensor<1x0x4x4xf32>) is not supported: tilecraft compiles ops on empty tensors only where fold-empty-tensors (compile-model's first stage) folds them away
  %y = graph.conv2d %x, %w, %b : (tensor<1x0x4x4xf32>, tensor<2x0x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}
