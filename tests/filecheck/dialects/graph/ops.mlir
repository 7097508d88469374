// Every graph op in its custom syntax: printed, parsed again, printed identically;
// the generic form carries the same attributes and properties back.
// RUN: %roundtrip
// RUN: %generic-roundtrip

// Elementwise and broadcast ops; masks are i1.
func.func @elementwise(%a: tensor<2x4xf32>, %b: tensor<4xf32>, %m: tensor<2x1xi1>) -> tensor<2x4xf32> {
  %0 = graph.relu %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = graph.sigmoid %0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = graph.tanh %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = graph.erf %2 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = graph.gelu %3 {approximate = #graph<approximate tanh>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %5 = graph.exp %4 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %6 = graph.log %5 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %7 = graph.sqrt %6 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %8 = graph.neg %7 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %9 = graph.abs %8 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %10 = graph.clip %9 {min = 0.0 : f32, max = 6.0 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %11 = graph.add %10, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %12 = graph.sub %b, %11 : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %13 = graph.mul %12, %12 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %14 = graph.div %13, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %15 = graph.pow %14, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %16 = graph.maximum %15, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %17 = graph.minimum %16, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %18 = graph.where %m, %17, %b : (tensor<2x1xi1>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %19 = graph.equal %18, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %20 = graph.less %18, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
  %21 = graph.greater %b, %18 : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
  %22 = graph.cast %21 {to = f32} : (tensor<2x4xi1>) -> tensor<2x4xf32>
  %23 = graph.broadcast_to %b {shape = array<i64: 3, 1, 1>} : (tensor<4xf32>) -> tensor<3x1x4xf32>
  func.return %22 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME:      %[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<4xf32>, %[[M:.*]]: tensor<2x1xi1>)
// CHECK-NEXT:    %[[R0:.*]] = graph.relu %[[A]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R1:.*]] = graph.sigmoid %[[R0]] : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R2:.*]] = graph.tanh %[[R1]]
// CHECK-NEXT:    %[[R3:.*]] = graph.erf %[[R2]]
// CHECK-NEXT:    %[[R4:.*]] = graph.gelu %[[R3]] {approximate = #graph<approximate tanh>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R5:.*]] = graph.exp %[[R4]]
// CHECK-NEXT:    %[[R6:.*]] = graph.log %[[R5]]
// CHECK-NEXT:    %[[R7:.*]] = graph.sqrt %[[R6]]
// CHECK-NEXT:    %[[R8:.*]] = graph.neg %[[R7]]
// CHECK-NEXT:    %[[R9:.*]] = graph.abs %[[R8]]
// CHECK-NEXT:    %[[R10:.*]] = graph.clip %[[R9]] {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R11:.*]] = graph.add %[[R10]], %[[B]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R12:.*]] = graph.sub %[[B]], %[[R11]] : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R13:.*]] = graph.mul %[[R12]], %[[R12]]
// CHECK-NEXT:    %[[R14:.*]] = graph.div %[[R13]], %[[B]]
// CHECK-NEXT:    %[[R15:.*]] = graph.pow %[[R14]], %[[B]]
// CHECK-NEXT:    %[[R16:.*]] = graph.maximum %[[R15]], %[[B]]
// CHECK-NEXT:    %[[R17:.*]] = graph.minimum %[[R16]], %[[B]]
// CHECK-NEXT:    %[[R18:.*]] = graph.where %[[M]], %[[R17]], %[[B]] : (tensor<2x1xi1>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %{{.*}} = graph.equal %[[R18]], %[[B]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
// CHECK-NEXT:    %{{.*}} = graph.less %[[R18]], %[[B]] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xi1>
// CHECK-NEXT:    %[[R21:.*]] = graph.greater %[[B]], %[[R18]] : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1>
// CHECK-NEXT:    %[[R22:.*]] = graph.cast %[[R21]] {to = f32} : (tensor<2x4xi1>) -> tensor<2x4xf32>
// `shape` broadcasts against the input: [3, 1, 1] with [4] gives [3, 1, 4].
// CHECK-NEXT:    %{{.*}} = graph.broadcast_to %[[B]] {shape = array<i64: 3, 1, 1>} : (tensor<4xf32>) -> tensor<3x1x4xf32>
// CHECK-NEXT:    func.return %[[R22]] : tensor<2x4xf32>

// -----

// Anchors: convolutions (plain, grouped with bias, blocked layouts), dense, matmul, pooling.
func.func @anchors(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %dw: tensor<4x1x3x3xf32>, %bias: tensor<4xf32>,
                   %xb: tensor<1x1x9x9x4xf32>, %wb: tensor<2x1x3x3x4x4xf32>,
                   %v: tensor<3x16xf32>, %fc: tensor<10x16xf32>, %fcb: tensor<10xf32>, %p: tensor<2x3x16xf32>, %q: tensor<16x5xf32>) -> tensor<1x8x5x9xf32> {
  %0 = graph.conv2d %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x9xf32>
  %1 = graph.conv2d %x, %dw, %bias {groups = 4 : i64, dilations = array<i64: 2, 2>} : (tensor<1x4x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  %2 = graph.conv2d %xb, %wb {data_layout = "NCHW4c", kernel_layout = "OIHW4i4o", out_layout = "NCHW4c", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x9x9x4xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x9x9x4xf32>
  %3 = graph.dense %v, %fc, %fcb : (tensor<3x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<3x10xf32>
  %4 = graph.dense %p, %fc : (tensor<2x3x16xf32>, tensor<10x16xf32>) -> tensor<2x3x10xf32>
  %5 = graph.matmul %p, %q : (tensor<2x3x16xf32>, tensor<16x5xf32>) -> tensor<2x3x5xf32>
  %6 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
  %7 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true, count_include_pad = true} : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
  %8 = graph.global_avg_pool2d %x : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>
  func.return %0 : tensor<1x8x5x9xf32>
}

// CHECK-LABEL: func.func @anchors(
// CHECK:         graph.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x9xf32>
// CHECK-NEXT:    graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {groups = 4 : i64, dilations = array<i64: 2, 2>} : (tensor<1x4x9x9xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT:    graph.conv2d %{{.*}}, %{{.*}} {data_layout = "NCHW4c", kernel_layout = "OIHW4i4o", out_layout = "NCHW4c", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x9x9x4xf32>, tensor<2x1x3x3x4x4xf32>) -> tensor<1x2x9x9x4xf32>
// CHECK-NEXT:    graph.dense %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<3x10xf32>
// CHECK-NEXT:    graph.dense %{{.*}}, %{{.*}} : (tensor<2x3x16xf32>, tensor<10x16xf32>) -> tensor<2x3x10xf32>
// CHECK-NEXT:    graph.matmul %{{.*}}, %{{.*}} : (tensor<2x3x16xf32>, tensor<16x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    graph.max_pool2d %{{.*}} {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
// ceil_mode: 9 with window 2, stride 2 gives 5 windows, the last one half outside.
// CHECK-NEXT:    graph.avg_pool2d %{{.*}} {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true, count_include_pad = true} : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT:    graph.global_avg_pool2d %{{.*}} : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>

// -----

// Reductions and normalizations.
func.func @reductions(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>, %img: tensor<1x3x2x2xf32>, %c: tensor<3xf32>) -> tensor<2x4xf32> {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %2 = graph.reduce_max %x : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %3 = graph.softmax %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %4 = graph.layer_norm %x, %s, %s {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %5 = graph.layer_norm %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %6 = graph.batch_norm %img, %c, %c, %c, %c {epsilon = 1.0e-03 : f32} : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  func.return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @reductions(
// CHECK-NEXT:    graph.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    graph.reduce_mean %{{.*}} {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// No axes: all of them, kept as 1s by default.
// CHECK-NEXT:    graph.reduce_max %{{.*}} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
// CHECK-NEXT:    graph.softmax %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    graph.layer_norm %{{.*}} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>

// -----

// Data movement.
func.func @movement(%x: tensor<2x3x4xf32>, %ids: tensor<5xi64>, %y: tensor<1x8x4x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.pad %x {pads = array<i64: 0, 1, 0, 0, 1, 2>, value = 1.5 : f32} : (tensor<2x3x4xf32>) -> tensor<2x5x6xf32>
  %1 = graph.reshape %x {shape = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %2 = graph.flatten %x {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %3 = graph.unsqueeze %x {axes = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<1x2x3x4x1xf32>
  %4 = graph.squeeze %3 {axes = array<i64: 0>} : (tensor<1x2x3x4x1xf32>) -> tensor<2x3x4x1xf32>
  %5 = graph.squeeze %3 : (tensor<1x2x3x4x1xf32>) -> tensor<2x3x4xf32>
  %6 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %7 = graph.transpose %x : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %8 = graph.concat %x, %x {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
  %9, %10 = graph.split %x {axis = 2 : i64, sizes = array<i64: 1, 3>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x3xf32>)
  %11 = graph.slice %x {starts = array<i64: 0, -1>, ends = array<i64: 9223372036854775807, -5>, axes = array<i64: 1, 2>, steps = array<i64: 2, -1>} : (tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  %12 = graph.gather %x, %ids {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x3x5xf32>
  %13 = graph.layout_transform %y {src = "NCHW", dst = "NCHW4c"} : (tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  func.return %5 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @movement(
// CHECK-NEXT:    graph.pad %{{.*}} {pads = array<i64: 0, 1, 0, 0, 1, 2>, value = 1.500000e+00 : f32} : (tensor<2x3x4xf32>) -> tensor<2x5x6xf32>
// CHECK-NEXT:    graph.reshape %{{.*}} {shape = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT:    graph.flatten %{{.*}} {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:    %[[U:.*]] = graph.unsqueeze %{{.*}} {axes = array<i64: 0, -1>} : (tensor<2x3x4xf32>) -> tensor<1x2x3x4x1xf32>
// CHECK-NEXT:    graph.squeeze %[[U]] {axes = array<i64: 0>} : (tensor<1x2x3x4x1xf32>) -> tensor<2x3x4x1xf32>
// CHECK-NEXT:    graph.squeeze %[[U]] : (tensor<1x2x3x4x1xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    graph.transpose %{{.*}} {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    graph.transpose %{{.*}} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT:    graph.concat %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    %{{.*}}, %{{.*}} = graph.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 1, 3>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x3xf32>)
// Python slicing: rows 0 and 2 of 3; the last axis reversed entirely.
// CHECK-NEXT:    graph.slice %{{.*}} {starts = array<i64: 0, -1>, ends = array<i64: 9223372036854775807, -5>, axes = array<i64: 1, 2>, steps = array<i64: 2, -1>} : (tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
// CHECK-NEXT:    graph.gather %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<5xi64>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    graph.layout_transform %{{.*}} {src = "NCHW", dst = "NCHW4c"} : (tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>

// -----

// Values without operands, and a fused group.
func.func @values_and_groups(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = graph.constant dense<2> : tensor<i64>
  %m = graph.constant dense<[true, false]> : tensor<2xi1>
  %w = graph.weight "fc.weight" : tensor<4xf32>
  %y = graph.fused "fused_add_relu" (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %t = graph.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %r = graph.relu %t : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  } {tc.note = "kept"}
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @values_and_groups(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    graph.constant dense<2> : tensor<i64>
// CHECK-NEXT:    graph.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %[[W:.*]] = graph.weight "fc.weight" : tensor<4xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.fused "fused_add_relu" (%[[X]], %[[W]]) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[T:.*]] = graph.add %[[A]], %[[B]]
// CHECK-NEXT:      %[[R:.*]] = graph.relu %[[T]]
// CHECK-NEXT:      graph.yield %[[R]] : tensor<4xf32>
// CHECK-NEXT:    } {tc.note = "kept"}
// CHECK-NEXT:    func.return %[[Y]] : tensor<4xf32>

// -----

// Typed properties: enums print as #graph<kind word>, booleans as true/false;
// properties print first, namespaced (discardable) attributes after them.
func.func @properties(%x: tensor<1x8x4x4xf32>, %v: tensor<3x16xf32>, %kn: tensor<16x10xf32>) -> tensor<3x10xf32> {
  %0 = graph.dense %v, %kn {weight_layout = #graph<weight_layout KN>} : (tensor<3x16xf32>, tensor<16x10xf32>) -> tensor<3x10xf32>
  %1 = graph.gelu %v {approximate = #graph<approximate none>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %2 = graph.clip %v {max = 6.0 : f32} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %xb = graph.layout_transform %x {src = "NCHW", dst = "NCHW4c"} : (tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %3 = graph.max_pool2d %xb {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x4xf32>
  %4 = graph.global_avg_pool2d %xb {layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x1x1x4xf32>
  %5 = graph.reduce_max %v {axes = array<i64: 0>, keepdims = true} : (tensor<3x16xf32>) -> tensor<1x16xf32>
  %6 = graph.relu %v {tc.note = "no properties"} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %7 = graph.softmax %v {tc.offsets = array<i64: 0>, axis = 0 : i64} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %8 = graph.layer_norm %v {epsilon = 1.0e-05 : f64} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  func.return %0 : tensor<3x10xf32>
}

// CHECK-LABEL: func.func @properties(
// CHECK-NEXT:    graph.dense %{{.*}}, %{{.*}} {weight_layout = #graph<weight_layout KN>} : (tensor<3x16xf32>, tensor<16x10xf32>) -> tensor<3x10xf32>
// CHECK-NEXT:    graph.gelu %{{.*}} {approximate = #graph<approximate none>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
// CHECK-NEXT:    graph.clip %{{.*}} {max = 6.000000e+00 : f32} : (tensor<3x16xf32>) -> tensor<3x16xf32>
// CHECK-NEXT:    %[[XB:.*]] = graph.layout_transform %{{.*}} {src = "NCHW", dst = "NCHW4c"} : (tensor<1x8x4x4xf32>) -> tensor<1x2x4x4x4xf32>
// CHECK-NEXT:    graph.max_pool2d %[[XB]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x2x2x4xf32>
// CHECK-NEXT:    graph.global_avg_pool2d %[[XB]] {layout = "NCHW4c"} : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x1x1x4xf32>
// CHECK-NEXT:    graph.reduce_max %{{.*}} {axes = array<i64: 0>, keepdims = true} : (tensor<3x16xf32>) -> tensor<1x16xf32>
// CHECK-NEXT:    graph.relu %{{.*}} {tc.note = "no properties"} : (tensor<3x16xf32>) -> tensor<3x16xf32>
// CHECK-NEXT:    graph.softmax %{{.*}} {axis = 0 : i64, tc.offsets = array<i64: 0>} : (tensor<3x16xf32>) -> tensor<3x16xf32>
// A float property keeps the width it was written with.
// CHECK-NEXT:    graph.layer_norm %{{.*}} {epsilon = 1.000000e-05 : f64} : (tensor<3x16xf32>) -> tensor<3x16xf32>

// bitcast: the bits of each element as another type of one width.
func.func @bitcast(%a: tensor<2x3xf32>, %b: tensor<4xi64>) -> tensor<2x3xi32> {
  %0 = graph.bitcast %a {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %1 = graph.bitcast %b {to = f64} : (tensor<4xi64>) -> tensor<4xf64>
  func.return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @bitcast(
// CHECK-NEXT:    %{{.*}} = graph.bitcast %{{.*}} {to = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %{{.*}} = graph.bitcast %{{.*}} {to = f64} : (tensor<4xi64>) -> tensor<4xf64>

// requantize: an int32 accumulator scaled by 2^-shift, rounded and clipped to int8.
func.func @requantize(%acc: tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8> {
  %0 = graph.requantize %acc {shift = 7 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  func.return %0 : tensor<1x16x4x4xi8>
}

// CHECK-LABEL: func.func @requantize(
// CHECK-NEXT:    %{{.*}} = graph.requantize %{{.*}} {shift = 7 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
