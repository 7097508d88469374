// RUN: echo 'builtin.module {}' | not tilecraft-opt -p 'winograd-conv2d{min-outputs=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// NEGATIVE: winograd-conv2d: min-outputs must not be negative, not -1
// NEGATIVE-NOT: Traceback

// The verifier keeps the winograd algorithm to what the kernel computes: stride 1,
// ... (each error names the op's line).
func.func @strided(%x: tensor<1x2x8x8x16xf32>, %u: tensor<4x4x2x2x16x16xf32>) {
  // CHECK: winograd-conv2d-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: algorithm 'winograd' needs strides 1, got (2, 2).
  %y = graph.conv2d %x, %u {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c", algorithm = #graph<conv_algorithm winograd>} : (tensor<1x2x8x8x16xf32>, tensor<4x4x2x2x16x16xf32>) -> tensor<1x2x4x4x16xf32>
  func.return
}

// -----

// ... a transformed weight [4, 4, O/b, C/b, b, b] ...
func.func @untransformed(%x: tensor<1x2x8x8x16xf32>, %w: tensor<2x2x3x3x16x16xf32>) {
  // CHECK: winograd-conv2d-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: a winograd weight is [4, 4, O/16, I/16, 16, 16] (graph.winograd_weight), got (2, 2, 3, 3, 16, 16).
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c", algorithm = #graph<conv_algorithm winograd>} : (tensor<1x2x8x8x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x8x8x16xf32>
  func.return
}

// -----

// ... blocked layouts with one block ...
func.func @plain(%x: tensor<1x32x8x8xf32>, %u: tensor<4x4x2x2x16x16xf32>) {
  // CHECK: winograd-conv2d-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: algorithm 'winograd' needs blocked layouts NCHW<b>c, OIHW<b>i<b>o and NCHW<b>c with one block b, got NCHW, OIHW and NCHW.
  %y = graph.conv2d %x, %u {pads = array<i64: 1, 1, 1, 1>, algorithm = #graph<conv_algorithm winograd>} : (tensor<1x32x8x8xf32>, tensor<4x4x2x2x16x16xf32>) -> tensor<1x32x8x8xf32>
  func.return
}

// -----

// ... and a known algorithm; a winograd_weight takes a 3x3 weight.
func.func @unknown(%x: tensor<1x2x8x8x16xf32>, %w: tensor<2x2x3x3x16x16xf32>) {
  // CHECK: winograd-conv2d-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: graph.conv2d attribute 'algorithm' must be one of direct, winograd (#graph<conv_algorithm ...>), not "fft".
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c", algorithm = "fft"} : (tensor<1x2x8x8x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x8x8x16xf32>
  func.return
}

// -----

func.func @weight_5x5(%w5: tensor<2x2x5x5x16x16xf32>) {
  // CHECK: winograd-conv2d-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.winograd_weight' op: winograd_weight takes a 3x3 weight [O/o, I/i, 3, 3, i, o], got (2, 2, 5, 5, 16, 16).
  %u = graph.winograd_weight %w5 : (tensor<2x2x5x5x16x16xf32>) -> tensor<4x4x2x2x16x16xf32>
  func.return
}
