// RUN: tilecraft-opt %s --split-input-file -p alter-layout --verify-diagnostics 2>&1 | filecheck %s
// RUN: python -c "import numpy as np; np.savez('%t.npz', other=np.zeros(2, np.float32))"
// RUN: sed -e 's|@STORE@|%t.npz|' %s | tilecraft-opt --split-input-file -p alter-layout --verify-diagnostics 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not tilecraft-opt %s --split-input-file -p 'alter-layout{block=0}' 2>&1 | filecheck %s --check-prefix=BLOCK
// RUN: not tilecraft-opt %s --split-input-file -p 'alter-layout{max-padding=-1}' 2>&1 | filecheck %s --check-prefix=PADDING

// The store the module names cannot be read: reported at the module.
// CHECK: alter-layout-invalid.mlir:[[# @LINE + 1]]:1: error: alter-layout: cannot read weight store '{{.*}}no-such-store.npz'
builtin.module attributes {graph.weights = "no-such-store.npz"} {
  func.func @f(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
    %w = graph.weight "w" : tensor<16x16x1x1xf32>
    %y = graph.conv2d %x, %w : (tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32>
    func.return %y : tensor<1x16x4x4xf32>
  }
}

// -----

// A conv weight the store lacks: reported at the graph.weight.
builtin.module attributes {graph.weights = "@STORE@"} {
  func.func @f(%x: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
    // MISSING: [[# @LINE + 1]]:5: error: alter-layout: no weight named 'w' in the weight store
    %w = graph.weight "w" : tensor<16x16x1x1xf32>
    %y = graph.conv2d %x, %w : (tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32>
    func.return %y : tensor<1x16x4x4xf32>
  }
}

// A block of no channels is not a layout.
// BLOCK: alter-layout: block must be a positive number of channels, not 0

// A negative share of padding channels is not a limit.
// PADDING: alter-layout: max-padding must not be negative, not -1
