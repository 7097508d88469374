// tilecraft-analyze reports an op it has no count for as unknown, with the reason,
// and leaves it out of the totals (never a silent zero).

// RUN: tilecraft-analyze %s --analysis macs | filecheck %s
// CHECK:      y {{ +}}graph.conv2d {{ +}}? {{ +}}?
// CHECK-NEXT: r {{ +}}graph.relu {{ +}}0 {{ +}}2,048
// CHECK-NEXT: total {{ +}}0 {{ +}}2,048
// CHECK-NEXT: unknown: y (graph.conv2d): a blocked or Winograd conv (count the model before alter-layout)

func.func @main(%x: tensor<1x2x8x8x16xf32>, %w: tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x8x8x16xf32> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", kernel_layout = "OIHW16i16o", out_layout = "NCHW16c"} : (tensor<1x2x8x8x16xf32>, tensor<2x2x3x3x16x16xf32>) -> tensor<1x2x8x8x16xf32>
  %r = graph.relu %y : (tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32>
  func.return %r : tensor<1x2x8x8x16xf32>
}
