// `tilecraft-opt --annotate=...`: analyses' facts on the ops they describe.

// RUN: tilecraft-opt %s --annotate=macs,bytes | filecheck %s
// CHECK:      %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, tc.macs = 6912 : i64, tc.flops = 13824 : i64, tc.bytes_read = 1200 : i64, tc.bytes_written = 1024 : i64}
// CHECK-NEXT: %r = graph.relu %y {tc.macs = 0 : i64, tc.flops = 256 : i64, tc.bytes_read = 1024 : i64, tc.bytes_written = 1024 : i64}
// CHECK:      %d = graph.dense %r2, %fw {tc.macs = 2560 : i64

// After a pass: what the analyses say of the IR it wrote (fuse-ops groups the ops;
// they are counted inside the group).
// RUN: tilecraft-opt %s -p fuse-ops --annotate=macs | filecheck %s --check-prefix=FUSED
// FUSED:      graph.fused
// FUSED:      graph.conv2d {{.*}}tc.macs = 6912 : i64

// An unknown analysis: one line, exit 1.
// RUN: not tilecraft-opt %s --annotate=byte 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: tilecraft-opt: error: unknown analysis 'byte'; did you mean 'bytes'?

func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
  %w = graph.weight "conv.weight" : tensor<4x3x3x3xf32>
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r2 = graph.flatten %r : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32>
  %fw = graph.weight "fc.weight" : tensor<10x256xf32>
  %d = graph.dense %r2, %fw : (tensor<1x256xf32>, tensor<10x256xf32>) -> tensor<1x10xf32>
  func.return %d : tensor<1x10xf32>
}
