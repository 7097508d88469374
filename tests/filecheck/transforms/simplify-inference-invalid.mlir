// RUN: tilecraft-opt %s --split-input-file -p simplify-inference --verify-diagnostics 2>&1 | filecheck %s

// batch_norm parameters that are weights need the store the module names.
// CHECK: simplify-inference-invalid.mlir:[[# @LINE + 1]]:1: error: simplify-inference: cannot read weight store '{{.*}}missing.npz'
builtin.module attributes {graph.weights = "missing.npz"} {
  func.func @f(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %s = graph.weight "bn.scale" : tensor<2xf32>
    %z = graph.batch_norm %x, %s, %s, %s, %s : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
    func.return %z : tensor<1x2x3x3xf32>
  }
}
