// RUN: tilecraft-opt %s --split-input-file -p fold-constants --verify-diagnostics 2>&1 | filecheck %s
// RUN: python -c "import numpy as np; np.savez('%t.npz', other=np.zeros(2, np.float32))"
// RUN: sed -e 's|@STORE@|%t.npz|' %s | tilecraft-opt --split-input-file -p fold-constants --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISSING

// The store the module names cannot be read: reported at the module.
// CHECK: fold-constants-invalid.mlir:[[# @LINE + 1]]:1: error: fold-constants: cannot read weight store '{{.*}}no-such-store.npz'
builtin.module attributes {graph.weights = "no-such-store.npz"} {
  func.func @f() -> tensor<2xf32> {
    %w = graph.weight "w" : tensor<2xf32>
    %n = graph.neg %w : (tensor<2xf32>) -> tensor<2xf32>
    func.return %n : tensor<2xf32>
  }
}

// -----

// A weight the store lacks: reported at the graph.weight.
builtin.module attributes {graph.weights = "@STORE@"} {
  func.func @f() -> tensor<2xf32> {
    // MISSING: [[# @LINE + 1]]:5: error: fold-constants: no weight named 'w' in the weight store
    %w = graph.weight "w" : tensor<2xf32>
    %n = graph.neg %w : (tensor<2xf32>) -> tensor<2xf32>
    func.return %n : tensor<2xf32>
  }
}
