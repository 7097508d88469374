// RUN: not tilecraft-opt %s -p 'fuse-ops{max-depth=0}' 2>&1 | filecheck %s

// CHECK: fuse-ops: max-depth must be at least 1, not 0
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}
