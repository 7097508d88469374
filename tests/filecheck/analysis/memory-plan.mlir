// `memory-plan`: the arena plan-memory chose against a buffer per value (the
// entry's attributes), weight bytes, and the scratch each function allocates.

// RUN: tilecraft-opt %s --annotate=memory-plan | filecheck %s

// CHECK:      func.func @main(
// CHECK-SAME: tc.arena_bytes = 256 : i64, tc.naive_bytes = 512 : i64, tc.weights_bytes = 64 : i64, tc.global_scratch_bytes = 256 : i64
func.func @main(%x: memref<16xf32>, %w: memref<16xf32> {tc.weight = "w"}, %y: memref<16xf32>) attributes {tc.arena_bytes = 256 : i64, tc.naive_bytes = 512 : i64} {
  %arena = loop.alloc "arena" global : memref<256xi8>
  func.call @scale(%x, %w, %y) : (memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
  func.return
}

// A kernel's stack scratch; no arena, no weights.
// CHECK:      func.func @scale(
// CHECK-SAME: attributes {tc.local_scratch_bytes = 32 : i64}
func.func @scale(%x: memref<16xf32>, %w: memref<16xf32>, %y: memref<16xf32>) {
  %t = loop.alloc "t" local : memref<8xf32>
  func.return
}

// A function with none of them gets nothing (not zeros).
// CHECK:      func.func @empty(%a: memref<4xf32>) {
func.func @empty(%a: memref<4xf32>) {
  func.return
}
