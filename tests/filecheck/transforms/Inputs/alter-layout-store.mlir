// Read by alter-layout.mlir, with @STORE@ replaced by the path of a weight store.
builtin.module attributes {graph.weights = "@STORE@"} {
  func.func @store(%x: tensor<1x16x8x8xf32>, %y: tensor<2x5xf32>) -> (tensor<1x32x8x8xf32>, tensor<2x4xf32>) {
    %w = graph.weight "conv.weight" : tensor<32x16x3x3xf32>
    %b = graph.weight "conv.bias" : tensor<32xf32>
    %c = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x8x8xf32>
    %fw = graph.weight "fc.weight" : tensor<4x5xf32>
    %d = graph.dense %y, %fw : (tensor<2x5xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
    func.return %c, %d : tensor<1x32x8x8xf32>, tensor<2x4xf32>
  }
}
