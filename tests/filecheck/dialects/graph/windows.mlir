// Convolution and pooling over 1 to 3 spatial axes (the kernel's or the input's
// rank gives the spatial rank), with dilated pooling windows: printed, parsed
// again, printed identically (ROUND, through the custom and the generic form);
// infer-shapes computes each result's shape (CHECK).
// RUN: tilecraft-opt %s --split-input-file | tilecraft-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: tilecraft-opt %s --split-input-file --print-op-generic | tilecraft-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: tilecraft-opt %s --split-input-file -p infer-shapes | filecheck %s

func.func @conv3d(%x: tensor<2x4x5x6x7xf32>, %w: tensor<6x2x3x3x2xf32>, %b: tensor<6xf32>) -> tensor<*xf32> {
  %0 = graph.conv2d %x, %w {groups = 2 : i64} : (tensor<2x4x5x6x7xf32>, tensor<6x2x3x3x2xf32>) -> tensor<*xf32>
  %1 = graph.conv2d %x, %w, %b {groups = 2 : i64, strides = array<i64: 2, 1, 3>, pads = array<i64: 1, 0, 1, 1, 2, 0>, dilations = array<i64: 1, 2, 1>} : (tensor<2x4x5x6x7xf32>, tensor<6x2x3x3x2xf32>, tensor<6xf32>) -> tensor<*xf32>
  func.return %1 : tensor<*xf32>
}

// ROUND-LABEL: func.func @conv3d(
// ROUND:         graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {groups = 2 : i64, strides = array<i64: 2, 1, 3>, pads = array<i64: 1, 0, 1, 1, 2, 0>, dilations = array<i64: 1, 2, 1>} : (tensor<2x4x5x6x7xf32>, tensor<6x2x3x3x2xf32>, tensor<6xf32>) -> tensor<*xf32>
// CHECK-LABEL: func.func @conv3d(
// Defaults (strides 1, no pads, dilations 1) for three spatial axes: 5-3+1, 6-3+1, 7-2+1.
// CHECK:         graph.conv2d %{{.*}}, %{{.*}} {groups = 2 : i64} : (tensor<2x4x5x6x7xf32>, tensor<6x2x3x3x2xf32>) -> tensor<2x6x3x4x6xf32>
// D: (5+1+1-3)/2+1 = 3; H: (6+0+2-5)/1+1 = 4 (dilation 2 spans 5); W: (7+1+0-2)/3+1 = 3.
// CHECK-NEXT:    graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {groups = 2 : i64, strides = array<i64: 2, 1, 3>, pads = array<i64: 1, 0, 1, 1, 2, 0>, dilations = array<i64: 1, 2, 1>} : (tensor<2x4x5x6x7xf32>, tensor<6x2x3x3x2xf32>, tensor<6xf32>) -> tensor<2x6x3x4x3xf32>

// -----

func.func @pool3d(%x: tensor<1x3x8x9x10xf32>) -> tensor<*xf32> {
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 3, 3>, strides = array<i64: 2, 2, 2>} : (tensor<1x3x8x9x10xf32>) -> tensor<*xf32>
  %1 = graph.avg_pool2d %x {kernel = array<i64: 3, 3, 3>, pads = array<i64: 1, 1, 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x3x8x9x10xf32>) -> tensor<*xf32>
  %2 = graph.max_pool2d %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 3, 3, 3>, ceil_mode = true} : (tensor<1x3x8x9x10xf32>) -> tensor<*xf32>
  func.return %2 : tensor<*xf32>
}

// ROUND-LABEL: func.func @pool3d(
// ROUND:         graph.avg_pool2d %{{.*}} {kernel = array<i64: 3, 3, 3>, pads = array<i64: 1, 1, 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x3x8x9x10xf32>) -> tensor<*xf32>
// CHECK-LABEL: func.func @pool3d(
// CHECK:         graph.max_pool2d %{{.*}} {kernel = array<i64: 2, 3, 3>, strides = array<i64: 2, 2, 2>} : (tensor<1x3x8x9x10xf32>) -> tensor<1x3x4x4x4xf32>
// CHECK-NEXT:    graph.avg_pool2d %{{.*}} {kernel = array<i64: 3, 3, 3>, pads = array<i64: 1, 1, 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x3x8x9x10xf32>) -> tensor<1x3x8x9x10xf32>
// ceil_mode: 8 -> ceil(6/3)+1 = 3, 9 -> ceil(7/3)+1 = 4 but the 4th window would start at 9, past the input: 3; 10 -> 4.
// CHECK-NEXT:    graph.max_pool2d %{{.*}} {kernel = array<i64: 2, 2, 2>, strides = array<i64: 3, 3, 3>, ceil_mode = true} : (tensor<1x3x8x9x10xf32>) -> tensor<1x3x3x3x4xf32>

