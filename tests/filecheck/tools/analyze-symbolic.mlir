// A model with a symbolic size: what cannot be counted without the size is
// reported as such, never as a number.

// RUN: tilecraft-analyze %s --analysis macs | filecheck %s
// CHECK: unknown: d (graph.dense): tensor<?x32xf32, ["batch"]> has a size known only when the model runs

// The activations' peak needs every size: one line, exit 1.
// RUN: not tilecraft-analyze %s 2>&1 | filecheck %s --check-prefix=MEMORY
// MEMORY: tilecraft-analyze: error: tensor<?x64xf32, ["batch"]> has a size known only when the model runs

func.func @main(%x: tensor<?x64xf32, ["batch"]>, %w: tensor<32x64xf32>) -> tensor<?x32xf32, ["batch"]> {
  %d = graph.dense %x, %w : (tensor<?x64xf32, ["batch"]>, tensor<32x64xf32>) -> tensor<?x32xf32, ["batch"]>
  func.return %d : tensor<?x32xf32, ["batch"]>
}
