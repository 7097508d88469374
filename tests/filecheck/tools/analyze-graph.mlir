// tilecraft-analyze --graph: the fused graph (after compile-model's graph stages up
// to fuse-ops) as Graphviz text, one node per kernel, coloured by fusion kind or,
// with --accel, by accelerability. The .dot needs no Graphviz; .svg and .png do
// (tests/pytest/test_accelerability.py renders them where `dot` is installed).

// RUN: tilecraft-analyze %s --analysis macs --graph %t.dot > /dev/null
// RUN: filecheck %s < %t.dot
// CHECK:      digraph fused {
// CHECK:        in0 [label="x\n1x16x4x4 i8", shape="ellipse", fillcolor="#ffffff"];
// CHECK-NEXT:   in1 [label="f\n1x16x4x4 f32", shape="ellipse", fillcolor="#ffffff"];
// Without a weight store, w's cast stays an op of its own (fold-constants would make
// it a weight), so the conv reads two casts.
// CHECK-NEXT:   [[XI:g[0-9]+]] [label="cast\ninjective", tooltip="fused_cast", fillcolor="#fdd0a2"];
// CHECK-NEXT:   [[WI:g[0-9]+]] [label="cast\ninjective", tooltip="fused_cast_1", fillcolor="#fdd0a2"];
// CHECK-NEXT:   [[CONV:g[0-9]+]] [label="conv2d, relu\nout-fusable", tooltip="fused_conv2d_relu", fillcolor="#fdae6b"];
// CHECK-NEXT:   [[REQ:g[0-9]+]] [label="requantize\ninjective", tooltip="fused_requantize", fillcolor="#fdd0a2"];
// The float conv runs blocked (alter-layout): its input goes through a layout transform.
// CHECK-NEXT:   [[LT:g[0-9]+]] [label="layout_transform\ninjective", tooltip="fused_layout_transform", fillcolor="#fdd0a2"];
// CHECK-NEXT:   [[FC:g[0-9]+]] [label="conv2d, relu\nout-fusable", tooltip="fused_conv2d_relu_1", fillcolor="#fdae6b"];
// CHECK-NEXT:   [[POOL:g[0-9]+]] [label="global_avg_pool2d\nreduction", tooltip="fused_global_avg_pool2d", fillcolor="#bcbddc"];
// CHECK-NEXT:   [[FLAT:g[0-9]+]] [label="layout_transform, flatten\ninjective", tooltip="fused_layout_transform_flatten", fillcolor="#fdd0a2"];
// Edges from producer to consumer, labelled with the value's type; weights draw none.
// CHECK-NEXT:   in0 -> [[XI]] [label="1x16x4x4 i8"];
// CHECK-NEXT:   [[XI]] -> [[CONV]] [label="1x16x4x4 i32"];
// CHECK-NEXT:   [[WI]] -> [[CONV]] [label="16x16x3x3 i32"];
// CHECK-NEXT:   [[CONV]] -> [[REQ]] [label="1x16x4x4 i32"];
// CHECK-NEXT:   in1 -> [[LT]] [label="1x16x4x4 f32"];
// CHECK-NEXT:   [[LT]] -> [[FC]] [label="1x1x4x4x16 f32"];
// CHECK-NEXT:   [[FC]] -> [[POOL]] [label="1x1x4x4x16 f32"];
// CHECK-NEXT:   [[POOL]] -> [[FLAT]] [label="1x1x1x1x16 f32"];
// CHECK-NEXT:   [[REQ]] -> out [label="1x16x4x4 i8"];
// CHECK-NEXT:   [[FLAT]] -> out [label="1x16 f32"];
// CHECK-NEXT:   out [label="output", shape="ellipse", fillcolor="#ffffff"];
// CHECK-NEXT:   subgraph cluster_legend { graph [label="fusion kind", fontsize="9"];
// CHECK-NEXT:     key0 [label="injective", fillcolor="#fdd0a2", fontsize="9"];
// CHECK-NEXT:     key1 [label="out-fusable", fillcolor="#fdae6b", fontsize="9"];
// CHECK-NEXT:     key2 [label="reduction", fillcolor="#bcbddc", fontsize="9"];
// CHECK-NEXT:   }
// CHECK-NEXT: }

