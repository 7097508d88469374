// RUN: tilecraft-opt %s --split-input-file -p convert-te-to-loop,bufferize-graph-function | filecheck %s

// The function that calls the kernels (a model's graph function) follows them to
// the loop calling convention: inputs, then the weights it names (bound by name
// from the weight store: `tc.weight`), then one output memref per result. A
// returned value is written into its output argument; a value the memory plan
// placed (`tc.offsets`) is a view of one arena; a constant is written inline
// (a splat by one loop).
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %x: memref<4xf32> {tc.name = "x"},
// CHECK-SAME:      %scale: memref<4xf32> {tc.weight = "scale"},
// CHECK-SAME:      %y: memref<4xf32> {tc.name = "y"})
// CHECK-SAME:      attributes {tc.arena_bytes = 32 : i64} {
// CHECK-NEXT:    %c = loop.alloc "constant" global : memref<4xf32>
// CHECK:         memref.store %{{.*}}, %c[%{{.*}}] : memref<4xf32>
// CHECK:         %k = loop.alloc "constant" global : memref<4xf32>
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:      memref.store %[[HALF]], %k[%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %arena = loop.alloc "arena" global : memref<32xi8>
// CHECK-NEXT:    %a = loop.view %arena[0] : memref<32xi8> to memref<4xf32>
// CHECK-NEXT:    func.call @mul(%x, %scale, %a) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    %b = loop.view %arena[16] : memref<32xi8> to memref<4xf32>
// CHECK-NEXT:    func.call @mul(%a, %c, %b)
// CHECK-NEXT:    func.call @mul(%b, %k, %y)
// CHECK-NEXT:    func.return
// CHECK:       func.func @mul(%p0: memref<4xf32> {tc.name = "p0"}, %p1: memref<4xf32> {tc.name = "p1"}, %m: memref<4xf32> {tc.name = "m"})
builtin.module {
  func.func @main(%x: tensor<4xf32> {tc.name = "x"}) -> (tensor<4xf32> {tc.name = "y"}) attributes {tc.arena_bytes = 32 : i64} {
    %w = graph.weight "scale" : tensor<4xf32>
    %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %k = graph.constant dense<0.5> : tensor<4xf32>
    %a = func.call @mul(%x, %w) {tc.offsets = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %b = func.call @mul(%a, %c) {tc.offsets = array<i64: 16>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %y = func.call @mul(%b, %k) {tc.offsets = array<i64: -1>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
  func.func @mul(%p0: tensor<4xf32> {tc.name = "p0"}, %p1: tensor<4xf32> {tc.name = "p1"}) -> tensor<4xf32> {
    %m = te.compute "m" (%i: "i") -> tensor<4xf32> {
      %0 = te.read %p0[%i] : tensor<4xf32>
      %1 = te.read %p1[%i] : tensor<4xf32>
      %2 = arith.mulf %0, %1 : f32
      te.yield %2 : f32
    }
    func.return %m : tensor<4xf32>
  }
}

// -----

// Without a memory plan every intermediate value gets a buffer of its own; two
// results, named by the function's result attributes or by position.
// CHECK-LABEL: func.func @unplanned(
// CHECK-SAME:      %x: memref<4xf32> {tc.name = "x"}, %out0: memref<4xf32> {tc.name = "out0"}, %out1: memref<4xf32> {tc.name = "out1"})
// CHECK-NEXT:    %a = loop.alloc "neg_0" global : memref<4xf32>
// CHECK-NEXT:    func.call @neg(%x, %a)
// CHECK-NEXT:    func.call @neg(%a, %out0)
// CHECK-NEXT:    func.call @neg(%x, %out1)
// CHECK-NEXT:    func.return
builtin.module {
  func.func @unplanned(%x: tensor<4xf32> {tc.name = "x"}) -> (tensor<4xf32>, tensor<4xf32>) {
    %a = func.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %b = func.call @neg(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %c = func.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %b, %c : tensor<4xf32>, tensor<4xf32>
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

// What is returned but not written by a kernel (an input, a weight, a kernel
// result returned a second time) is copied into its output argument at the end.
// CHECK-LABEL: func.func @copies(
// CHECK-SAME:      %x: memref<4xf32> {tc.name = "x"}, %w: memref<4xf32> {tc.weight = "w"}, %out0: memref<4xf32> {tc.name = "out0"}, %out1: memref<4xf32> {tc.name = "out1"}, %out2: memref<4xf32> {tc.name = "out2"}, %out3: memref<4xf32> {tc.name = "out3"})
// CHECK-NEXT:    func.call @neg(%x, %out0)
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:      %[[V:.*]] = memref.load %out0[%[[I]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[V]], %out1[%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[J:.*]] = 0 to 4 {
// CHECK-NEXT:      %[[X:.*]] = memref.load %x[%[[J]]] : memref<4xf32>
// CHECK-NEXT:      memref.store %[[X]], %out2[%[[J]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for
// CHECK-NEXT:      memref.load %w
// CHECK-NEXT:      memref.store %{{.*}}, %out3
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
builtin.module {
  func.func @copies(%x: tensor<4xf32> {tc.name = "x"}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %w = graph.weight "w" : tensor<4xf32>
    %a = func.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
    func.return %a, %a, %x, %w : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
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

// A function with nothing to compute is a copy too; one with graph ops but no
// kernels to call (convert-graph-to-te has not run) is left alone.
// CHECK-LABEL: func.func @identity(%x: memref<4xf32> {tc.name = "x"}, %out0: memref<4xf32> {tc.name = "out0"})
// CHECK-NEXT:    loop.for
// CHECK-LABEL: func.func @not_yet(%x: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    graph.relu
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @not_yet(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// The pass on its own input, as convert-te-to-loop leaves it: a scalar meets a
// kernel's one-element tensor through graph.reshape views, which fold to the same
// buffer; a scalar constant is a one-element buffer, returned by a copy.
// CHECK-LABEL: func.func @scalar(
// CHECK-SAME:      %s: memref<1xf32> {tc.name = "s"}, %out0: memref<1xf32> {tc.name = "out0"}, %out1: memref<1xf32> {tc.name = "out1"}) {
// CHECK-NEXT:    %k = loop.alloc "constant" global : memref<1xf32>
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 1 {
// CHECK-NEXT:      memref.store %[[TWO]], %k[%[[I]]] : memref<1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.call @mul(%s, %k, %out1) : (memref<1xf32>, memref<1xf32>, memref<1xf32>) -> ()
// CHECK-NEXT:    loop.for %[[J:.*]] = 0 to 1 {
// CHECK-NEXT:      %[[V:.*]] = memref.load %k[%[[J]]] : memref<1xf32>
// CHECK-NEXT:      memref.store %[[V]], %out0[%[[J]]] : memref<1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NOT:     bufferization
builtin.module {
  func.func @scalar(%s: tensor<f32> {tc.name = "s"}) -> (tensor<f32>, tensor<1xf32>) {
    %k = graph.constant dense<2.0> : tensor<f32>
    %r = graph.reshape %s {shape = array<i64: 1>} : (tensor<f32>) -> tensor<1xf32>
    %kr = graph.reshape %k {shape = array<i64: 1>} : (tensor<f32>) -> tensor<1xf32>
    %rb = bufferization.to_buffer %r : tensor<1xf32> to memref<1xf32>
    %kb = bufferization.to_buffer %kr : tensor<1xf32> to memref<1xf32>
    %yb = memref.alloc() : memref<1xf32>
    func.call @mul(%rb, %kb, %yb) : (memref<1xf32>, memref<1xf32>, memref<1xf32>) -> ()
    %y = bufferization.to_tensor %yb : memref<1xf32> to tensor<1xf32>
    func.return %k, %y : tensor<f32>, tensor<1xf32>
  }
  func.func @mul(%p0: memref<1xf32>, %p1: memref<1xf32>, %m: memref<1xf32>) {
    func.return
  }
}

// -----

// An in-place concat (concat-in-place, plan-memory) is a view of the arena over
// its operands, which their kernels wrote at their offsets: no copy is made.
// CHECK-LABEL: func.func @in_place_concat(
// CHECK-SAME:      %x: memref<1x16xf32> {tc.name = "x"}, %out0: memref<1x32xf32> {tc.name = "out0"})
// CHECK-NEXT:    %arena = loop.alloc "arena" global : memref<128xi8>
// CHECK-NEXT:    %a = loop.view %arena[0] : memref<128xi8> to memref<1x16xf32>
// CHECK-NEXT:    func.call @neg(%x, %a) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
// CHECK-NEXT:    %b = loop.view %arena[64] : memref<128xi8> to memref<1x16xf32>
// CHECK-NEXT:    func.call @neg(%a, %b) : (memref<1x16xf32>, memref<1x16xf32>) -> ()
// CHECK-NEXT:    %c = loop.view %arena[0] : memref<128xi8> to memref<1x32xf32>
// CHECK-NEXT:    func.call @neg2(%c, %out0) : (memref<1x32xf32>, memref<1x32xf32>) -> ()
// CHECK-NEXT:    func.return
builtin.module {
  func.func @in_place_concat(%x: tensor<1x16xf32> {tc.name = "x"}) -> tensor<1x32xf32> attributes {tc.arena_bytes = 128 : i64} {
    %a = func.call @neg(%x) {tc.offsets = array<i64: 0>} : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %b = func.call @neg(%a) {tc.offsets = array<i64: 64>} : (tensor<1x16xf32>) -> tensor<1x16xf32>
    %c = graph.concat %a, %b {axis = 1 : i64, tc.in_place, tc.offsets = array<i64: 0>} : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x32xf32>
    %y = func.call @neg2(%c) {tc.offsets = array<i64: -1>} : (tensor<1x32xf32>) -> tensor<1x32xf32>
    func.return %y : tensor<1x32xf32>
  }
  func.func @neg(%p0: tensor<1x16xf32>) -> tensor<1x16xf32> {
    %n = te.compute "n" (%i: "i", %j: "j") -> tensor<1x16xf32> {
      %0 = te.read %p0[%i, %j] : tensor<1x16xf32>
      %1 = arith.negf %0 : f32
      te.yield %1 : f32
    }
    func.return %n : tensor<1x16xf32>
  }
  func.func @neg2(%p0: tensor<1x32xf32>) -> tensor<1x32xf32> {
    %n = te.compute "n" (%i: "i", %j: "j") -> tensor<1x32xf32> {
      %0 = te.read %p0[%i, %j] : tensor<1x32xf32>
      %1 = arith.negf %0 : f32
      te.yield %1 : f32
    }
    func.return %n : tensor<1x32xf32>
  }
}
