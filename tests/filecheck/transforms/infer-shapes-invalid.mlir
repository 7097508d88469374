// Shape errors are reported at the op that cannot take its operands, after the
// ops before it got their types.
// RUN: tilecraft-opt %s --split-input-file --disable-verify -p infer-shapes --verify-diagnostics 2>&1 | filecheck %s

func.func @no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
  %r = graph.relu %a : (tensor<2x3xf32>) -> tensor<*xf32>
  // CHECK: infer-shapes-invalid.mlir:[[# @LINE + 1]]:3: error: infer-shapes: graph.add: shapes (2, 3) and (4,) do not broadcast
  %s = graph.add %r, %b : (tensor<*xf32>, tensor<4xf32>) -> tensor<*xf32>
  func.return %s : tensor<*xf32>
}

// -----

// The error surfaces only once the conv's result type is known.
func.func @dense_after_conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %f: tensor<10x7xf32>) -> tensor<*xf32> {
  %y = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
  // CHECK: infer-shapes-invalid.mlir:[[# @LINE + 1]]:3: error: infer-shapes: graph.dense: dense needs x[..., K] and w[N, K], got (1, 4, 6, 6) and (10, 7)
  %d = graph.dense %y, %f : (tensor<*xf32>, tensor<10x7xf32>) -> tensor<*xf32>
  func.return %d : tensor<*xf32>
}