// -----

// Dilated windows: a window of k positions d apart spans d * (k - 1) + 1.
func.func @dilated(%x: tensor<1x2x12x12xf32>, %y: tensor<1x2x4x4x4xf32>) -> tensor<*xf32> {
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>, dilations = array<i64: 2, 3>} : (tensor<1x2x12x12xf32>) -> tensor<*xf32>
  %1 = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x2x12x12xf32>) -> tensor<*xf32>
  %2 = graph.max_pool2d %y {kernel = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2, 2>} : (tensor<1x2x4x4x4xf32>) -> tensor<*xf32>
  func.return %2 : tensor<*xf32>
}

// ROUND-LABEL: func.func @dilated(
// ROUND:         graph.max_pool2d %{{.*}} {kernel = array<i64: 2, 2>, dilations = array<i64: 2, 3>} : (tensor<1x2x12x12xf32>) -> tensor<*xf32>
// CHECK-LABEL: func.func @dilated(
// CHECK:         graph.max_pool2d %{{.*}} {kernel = array<i64: 2, 2>, dilations = array<i64: 2, 3>} : (tensor<1x2x12x12xf32>) -> tensor<1x2x10x9xf32>
// (12 + 2 - 5) / 2 rounded up, + 1 = 6
// CHECK-NEXT:    graph.avg_pool2d %{{.*}} {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x2x12x12xf32>) -> tensor<1x2x6x6xf32>
// CHECK-NEXT:    graph.max_pool2d %{{.*}} {kernel = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2, 2>} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x2xf32>

// -----

// Where each window's maximum is: i64 indices of the max_pool2d result's shape.
func.func @indices(%x: tensor<1x2x5x5xf32>, %y: tensor<1x2x4x4x4xf32>) -> tensor<*xi64> {
  %0 = graph.max_pool_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x2x5x5xf32>) -> tensor<*xi64>
  %1 = graph.max_pool_indices %y {kernel = array<i64: 2, 2, 2>, dilations = array<i64: 2, 1, 1>, storage_order = 1 : i64} : (tensor<1x2x4x4x4xf32>) -> tensor<*xi64>
  func.return %1 : tensor<*xi64>
}

// ROUND-LABEL: func.func @indices(
// ROUND:         graph.max_pool_indices %{{.*}} {kernel = array<i64: 2, 2, 2>, dilations = array<i64: 2, 1, 1>, storage_order = 1 : i64} : (tensor<1x2x4x4x4xf32>) -> tensor<*xi64>
// CHECK-LABEL: func.func @indices(
// CHECK:         graph.max_pool_indices %{{.*}} {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xi64>
// CHECK-NEXT:    graph.max_pool_indices %{{.*}} {kernel = array<i64: 2, 2, 2>, dilations = array<i64: 2, 1, 1>, storage_order = 1 : i64} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x3x3xi64>

// -----

// A grouped conv whose 16-lane blocks straddle groups (68 channels per group):
// weight rows [20, 17, KH, KW, 4, 16] (20 rows, each reading its group's 68 channels
// 4 at a time), 272 channels in 17 blocks in and out.
func.func @conv_straddle(%x: tensor<1x17x4x4x16xf32>, %w: tensor<20x17x1x1x4x16xf32>) -> tensor<1x17x4x4x16xf32> {
  %0 = graph.conv2d %x, %w {groups = 4 : i64, data_layout = "NCHW16c", kernel_layout = "straddle272c272o4i16o", out_layout = "NCHW16c"} : (tensor<1x17x4x4x16xf32>, tensor<20x17x1x1x4x16xf32>) -> tensor<1x17x4x4x16xf32>
  func.return %0 : tensor<1x17x4x4x16xf32>
}

// CHECK-LABEL: func.func @conv_straddle
// CHECK-NEXT:    %0 = graph.conv2d %x, %w {groups = 4 : i64, data_layout = "NCHW16c", kernel_layout = "straddle272c272o4i16o", out_layout = "NCHW16c"} : (tensor<1x17x4x4x16xf32>, tensor<20x17x1x1x4x16xf32>) -> tensor<1x17x4x4x16xf32>
