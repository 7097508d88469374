func.func @main(%x: tensor<8xf32>) -> tensor<4xf32> {
  %y = myplugin.scaled_relu %x {alpha = 2.0 : f32} : (tensor<8xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
