// The module for fold-constants.mlir's store case; @STORE@ is replaced by the
// path of a weight store the test writes.
builtin.module attributes {graph.weights = "@STORE@"} {
  func.func @store(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
    %w = graph.weight "fc.weight" : tensor<8x4xf32>
    %t = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
    %s = graph.weight "scale" : tensor<4xf32>
    %i = graph.constant dense<[2.0, 4.0, 6.0, 8.0]> : tensor<4xf32>
    %si = graph.mul %s, %i : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %d = graph.dense %x, %t : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
    %m = graph.mul %d, %si : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    func.return %m : tensor<2x4xf32>
  }
}
