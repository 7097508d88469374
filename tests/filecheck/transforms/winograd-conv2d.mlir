// RUN: python -c "import numpy as np; np.savez('%t.npz', w=np.ones((2, 2, 3, 3, 16, 16), np.float32))"
// RUN: sed -e 's|@STORE@|%t.npz|' %s | tilecraft-opt --split-input-file -p winograd-conv2d | filecheck %s
// RUN: sed -e 's|@STORE@|%t.npz|' %s | tilecraft-opt --split-input-file -p 'winograd-conv2d{min-outputs=0}' | filecheck %s --check-prefix=ALL
// With a store, fold-constants then transforms the weight once, into a new weight.
// RUN: sed -e 's|@STORE@|%t.npz|' %s | tilecraft-opt --split-input-file -p 'winograd-conv2d,fold-constants' --weights-out %t.out.npz | filecheck %s --check-prefix=FOLD

// A blocked 3x3 stride-1 conv with a known weight and 14x14 outputs: Winograd.
// CHECK-LABEL: func.func @resnet_layer
// CHECK-NEXT:    %w = graph.weight "w" : tensor<2x2x3x3x16x16xf32>
// CHECK-NEXT:    %[[U:.*]] = graph.winograd_weight %w : (tensor<2x2x3x3x16x16xf32>) -> tensor<4x4x2x2x16x16xf32>
// CHECK-NEXT:    %y = graph.conv2d %x, %[[U]] {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c", algorithm = #graph<conv_algorithm winograd>} : (tensor<1x2x14x14x16xf32>, tensor<4x4x2x2x16x16xf32>) -> tensor<1x2x14x14x16xf32>
// FOLD-LABEL: func.func @resnet_layer
// FOLD-NEXT:    %[[U:.*]] = graph.weight "w.winograd_weight" : tensor<4x4x2x2x16x16xf32>
// FOLD-NEXT:    %y = graph.conv2d %x, %[[U]] {{.*}}algorithm = #graph<conv_algorithm winograd>
builtin.module attributes {graph.weights = "@STORE@"} {
  func.func @resnet_layer(%x: tensor<1x2x14x14x16xf32>) -> tensor<1x2x14x14x16xf32> {
    %w = graph.weight "w" : tensor<2x2x3x3x16x16xf32>
    %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x14x14x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x14x14x16xf32>
    func.return %y : tensor<1x2x14x14x16xf32>
  }
}

// -----

// 7x7 outputs (49 < min-outputs = 196): the direct kernel, unless min-outputs=0.
// Odd sizes and uneven pads are fine (the last 2x2 tiles are partial).
// CHECK-LABEL: func.func @small
// CHECK-NOT:     winograd
// ALL-LABEL: func.func @small
// ALL:           graph.winograd_weight
// ALL:           graph.conv2d {{.*}}pads = array<i64: 0, 1, 2, 1>{{.*}}algorithm = #graph<conv_algorithm winograd>
func.func @small(%x: tensor<1x2x7x7x16xf32>) -> tensor<1x2x7x7x16xf32> {
  %w = graph.weight "w" : tensor<2x2x3x3x16x16xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 0, 1, 2, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x7x7x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x7x7x16xf32>
  func.return %y : tensor<1x2x7x7x16xf32>
}

// -----

// Left alone even with min-outputs=0: stride 2, dilation 2, groups 2, a 5x5
// kernel, the plain NCHW layout, a weight that is not known at compile time.
// ALL-LABEL: func.func @left_alone
// ALL-NOT:     winograd
// ALL:         func.return
func.func @left_alone(%x: tensor<1x2x16x16x16xf32>, %xp: tensor<1x32x16x16xf32>, %wa: tensor<2x2x3x3x16x16xf32>) {
  %w = graph.weight "w" : tensor<2x2x3x3x16x16xf32>
  %s = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x16x16x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x8x8x16xf32>
  %d = graph.conv2d %x, %w {pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x16x16x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x16x16x16xf32>
  %wg = graph.weight "wg" : tensor<2x1x3x3x16x16xf32>
  %g = graph.conv2d %x, %wg {pads = array<i64: 1, 1, 1, 1>, groups = 2, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x16x16x16xf32>, tensor<2x1x3x3x16x16xf32>) -> tensor<1x2x16x16x16xf32>
  %w5 = graph.weight "w5" : tensor<2x2x5x5x16x16xf32>
  %f = graph.conv2d %x, %w5 {pads = array<i64: 2, 2, 2, 2>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x16x16x16xf32>, tensor<2x2x5x5x16x16xf32>) -> tensor<1x2x16x16x16xf32>
  %wp = graph.weight "wp" : tensor<32x32x3x3xf32>
  %p = graph.conv2d %xp, %wp {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x16x16xf32>
  %a = graph.conv2d %x, %wa {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x16x16x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x16x16x16xf32>
  func.return
}
