// Parses, but does not verify: the reduce axis has an empty range.
func.func @f(%A: tensor<4xf32>) -> tensor<f32> {
  %C = te.compute "C" () -> tensor<f32> {
    %s = te.reduce sum (%k: "k" = 4 to 0) -> f32 {
      %a = te.read %A[%k] : tensor<4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<f32>
}
