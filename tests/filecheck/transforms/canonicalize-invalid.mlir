// RUN: tilecraft-opt %s --split-input-file -p canonicalize --verify-diagnostics 2>&1 | filecheck %s
// RUN: python -c "import numpy as np; np.savez('%t.npz', other=np.zeros(2, np.float32))"
// RUN: sed -e 's|@STORE@|%t.npz|' %s | tilecraft-opt --split-input-file -p canonicalize --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISSING

// batch_norm parameters that are weights need the store the module names.
// CHECK: canonicalize-invalid.mlir:[[# @LINE + 1]]:1: error: canonicalize: cannot read weight store '{{.*}}missing.npz'
builtin.module attributes {graph.weights = "missing.npz"} {
  func.func @f(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
    %s = graph.weight "bn.scale" : tensor<2xf32>
    %z = graph.batch_norm %x, %s, %s, %s, %s : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
    func.return %z : tensor<1x2x3x3xf32>
  }
}

// -----

// A weight the store lacks, read by an op folder: reported at the graph.weight.
builtin.module attributes {graph.weights = "@STORE@"} {
  func.func @f() -> tensor<2xf32> {
    // MISSING: [[# @LINE + 1]]:5: error: canonicalize: no weight named 'w' in the weight store
    %w = graph.weight "w" : tensor<2xf32>
    %n = graph.neg %w : (tensor<2xf32>) -> tensor<2xf32>
    func.return %n : tensor<2xf32>
  }
}
