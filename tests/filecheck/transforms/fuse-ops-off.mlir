// Fusion off is fuse-ops{enabled=false}: every op is a group of its own, so
// plan-memory plans every kernel and each call keeps its arena offsets.
// RUN: tilecraft-opt %s -p 'fuse-ops{enabled=false},plan-memory,convert-graph-to-te' | filecheck %s
// Without any fuse-ops, plan-memory refuses instead of planning offsets that the
// later wrapping of loose ops would drop.
// RUN: tilecraft-opt %s -p plan-memory,convert-graph-to-te --verify-diagnostics 2>&1 | filecheck %s --check-prefix=NOGROUPS

func.func @main(%x: tensor<1x256xf32>) -> tensor<1x256xf32> {
  %a = graph.exp %x : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %b = graph.neg %a : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %c = graph.relu %b : (tensor<1x256xf32>) -> tensor<1x256xf32>
  func.return %c : tensor<1x256xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-SAME:    tc.arena_bytes = 2048 : i64
// CHECK-NEXT:    %[[A:.*]] = func.call @fused_exp(%x) {tc.offsets = array<i64: 0>}
// CHECK-NEXT:    %[[B:.*]] = func.call @fused_neg(%[[A]]) {tc.offsets = array<i64: 1024>}
// CHECK-NEXT:    %[[C:.*]] = func.call @fused_relu(%[[B]]) {tc.offsets = array<i64: -1>}
// CHECK-NEXT:    func.return %[[C]]

// NOGROUPS: fuse-ops-off.mlir:9:3: error: plan-memory: graph.exp is in no fused group
