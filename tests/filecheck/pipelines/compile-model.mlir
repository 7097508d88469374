// compile-model takes graph IR down to loop IR: the same passes tc.compile runs.
// RUN: tilecraft-opt %s -p compile-model | filecheck %s
// RUN: tilecraft-opt %s -p compile-model --print-between-passes | filecheck %s --check-prefix=STAGES
// RUN: tilecraft-opt %s -p 'compile-model{fuse=false}' | filecheck %s --check-prefix=UNFUSED

// One loop-level @main: inputs, then outputs, as memrefs; the intermediate value
// lives in the arena plan-memory sized; a call per fused group.
// CHECK:      func.func @main(%x: memref<4x16xf32> {tc.name = "x"}, %w: memref<8x16xf32> {tc.name = "w"},
// CHECK-SAME:     %out0: memref<4x8xf32> {tc.name = "out0"})
// CHECK-SAME:     tc.arena_bytes = 128
// CHECK-NEXT:   %[[A:.*]] = loop.alloc "arena" global : memref<128xi8>
// CHECK-NEXT:   %[[R:.*]] = loop.view %[[A]][0] : memref<128xi8> to memref<4x8xf32>
// CHECK-NEXT:   func.call @fused_dense_relu(%x, %w, %[[R]])
// CHECK-NEXT:   func.call @fused_softmax(%[[R]], %out0)
// CHECK-NEXT:   func.return
// CHECK:      func.func @fused_dense_relu(
// CHECK:        loop.for
// CHECK:      func.func @fused_softmax(
// CHECK-NOT:  graph.
// CHECK-NOT:  te.

// Its stages, in order, each printed (and verified) after it runs.
// STAGES:      // IR after fold-empty-tensors:
// STAGES:      // IR after check-graph-level:
// STAGES:      // IR after infer-shapes:
// STAGES:      // IR after canonicalize:
// STAGES:      // IR after alter-layout:
// STAGES:      // IR after winograd-conv2d:
// STAGES:      // IR after fold-constants:
// STAGES:      // IR after cse:
// STAGES:      // IR after dce:
// STAGES:      // IR after fuse-ops:
// STAGES:        graph.fused "fused_dense_relu"
// STAGES:      // IR after plan-memory:
// STAGES:        tc.offsets
// STAGES:      // IR after convert-graph-to-te:
// STAGES:        te.compute
// STAGES:      // IR after fold-constant-kernels:
// STAGES:      // IR after te-inline:
// STAGES:      // IR after convert-te-to-loop:
// STAGES:        loop.for
// STAGES-NOT:  // IR after
// STAGES:      loop.for

// Without fusion each op is a kernel of its own, still planned in the arena.
// UNFUSED:      func.func @main(
// UNFUSED:        func.call @fused_dense(%x, %w, %[[D:.*]]) :
// UNFUSED:        func.call @fused_relu(%[[D]], %[[R:.*]]) :
// UNFUSED:        func.call @fused_softmax(%[[R]], %out0) :

func.func @main(%x: tensor<4x16xf32> {tc.name = "x"}, %w: tensor<8x16xf32> {tc.name = "w"}) -> tensor<4x8xf32> {
  %d = graph.dense %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %r = graph.relu %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = graph.softmax %r {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}
