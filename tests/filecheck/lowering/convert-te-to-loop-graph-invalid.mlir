// What convert-te-to-loop refuses in a function that calls kernels: each error
// names the op (file:line:col) and says what to do.
// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop --verify-diagnostics 2>&1 | filecheck %s

builtin.module {
  func.func @no_arena(%x: tensor<4xf32>) -> tensor<4xf32> {
    // CHECK: convert-te-to-loop-graph-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: 'tc.offsets' places a value in the arena, but the function has no positive 'tc.arena_bytes' (run plan-memory)
    %a = func.call @neg(%x) {tc.offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
    %b = func.call @neg(%a) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %b : tensor<4xf32>
  }
  func.func @neg(%p0: tensor<4xf32>) -> tensor<4xf32> {
    %n = te.compute "n" (%i: "i") -> tensor<4xf32> {
      %0 = te.read %p0[%i] : tensor<4xf32>
      %1 = arith.negf %0 : f32
      te.yield %1 : f32
    }
    func.return %n : tensor<4xf32>
  }
}

// -----

// %b is written while %a, which it overlaps, is still to be read.
builtin.module {
  func.func @overlap(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tc.arena_bytes = 64 : i64} {
    %a = func.call @neg(%x) {tc.offsets = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
    // CHECK: convert-te-to-loop-graph-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: 'tc.offsets' puts this result at bytes [8, 24) of the arena, which a value still alive (from @neg) uses at [0, 16)
    %b = func.call @neg(%x) {tc.offsets = array<i64: 8>} : (tensor<4xf32>) -> tensor<4xf32>
    %c = func.call @add(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %c : tensor<4xf32>
  }
  func.func @neg(%p0: tensor<4xf32>) -> tensor<4xf32> {
    %n = te.compute "n" (%i: "i") -> tensor<4xf32> {
      %0 = te.read %p0[%i] : tensor<4xf32>
      %1 = arith.negf %0 : f32
      te.yield %1 : f32
    }
    func.return %n : tensor<4xf32>
  }
  func.func @add(%p0: tensor<4xf32>, %p1: tensor<4xf32>) -> tensor<4xf32> {
    %s = te.compute "s" (%i: "i") -> tensor<4xf32> {
      %0 = te.read %p0[%i] : tensor<4xf32>
      %1 = te.read %p1[%i] : tensor<4xf32>
      %2 = arith.addf %0, %1 : f32
      te.yield %2 : f32
    }
    func.return %s : tensor<4xf32>
  }
}

// -----

builtin.module {
  func.func @leftover(%x: tensor<4xf32>) -> tensor<4xf32> {
    // CHECK: convert-te-to-loop-graph-invalid.mlir:[[# @LINE + 1]]:5: error: convert-te-to-loop: 'graph.relu' is left in the graph function; every compute op must be in a kernel (run convert-graph-to-te first)
    %r = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    %a = func.call @neg(%r) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %a : tensor<4xf32>
  }
  func.func @neg(%p0: tensor<4xf32>) -> tensor<4xf32> {
    %n = te.compute "n" (%i: "i") -> tensor<4xf32> {
      %0 = te.read %p0[%i] : tensor<4xf32>
      %1 = arith.negf %0 : f32
      te.yield %1 : f32
    }
    func.return %n : tensor<4xf32>
  }
}