// With --accel: the int8 chain's groups green, the float conv's red with the
// reason (found through alter-layout by its result's name), the rest white.
// RUN: echo '{"name": "test", "peak_gflops": 100, "bandwidth_gbs": 10}' > %t.machine.json
// RUN: tilecraft-analyze %s --analysis macs --accel default --machine %t.machine.json --graph %t.accel.dot > /dev/null
// RUN: filecheck %s --check-prefix=ACCEL < %t.accel.dot
// ACCEL:      [label="cast\ninjective\naccelerator", tooltip="fused_cast", fillcolor="#74c476"];
// ACCEL-NEXT: [label="cast\ninjective\naccelerator", tooltip="fused_cast_1", fillcolor="#74c476"];
// ACCEL-NEXT: [label="conv2d, relu\nout-fusable\naccelerator", tooltip="fused_conv2d_relu", fillcolor="#74c476"];
// ACCEL-NEXT: [label="requantize\ninjective\naccelerator", tooltip="fused_requantize", fillcolor="#74c476"];
// ACCEL-NEXT: [label="layout_transform\ninjective\nno multiply-adds", tooltip="fused_layout_transform", fillcolor="#ffffff"];
// ACCEL-NEXT: [label="conv2d, relu\nout-fusable\nconv2d: conv2d on f32: not quantized to\nint8 (tc.quantize makes int8 chains)", tooltip="fused_conv2d_relu_1\nconv2d: conv2d on f32: not quantized to int8 (tc.quantize makes int8 chains)", fillcolor="#fc9272"];
// ACCEL:      subgraph cluster_legend { graph [label="accelerability", fontsize="9"];
// ACCEL-NOT:  fusion kind

// A format dot cannot make: one line naming it, exit 1, before any work.
// RUN: not tilecraft-analyze %s --graph %t.pdf 2>&1 | filecheck %s --check-prefix=FORMAT
// FORMAT: tilecraft-analyze: error: {{.*}}.pdf: a fused-graph picture is .dot, .svg, .png, not '.pdf'
// FORMAT-NOT: name

func.func @main(%x: tensor<1x16x4x4xi8>, %f: tensor<1x16x4x4xf32>) -> (tensor<1x16x4x4xi8>, tensor<1x16xf32>) {
  %w = graph.constant dense<1> : tensor<16x16x3x3xi8>
  %b = graph.constant dense<3> : tensor<16xi32>
  %xi = graph.cast %x {to = i32} : (tensor<1x16x4x4xi8>) -> tensor<1x16x4x4xi32>
  %wi = graph.cast %w {to = i32} : (tensor<16x16x3x3xi8>) -> tensor<16x16x3x3xi32>
  %acc = graph.conv2d %xi, %wi, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xi32>, tensor<16x16x3x3xi32>, tensor<16xi32>) -> tensor<1x16x4x4xi32>
  %r = graph.relu %acc : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi32>
  %q = graph.requantize %r {shift = 2 : i64, to = i8} : (tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi8>
  %fw = graph.constant dense<0.5> : tensor<16x16x3x3xf32>
  %fc = graph.conv2d %f, %fw {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x4x4xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32>
  %fr = graph.relu %fc : (tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %fp = graph.global_avg_pool2d %fr : (tensor<1x16x4x4xf32>) -> tensor<1x16x1x1xf32>
  %ff = graph.flatten %fp : (tensor<1x16x1x1xf32>) -> tensor<1x16xf32>
  func.return %q, %ff : tensor<1x16x4x4xi8>, tensor<1x16xf32>
}
