// What bufferize-graph-function refuses in a function that calls kernels: each error
// names the op (file:line:col) and says what to do.
// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop,bufferize-graph-function --verify-diagnostics 2>&1 | filecheck %s

builtin.module {
  func.func @no_arena(%x: tensor<4xf32>) -> tensor<4xf32> {
    // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:5: error: bufferize-graph-function: 'tc.offsets' places a value in the arena, but the function has no positive 'tc.arena_bytes' (run plan-memory)
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
    // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:5: error: bufferize-graph-function: 'tc.offsets' puts this result at bytes [8, 24) of the arena, which a value still alive (from @neg) uses at [0, 16)
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
    // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:5: error: bufferize-graph-function: 'graph.relu' is left in the graph function; every compute op must be in a kernel (run convert-graph-to-te, then convert-te-to-loop first)
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

// -----

// A reshape that changes the buffer's shape is a kernel's job, not a view's.
builtin.module {
  func.func @reshape(%x: tensor<2xf32>) -> tensor<1x2xf32> {
    // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:5: error: bufferize-graph-function: a view of memref<2xf32> as memref<1x2xf32> is not the same buffer; only a scalar meeting a one-element tensor is
    %r = graph.reshape %x {shape = array<i64: 1, 2>} : (tensor<2xf32>) -> tensor<1x2xf32>
    %rb = bufferization.to_buffer %r : tensor<1x2xf32> to memref<1x2xf32>
    %yb = memref.alloc() : memref<1x2xf32>
    func.call @copy(%rb, %yb) : (memref<1x2xf32>, memref<1x2xf32>) -> ()
    %y = bufferization.to_tensor %yb : memref<1x2xf32> to tensor<1x2xf32>
    func.return %y : tensor<1x2xf32>
  }
  func.func @copy(%p0: memref<1x2xf32>, %c: memref<1x2xf32>) {
    func.return
  }
}

// -----

// plan-memory gives one offset per result.
builtin.module {
  func.func @offsets(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tc.arena_bytes = 64 : i64} {
    // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:5: error: bufferize-graph-function: 'tc.offsets' needs one offset per result
    %a = func.call @neg(%x) {tc.offsets = array<i64: 0, 16>} : (tensor<4xf32>) -> tensor<4xf32>
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

// -----

// The same for a returned view: the output argument has the reshaped type.
func.func @returned_view(%x: tensor<2xf32>) -> tensor<1x2xf32> {
  // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:3: error: bufferize-graph-function: a view of memref<2xf32> as memref<1x2xf32> is not the same buffer; only a scalar meeting a one-element tensor is
  %r = graph.reshape %x {shape = array<i64: 1, 2>} : (tensor<2xf32>) -> tensor<1x2xf32>
  func.return %r : tensor<1x2xf32>
}

// -----

// An in-place concat's operands must already be in its buffer: %b's kernel wrote
// it elsewhere.
builtin.module {
  func.func @concat_part_elsewhere(%x: tensor<1x16xf32>) -> tensor<1x32xf32> attributes {tc.arena_bytes = 192 : i64} {
    %a = func.call @neg(%x) {tc.offsets = array<i64: 0>} : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %b = func.call @neg(%a) {tc.offsets = array<i64: 128>} : (tensor<1x16xf32>) -> tensor<1x16xf32>
    // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:5: error: bufferize-graph-function: the in-place concat's operand b is not in its buffer (at arena byte 64)
    %c = graph.concat %a, %b {axis = 1 : i64, tc.in_place, tc.offsets = array<i64: 0>} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
    func.return %c : tensor<1x32xf32>
  }
  func.func @neg(%p0: tensor<1x16xf32>) -> tensor<1x16xf32> {
    %n = te.compute "n" (%i: "i", %j: "j") -> tensor<1x16xf32> {
      %0 = te.read %p0[%i, %j] : tensor<1x16xf32>
      %1 = arith.negf %0 : f32
      te.yield %1 : f32
    }
    func.return %n : tensor<1x16xf32>
  }
}

// -----

// A concat that is not in place is a kernel's job (convert-graph-to-te).
builtin.module {
  func.func @concat_not_in_place(%x: tensor<1x16xf32>) -> tensor<1x32xf32> {
    %a = func.call @neg(%x) : (tensor<1x16xf32>) -> tensor<1x16xf32>
    // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:5: error: bufferize-graph-function: a graph.concat in the graph function must be in place (concat-in-place)
    %c = graph.concat %a, %a {axis = 1 : i64} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
    func.return %c : tensor<1x32xf32>
  }
  func.func @neg(%p0: tensor<1x16xf32>) -> tensor<1x16xf32> {
    %n = te.compute "n" (%i: "i", %j: "j") -> tensor<1x16xf32> {
      %0 = te.read %p0[%i, %j] : tensor<1x16xf32>
      %1 = arith.negf %0 : f32
      te.yield %1 : f32
    }
    func.return %n : tensor<1x16xf32>
  }
}

// -----

// A view of the arena needs its offset.
builtin.module {
  func.func @concat_without_offset(%x: tensor<1x16xf32>) -> tensor<1x32xf32> attributes {tc.arena_bytes = 128 : i64} {
    %a = func.call @neg(%x) {tc.offsets = array<i64: 0>} : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %b = func.call @neg(%a) {tc.offsets = array<i64: 64>} : (tensor<1x16xf32>) -> tensor<1x16xf32>
    // CHECK: bufferize-graph-function-invalid.mlir:[[# @LINE + 1]]:5: error: bufferize-graph-function: an in-place concat needs its arena byte offset in 'tc.offsets' (run plan-memory)
    %c = graph.concat %a, %b {axis = 1 : i64, tc.in_place} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
    func.return %c : tensor<1x32xf32>
  }
  func.func @neg(%p0: tensor<1x16xf32>) -> tensor<1x16xf32> {
    %n = te.compute "n" (%i: "i", %j: "j") -> tensor<1x16xf32> {
      %0 = te.read %p0[%i, %j] : tensor<1x16xf32>
      %1 = arith.negf %0 : f32
      te.yield %1 : f32
    }
    func.return %n : tensor<1x16xf32>
  }
}
