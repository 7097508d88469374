// tilecraft-analyze: a model's costs op by op, as written.

// RUN: tilecraft-analyze %s | filecheck %s
// CHECK:      name {{ +}}op {{ +}}macs {{ +}}flops {{ +}}bytes_read {{ +}}bytes_written {{ +}}weights_bytes {{ +}}intensity {{ +}}live_bytes
// CHECK-NEXT: w {{ +}}graph.weight {{ +}}432
// CHECK-NEXT: y {{ +}}graph.conv2d {{ +}}6,912 {{ +}}13,824 {{ +}}1,200 {{ +}}1,024 {{ +}}6.22 {{ +}}1,792
// CHECK-NEXT: r {{ +}}graph.relu {{ +}}0 {{ +}}256 {{ +}}1,024 {{ +}}1,024 {{ +}}0.125 {{ +}}2,048
// CHECK-NEXT: f {{ +}}graph.flatten {{ +}}0 {{ +}}0 {{ +}}1,024 {{ +}}1,024 {{ +}}0 {{ +}}2,048
// CHECK-NEXT: fw {{ +}}graph.weight {{ +}}10,240
// CHECK-NEXT: d {{ +}}graph.dense {{ +}}2,560 {{ +}}5,120 {{ +}}11,264 {{ +}}40 {{ +}}0.453 {{ +}}1,064
// CHECK-NEXT: total {{ +}}9,472 {{ +}}19,200 {{ +}}14,512 {{ +}}3,112 {{ +}}10,672 {{ +}}1.09
// CHECK-NEXT: peak live bytes (activations): 2,048
// CHECK-NEXT: ops: 2 graph.weight, 1 graph.conv2d, 1 graph.relu, 1 graph.flatten, 1 graph.dense

// One analysis; its dependencies run, only it is shown.
// RUN: tilecraft-analyze %s --analysis macs | filecheck %s --check-prefix=MACS
// MACS:      name {{ +}}op {{ +}}macs {{ +}}flops{{$}}
// MACS:      total {{ +}}9,472 {{ +}}19,200{{$}}

// An unknown analysis: one line naming it, exit 1.
// RUN: not tilecraft-analyze %s --analysis mac 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: tilecraft-analyze: error: unknown analysis 'mac'; did you mean 'macs'? (known: {{.*}}bytes, {{.*}}macs, memory, {{.*}}op-histogram, roofline{{.*}})

func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
  %w = graph.weight "conv.weight" : tensor<4x3x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %f = graph.flatten %r : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32>
  %fw = graph.weight "fc.weight" : tensor<10x256xf32>
  %d = graph.dense %f, %fw : (tensor<1x256xf32>, tensor<10x256xf32>) -> tensor<1x10xf32>
  func.return %d : tensor<1x10xf32>
}
