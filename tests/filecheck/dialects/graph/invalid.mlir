// One case per graph verifier error: the message and the file:line:col of the op.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s
// Without --verify-diagnostics, the first error stops the tool with exit code 1,
// after one line (no traceback, nothing else).
// RUN: not tilecraft-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST
// FIRST: invalid.mlir:14:3: error: 'graph.conv2d' op: graph.conv2d has no attribute 'strdes' (did you mean 'strides'?).
// FIRST-NOT: {{.}}

// Typed attributes: a misspelled name is an error that names it and suggests the
// closest property, never a silent default (this conv would otherwise run
// unpadded with stride 1).
func.func @typo_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: graph.conv2d has no attribute 'strdes' (did you mean 'strides'?).
  %0 = graph.conv2d %x, %w {strdes = [2, 2], padz = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @arity(%a: tensor<2x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.relu' op: graph.relu takes 1 operand, not 2.
  %0 = graph.relu %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @result_type(%a: tensor<2x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.relu' op: graph.relu result is tensor<3x2xf32> but its operands give tensor<2x3xf32>.
  %0 = graph.relu %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @result_count(%a: tensor<2x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.relu' op: graph.relu has 2 results but produces 1.
  %0, %1 = graph.relu %a : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  func.return
}

// -----

func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.add' op: shapes (2, 3) and (4,) do not broadcast.
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @element_types(%a: tensor<2x3xf32>, %b: tensor<3xi64>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.add' op: element types f32 and i64 differ.
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @where_condition(%a: tensor<2x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.where' op: the condition must have element type i1, not f32.
  %0 = graph.where %a, %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @cast_to(%a: tensor<2x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.cast' op: graph.cast attribute 'to' must be a type (like f32), not "f32".
  %0 = graph.cast %a {to = "f32"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @conv_rank(%a: tensor<2x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: conv2d takes an N, C and 1 to 3 spatial axes input, got rank 2.
  %0 = graph.conv2d %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @conv_groups_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: input channels 4 and weight (8, 3, 3, 3) do not match groups=1.
  %0 = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_window(%x: tensor<1x4x2x2xf32>, %w: tensor<8x4x3x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: window 3 (dilation 1) does not fit input extent 2 with padding 0+0.
  %0 = graph.conv2d %x, %w : (tensor<1x4x2x2xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x1x1xf32>
  func.return
}

// -----

func.func @conv_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: bias must have shape (8,), got (4,).
  %0 = graph.conv2d %x, %w, %b : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_layout(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: unknown layout 'NHWC' (NCHW or NCHW<x>c).
  %0 = graph.conv2d %x, %w {data_layout = "NHWC"} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @conv_pads_kind(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: graph.conv2d attribute 'pads' must be an array of i64 (array<i64: ...>), not 1 : i64.
  %0 = graph.conv2d %x, %w {pads = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @dense_k(%x: tensor<3x16xf32>, %w: tensor<10x8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.dense' op: dense needs x[..., K] and w[N, K], got (3, 16) and (10, 8).
  %0 = graph.dense %x, %w : (tensor<3x16xf32>, tensor<10x8xf32>) -> tensor<3x10xf32>
  func.return
}

// -----

// A panel weight is [N/64, K, 64]: a panel of 32 columns is not one.
func.func @dense_panels(%x: tensor<3x16xf32>, %w: tensor<2x16x32xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.dense' op: dense needs x[..., K] and w[N/64, K, 64], got (3, 16) and (2, 16, 32).
  %0 = graph.dense %x, %w {weight_layout = #graph<weight_layout NK64n>} : (tensor<3x16xf32>, tensor<2x16x32xf32>) -> tensor<3x64xf32>
  func.return
}

// -----

func.func @dense_bias(%x: tensor<3x16xf32>, %w: tensor<10x16xf32>, %b: tensor<16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.dense' op: bias must have shape (10,), got (16,).
  %0 = graph.dense %x, %w, %b : (tensor<3x16xf32>, tensor<10x16xf32>, tensor<16xf32>) -> tensor<3x10xf32>
  func.return
}

// -----

func.func @matmul_k(%x: tensor<3x16xf32>, %w: tensor<8x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.matmul' op: matmul needs [..., M, K] and [..., K, N], got (3, 16) and (8, 16).
  %0 = graph.matmul %x, %w : (tensor<3x16xf32>, tensor<8x16xf32>) -> tensor<3x8xf32>
  func.return
}

// -----

func.func @pool_rank(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool2d' op: pooling takes NCHW input, got rank 2.
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @pool_kernel_missing(%x: tensor<1x1x4x4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.avg_pool2d' op: graph.avg_pool2d needs attribute 'kernel'.
  %0 = graph.avg_pool2d %x : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @global_pool_rank(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.global_avg_pool2d' op: global pooling takes NCHW input, got rank 2.
  %0 = graph.global_avg_pool2d %x : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @reduce_axis(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reduce_sum' op: axis 2 is out of range for rank 2.
  %0 = graph.reduce_sum %x {axes = array<i64: 2>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @softmax_axis(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.softmax' op: axis -3 is out of range for rank 2.
  %0 = graph.softmax %x {axis = -3 : i64} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @layer_norm_params(%x: tensor<3x16xf32>, %s: tensor<3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.layer_norm' op: scale and bias must have shape (16,), got (3,).
  %0 = graph.layer_norm %x, %s : (tensor<3x16xf32>, tensor<3xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @batch_norm_params(%x: tensor<1x3x2x2xf32>, %s: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.batch_norm' op: batch_norm parameters must have shape (3,), got (4,).
  %0 = graph.batch_norm %x, %s, %s, %s, %s : (tensor<1x3x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x2x2xf32>
  func.return
}

// -----

func.func @pad_count(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.pad' op: pads needs 4 values for rank 2, got 2.
  %0 = graph.pad %x {pads = array<i64: 1, 1>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

// Cropping to 0 rows is an empty tensor (fold-empty-tensors folds it); past that, an error.
func.func @pad_crops_too_much(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.pad' op: padding [-3, 0, -1, 0] crops more than the extents (3, 16).
  %0 = graph.pad %x {pads = array<i64: -3, 0, -1, 0>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @reshape_two_inferred(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reshape' op: reshape allows one -1.
  %0 = graph.reshape %x {shape = array<i64: -1, -1>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reshape' op: cannot reshape (3, 16) (48 elements) to (5, 10).
  %0 = graph.reshape %x {shape = array<i64: 5, 10>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @flatten_axis(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.flatten' op: flatten axis 3 out of range for rank 2.
  %0 = graph.flatten %x {axis = 3 : i64} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @squeeze_extent(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.squeeze' op: cannot squeeze axis 0 of extent 3.
  %0 = graph.squeeze %x {axes = array<i64: 0>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @unsqueeze_axis(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.unsqueeze' op: axis 3 is out of range for rank 3.
  %0 = graph.unsqueeze %x {axes = array<i64: 3>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @transpose_perm(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.transpose' op: perm [0, 0] is not a permutation of 2 axes.
  %0 = graph.transpose %x {perm = array<i64: 0, 0>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @concat_shapes(%x: tensor<3x16xf32>, %y: tensor<4x8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.concat' op: cannot concatenate (3, 16) and (4, 8) along axis 0.
  %0 = graph.concat %x, %y {axis = 0 : i64} : (tensor<3x16xf32>, tensor<4x8xf32>) -> tensor<7x16xf32>
  func.return
}

// -----

func.func @concat_axis_missing(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.concat' op: graph.concat needs attribute 'axis'.
  %0 = graph.concat %x : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @split_negative(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.split' op: split sizes [20, -4] must not be negative.
  %0, %1 = graph.split %x {axis = 1 : i64, sizes = array<i64: 20, -4>} : (tensor<3x16xf32>) -> (tensor<3x20xf32>, tensor<3x4xf32>)
  func.return
}

// -----

func.func @split_sizes(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.split' op: split sizes [4, 4] do not add up to extent 16.
  %0, %1 = graph.split %x {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<3x16xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>)
  func.return
}

// -----

func.func @slice_step(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.slice' op: slice step cannot be 0.
  %0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 0>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

// An empty slice has a 0 extent (fold-empty-tensors folds it), which the type must say.
func.func @slice_empty(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.slice' op: graph.slice result is tensor<3x16xf32> but its operands give tensor<0x16xf32>.
  %0 = graph.slice %x {starts = array<i64: 2>, ends = array<i64: 1>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

func.func @gather_indices(%x: tensor<3x16xf32>, %i: tensor<2xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.gather' op: gather indices must be integers.
  %0 = graph.gather %x, %i : (tensor<3x16xf32>, tensor<2xf32>) -> tensor<2x16xf32>
  func.return
}

// -----

func.func @layout_blocks(%x: tensor<1x6x2x2xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.layout_transform' op: 6 channels do not split into blocks of 4.
  %0 = graph.layout_transform %x {src = "NCHW", dst = "NCHW4c"} : (tensor<1x6x2x2xf32>) -> tensor<1x6x2x2xf32>
  func.return
}

// -----

func.func @broadcast_to(%x: tensor<3x4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.broadcast_to' op: shapes (3, 4) and (2, 4) do not broadcast.
  %0 = graph.broadcast_to %x {shape = array<i64: 2, 4>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @constant_type() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.constant' op: graph.constant has one result, of its value's type.
  %0 = "graph.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

func.func @fused_args(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.fused' op: graph.fused region arguments must match its operands.
  %y = graph.fused "g" (%x) : (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<2xf32>):
    graph.yield %a : tensor<2xf32>
  }
  func.return
}

// -----

func.func @fused_yield(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.fused' op: graph.fused must end with graph.yield of its result types.
  %y = graph.fused "g" (%x) : (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    graph.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  func.return
}

// -----

func.func @perm_kind(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.transpose' op: graph.transpose attribute 'perm' must be an array of i64 (array<i64: ...>), not "x".
  %0 = graph.transpose %x {perm = "x"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @axis_kind(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.softmax' op: graph.softmax attribute 'axis' must be an i64 integer, not 1.000000e+00 : f32.
  %0 = graph.softmax %x {axis = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @clip_bound(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.clip' op: graph.clip attribute 'min' must be a float (like 1.0 : f32), not "a".
  %0 = graph.clip %x {min = "a"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @gelu_approximate(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.gelu' op: graph.gelu attribute 'approximate' must be one of none, tanh (#graph<approximate ...>), not "fast".
  %0 = graph.gelu %x {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// The kernel's length is the spatial rank: a 1-D window on a 2-D input.
func.func @pool_kernel_length(%x: tensor<1x1x4x4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool2d' op: a 1-D pooling takes an input of rank 3, got rank 4.
  %0 = graph.max_pool2d %x {kernel = array<i64: 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @pool_stride(%x: tensor<1x1x4x4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool2d' op: window 2, stride 0 and dilation 1 must be positive.
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 0, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: groups must be positive, got 0.
  %0 = graph.conv2d %x, %w {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

func.func @reshape_zero(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reshape' op: bad target shape [2, 0] for input (4,) (0 copies an input extent, -1 is inferred).
  %0 = graph.reshape %x {shape = array<i64: 2, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @concat_element_types(%x: tensor<4xf32>, %y: tensor<4xi64>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.concat' op: all operands must have one element type.
  %0 = graph.concat %x, %y {axis = 0 : i64} : (tensor<4xf32>, tensor<4xi64>) -> tensor<8xf32>
  func.return
}

// -----

func.func @layout_zero_block(%x: tensor<1x4x8x8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.layout_transform' op: unknown layout 'NCHW0c' (NCHW or NCHW<x>c).
  %0 = graph.layout_transform %x {src = "NCHW", dst = "NCHW0c"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// A parse error rather than a verify error: graph.constant holds only dense<...>.
func.func @constant_value() {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:23
  // CHECK: graph.constant takes a dense<...> : tensor<...> value
  %0 = graph.constant 1.0 : f32
  func.return
}

// -----

// The unknown name is reported before the required `kernel` it stands in for.
func.func @typo_pool(%x: tensor<1x1x4x4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.max_pool2d' op: graph.max_pool2d has no attribute 'kernal' (did you mean 'kernel'?).
  %0 = graph.max_pool2d %x {kernal = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  func.return
}

// -----

func.func @typo_reduce(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reduce_mean' op: graph.reduce_mean has no attribute 'keepdim' (did you mean 'keepdims'?).
  %0 = graph.reduce_mean %x {axes = array<i64: 1>, keepdim = false} : (tensor<3x16xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @typo_softmax(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.softmax' op: graph.softmax has no attribute 'axes' (did you mean 'axis'?).
  %0 = graph.softmax %x {axes = array<i64: 0>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return
}

// -----

// Nothing close: the message lists what the op takes, or says it takes nothing.
func.func @unknown_gather(%x: tensor<3x16xf32>, %i: tensor<2xi64>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.gather' op: graph.gather has no attribute 'batch_dims' (it has 'axis').
  %0 = graph.gather %x, %i {batch_dims = 0 : i64} : (tensor<3x16xf32>, tensor<2xi64>) -> tensor<2x16xf32>
  func.return
}

// -----

func.func @unknown_relu(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.relu' op: graph.relu has no attribute 'alpha' (it takes none).
  %0 = graph.relu %x {alpha = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// In the generic form properties are spelled <{...}>: a misspelling there too.
func.func @typo_generic(%x: tensor<3x4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.transpose' op: graph.transpose has no attribute 'prem' (did you mean 'perm'?).
  %0 = "graph.transpose"(%x) <{prem = array<i64: 1, 0>}> : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// Wrong kinds: keepdims is a boolean, weight_layout an enum, pads i64s.
func.func @keepdims_kind(%x: tensor<3x16xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reduce_sum' op: graph.reduce_sum attribute 'keepdims' must be a boolean (true or false), not 0 : i64.
  %0 = graph.reduce_sum %x {keepdims = 0 : i64} : (tensor<3x16xf32>) -> tensor<1x1xf32>
  func.return
}

// -----

func.func @weight_layout_kind(%x: tensor<3x16xf32>, %w: tensor<16x10xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.dense' op: graph.dense attribute 'weight_layout' must be one of NK, KN, NK64n (#graph<weight_layout ...>), not "KN".
  %0 = graph.dense %x, %w {weight_layout = "KN"} : (tensor<3x16xf32>, tensor<16x10xf32>) -> tensor<3x10xf32>
  func.return
}

// -----

func.func @pads_element_type(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: graph.conv2d attribute 'pads' must be an array of i64 (array<i64: ...>), not array<i32: 1, 1, 1, 1>.
  %0 = graph.conv2d %x, %w {pads = array<i32: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return
}

// -----

func.func @strides_length(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.conv2d' op: strides needs 2 values for 2 spatial axes, got 3.
  %0 = graph.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return
}

// -----

// Missing required properties.
func.func @layout_transform_dst(%x: tensor<1x8x4x4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.layout_transform' op: graph.layout_transform needs attribute 'dst'.
  %0 = graph.layout_transform %x {src = "NCHW"} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return
}

// -----

func.func @reshape_shape(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.reshape' op: graph.reshape needs attribute 'shape'.
  %0 = graph.reshape %x : (tensor<4xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// A word outside the enum's set is a parse error at the word.
func.func @approximate_word(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:56
  // CHECK: Expected `none`, or `tanh`.
  %0 = graph.gelu %x {approximate = #graph<approximate fast>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// The value-less ops and fused groups accept namespaced attributes only, too.
func.func @weight_attribute() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.weight' op: graph.weight has no attribute 'nmae' (did you mean 'name'?).
  %0 = graph.weight "w" {nmae = "v"} : tensor<4xf32>
  func.return
}

// -----

func.func @fused_attribute(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.fused' op: graph.fused has no attribute 'kind' (it has 'name').
  %y = graph.fused "g" (%x) : (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    graph.yield %a : tensor<4xf32>
  } {kind = "injective"}
  func.return
}

// -----

// A parse error of the graph ops' custom form: operands and their types disagree.
func.func @operand_types(%x: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:24
  // CHECK: graph.relu has 1 operand but its type lists 2
  %0 = graph.relu %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @bitcast_width(%a: tensor<2x3xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.bitcast' op: cannot bitcast f32 to i64: they are not of one bit width (8 to 64 bits).
  %0 = graph.bitcast %a {to = i64} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  func.return
}

// -----

func.func @requantize_float(%a: tensor<4xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.requantize' op: requantize takes an integer tensor to an integer type, got f32 to i8.
  %0 = graph.requantize %a {shift = 2 : i64, to = i8} : (tensor<4xf32>) -> tensor<4xi8>
  func.return
}

// -----

func.func @requantize_shift(%a: tensor<4xi32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'graph.requantize' op: shift 31 must be in [0, 31).
  %0 = graph.requantize %a {shift = 31 : i64, to = i8} : (tensor<4xi32>) -> tensor<4xi8>
  func.return
}
