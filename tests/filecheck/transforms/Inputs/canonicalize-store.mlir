// The module for canonicalize.mlir's store case; @STORE@ is replaced by the path
// of a weight store the test writes.
builtin.module attributes {graph.weights = "@STORE@"} {
  func.func @store(%x: tensor<1x4x8x8xf32>) -> tensor<1x8x6x6xf32> {
    %w = graph.weight "conv.weight" : tensor<8x4x3x3xf32>
    %y = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
    %s = graph.weight "bn.scale" : tensor<8xf32>
    %b = graph.weight "bn.bias" : tensor<8xf32>
    %m = graph.weight "bn.mean" : tensor<8xf32>
    %v = graph.weight "bn.var" : tensor<8xf32>
    %z = graph.batch_norm %y, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<1x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
    func.return %z : tensor<1x8x6x6xf32>
  }
}
