// RUN: tilecraft-opt %s --split-input-file -p quantize-int8 --verify-diagnostics 2>&1 | filecheck %s

// The calibration annotation must be a measured magnitude.
func.func @bad_absmax(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
  %w = graph.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]> : tensor<2x4xf32>
  // CHECK: quantize-int8-invalid.mlir:[[# @LINE + 1]]:3: error: quantize-int8: tc.input_absmax must be a finite non-negative float (the largest |input| calibration saw), not "big"
  %a = graph.dense %x, %w {tc.input_absmax = "big"} : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<1x2xf32>
  func.return %a : tensor<1x2xf32>
}

// -----

func.func @negative_absmax(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
  %w = graph.constant dense<[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]> : tensor<2x4xf32>
  // CHECK: quantize-int8-invalid.mlir:[[# @LINE + 1]]:3: error: quantize-int8: tc.input_absmax must be a finite non-negative float
  %a = graph.dense %x, %w {tc.input_absmax = -1.0 : f64} : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<1x2xf32>
  func.return %a : tensor<1x2xf32>
}
