// Verifier errors of convolutions and pooling over 1 to 3 spatial axes: the
// message at the op.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @conv_weight_rank(%x: tensor<1x4x5x6x7xf32>, %w: tensor<8x4x3x3xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: conv2d takes a weight [O, I, kernel...] of rank 5, got rank 4.
  %0 = graph.conv2d %x, %w : (tensor<1x4x5x6x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x3x4x5xf32>
  func.return
}

// -----

// Four spatial axes: beyond what the op supports.
func.func @conv_rank(%x: tensor<1x4x5x5x5x5xf32>, %w: tensor<8x4x3x3x3x3xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: conv2d takes an N, C and 1 to 3 spatial axes input, got rank 6.
  %0 = graph.conv2d %x, %w : (tensor<1x4x5x5x5x5xf32>, tensor<8x4x3x3x3x3xf32>) -> tensor<1x8x3x3x3x3xf32>
  func.return
}

// -----

// A 3-D convolution's pads are six values, [begin x3, end x3].
func.func @conv_pads_length(%x: tensor<1x4x5x6x7xf32>, %w: tensor<8x4x3x3x3xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: pads needs 6 values for 3 spatial axes, got 4.
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x6x7xf32>, tensor<8x4x3x3x3xf32>) -> tensor<1x8x5x6x7xf32>
  func.return
}

// -----

func.func @conv_dilations_length(%x: tensor<1x4x9xf32>, %w: tensor<8x4x3xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: dilations needs 1 values for 1 spatial axes, got 2.
  %0 = graph.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x4x9xf32>, tensor<8x4x3xf32>) -> tensor<1x8x5xf32>
  func.return
}

// -----

func.func @conv_wrong_result(%x: tensor<1x4x5x6x7xf32>, %w: tensor<8x4x3x3x3xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: graph.conv2d result is tensor<1x8x3x4x4xf32> but its operands give tensor<1x8x3x4x5xf32>.
  %0 = graph.conv2d %x, %w : (tensor<1x4x5x6x7xf32>, tensor<8x4x3x3x3xf32>) -> tensor<1x8x3x4x4xf32>
  func.return
}

// -----

func.func @pool_kernel_rank(%x: tensor<1x2x4x4x4x4xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool2d' op: pooling windows have 1 to 3 axes, got kernel [2, 2, 2, 2].
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2, 2, 2>} : (tensor<1x2x4x4x4x4xf32>) -> tensor<1x2x3x3x3x3xf32>
  func.return
}

// -----

// A 3-D window on a 2-D input (what a 2-D kernel on a 5-D input also is).
func.func @pool_input_rank(%x: tensor<1x2x4x4xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.avg_pool2d' op: a 3-D pooling takes an input of rank 5, got rank 4.
  %0 = graph.avg_pool2d %x {kernel = array<i64: 2, 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  func.return
}

// -----

func.func @pool_blocked_3d(%x: tensor<1x2x4x4x4xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool2d' op: blocked layouts are 2-D, the kernel [2, 2, 2] has 3 axes.
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2, 2>, layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x3x3x3xf32>
  func.return
}

// -----

func.func @pool_dilations_length(%x: tensor<1x2x8x8x8xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool2d' op: dilations needs 3 values for 3 spatial axes, got 2.
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x2x8x8x8xf32>) -> tensor<1x2x6x6x6xf32>
  func.return
}

// -----

// A dilated window wider than the padded input.
func.func @pool_dilated_too_wide(%x: tensor<1x2x4x4xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool2d' op: window 2 (dilation 4) does not fit input extent 4 with padding 0+0.
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>, dilations = array<i64: 4, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x3xf32>
  func.return
}

// -----

func.func @indices_blocked(%x: tensor<1x2x4x4x4xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool_indices' op: max_pool_indices takes the plain layout, not NCHW4c.
  %0 = graph.max_pool_indices %x {kernel = array<i64: 2, 2>, layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x3x3x4xi64>
  func.return
}

// -----

func.func @indices_storage_order(%x: tensor<1x2x4x4xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool_indices' op: storage_order must be 0 or 1, got 2.
  %0 = graph.max_pool_indices %x {kernel = array<i64: 2, 2>, storage_order = 2 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xi64>
  func.return
}

// -----

// A straddling kernel layout (grouped convs whose groups cut channel blocks): the
// weight must have the rows and channel steps its channels and groups give (68 per
// group in 4 groups of 272, 4 at a time: 20 rows of 17 steps).
func.func @straddle_weight_shape(%x: tensor<1x17x4x4x16xf32>, %w: tensor<17x9x1x1x4x16xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: weight (17, 9, 1, 1, 4, 16) is not in layout straddle272c272o4i16o ([20, 17, KH, KW, 4, 16]).
  %0 = graph.conv2d %x, %w {groups = 4 : i64, data_layout = "NCHW16c", kernel_layout = "straddle272c272o4i16o", out_layout = "NCHW16c"} : (tensor<1x17x4x4x16xf32>, tensor<17x9x1x1x4x16xf32>) -> tensor<1x17x4x4x16xf32>
  func.return
}

// -----

// The data block must hold whole steps of the rows' reads (here 4 channels).
func.func @straddle_data_layout(%x: tensor<1x136x4x4x2xf32>, %w: tensor<20x17x1x1x4x16xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: kernel layout straddle272c272o4i16o needs data NCHW<b>c with b a multiple of 4 and output NCHW16c, not NCHW2c and NCHW16c.
  %0 = graph.conv2d %x, %w {groups = 4 : i64, data_layout = "NCHW2c", kernel_layout = "straddle272c272o4i16o", out_layout = "NCHW16c"} : (tensor<1x136x4x4x2xf32>, tensor<20x17x1x1x4x16xf32>) -> tensor<1x17x4x4x16xf32>
  func.return
}

// -----

// A step of 8 channels would cross from one group (68 channels) into the next.
func.func @straddle_step(%x: tensor<1x17x4x4x16xf32>, %w: tensor<20x17x1x1x8x16xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: straddling conv: 68 input channels per group are not blocks of 8.
  %0 = graph.conv2d %x, %w {groups = 4 : i64, data_layout = "NCHW16c", kernel_layout = "straddle272c272o8i16o", out_layout = "NCHW16c"} : (tensor<1x17x4x4x16xf32>, tensor<20x17x1x1x8x16xf32>) -> tensor<1x17x4x4x16xf32>
  func.return
}

// -----

func.func @straddle_groups(%x: tensor<1x17x4x4x16xf32>, %w: tensor<20x17x1x1x4x16xf32>) {
  // CHECK: windows-invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: straddling conv: 272 -> 272 channels do not split into groups=3.
  %0 = graph.conv2d %x, %w {groups = 3 : i64, data_layout = "NCHW16c", kernel_layout = "straddle272c272o4i16o", out_layout = "NCHW16c"} : (tensor<1x17x4x4x16xf32>, tensor<20x17x1x1x4x16xf32>) -> tensor<1x17x4x4x16xf32>
  func.return
}
