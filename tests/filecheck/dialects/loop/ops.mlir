// Every loop op in its custom syntax: printed, parsed again, printed identically.
// RUN: tilecraft-opt %s --split-input-file -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir --split-input-file | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir
// The generic form shows the implicit loop.yield terminators; they disappear
// again in the custom form.
// RUN: %generic-roundtrip

// The four loop kinds; "serial" is the default and is not printed.
func.func @kinds(%A: memref<8x16xf32>) {
  loop.for %i = 0 to 8 parallel {
    loop.for %j = 0 to 16 vectorized {
      %a = memref.load %A[%i, %j] : memref<8x16xf32>
      %d = arith.addf %a, %a : f32
      memref.store %d, %A[%i, %j] : memref<8x16xf32>
    }
  }
  loop.for %i = 0 to 4 serial {
    loop.for %j = 0 to 2 unrolled {
    }
  }
  func.return
}

// CHECK-LABEL: func.func @kinds(
// CHECK-SAME:      %[[A:.*]]: memref<8x16xf32>) {
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 8 parallel {
// CHECK-NEXT:      loop.for %[[J:.*]] = 0 to 16 vectorized {
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[A]][%[[I]], %[[J]]] : memref<8x16xf32>
// CHECK-NEXT:        %[[D:.*]] = arith.addf %[[V]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[D]], %[[A]][%[[I]], %[[J]]] : memref<8x16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %{{.*}} = 0 to 4 {
// CHECK-NEXT:      loop.for %{{.*}} = 0 to 2 unrolled {
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// A split that does not divide its extent: the tail is guarded.
func.func @guarded(%A: memref<100xf32>, %B: memref<100xf32>) {
  loop.for %io = 0 to 7 parallel {
    loop.for %ii = 0 to 16 {
      %c16 = arith.constant 16 : index
      %t = arith.muli %io, %c16 : index
      %i = arith.addi %t, %ii : index
      %c100 = arith.constant 100 : index
      %in = arith.cmpi slt, %i, %c100 : index
      loop.guard %in {
        %a = memref.load %A[%i] : memref<100xf32>
        memref.store %a, %B[%i] : memref<100xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @guarded(
// CHECK-SAME:      %[[A:.*]]: memref<100xf32>, %[[B:.*]]: memref<100xf32>) {
// CHECK-NEXT:    loop.for %[[IO:.*]] = 0 to 7 parallel {
// CHECK-NEXT:      loop.for %[[II:.*]] = 0 to 16 {
// CHECK-NEXT:        %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:        %[[T:.*]] = arith.muli %[[IO]], %[[C16]] : index
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[T]], %[[II]] : index
// CHECK-NEXT:        %[[C100:.*]] = arith.constant 100 : index
// CHECK-NEXT:        %[[IN:.*]] = arith.cmpi slt, %[[I]], %[[C100]] : index
// CHECK-NEXT:        loop.guard %[[IN]] {
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[A]][%[[I]]] : memref<100xf32>
// CHECK-NEXT:          memref.store %[[V]], %[[B]][%[[I]]] : memref<100xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Buffers in each scope, a loop that does not start at 0, an empty loop.
func.func @buffers(%A: memref<4x4xf32>) {
  %G = loop.alloc "G" global : memref<1024xf32>
  %S = loop.alloc "S.shared" shared : memref<4x4xf32>
  loop.for %i = 1 to 4 {
    %L = loop.alloc "A.local" local : memref<4xi8>
    %c0 = arith.constant 0 : index
    %v = memref.load %L[%c0] : memref<4xi8>
    memref.store %v, %L[%i] : memref<4xi8>
  }
  loop.for %i = 3 to 3 {
  }
  func.return
}

// CHECK-LABEL: func.func @buffers(
// CHECK-NEXT:    %{{.*}} = loop.alloc "G" global : memref<1024xf32>
// CHECK-NEXT:    %{{.*}} = loop.alloc "S.shared" shared : memref<4x4xf32>
// CHECK-NEXT:    loop.for %[[I:.*]] = 1 to 4 {
// CHECK-NEXT:      %[[L:.*]] = loop.alloc "A.local" local : memref<4xi8>
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[L]][%[[C0]]] : memref<4xi8>
// CHECK-NEXT:      memref.store %[[V]], %[[L]][%[[I]]] : memref<4xi8>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %{{.*}} = 3 to 3 {
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Discardable attributes on every op; an explicit terminator is accepted
// and printed implicitly.
func.func @attributes(%c: i1) {
  loop.for %i = 0 to 2 vectorized {
    loop.guard %c {
      %B = loop.alloc "B" local {align = 64 : i64} : memref<2xf32>
      loop.yield
    } {tag}
    loop.yield
  } {note = "x"}
  func.return
}

// CHECK-LABEL: func.func @attributes(
// CHECK-SAME:      %[[COND:.*]]: i1) {
// CHECK-NEXT:    loop.for %{{.*}} = 0 to 2 vectorized {
// CHECK-NEXT:      loop.guard %[[COND]] {
// CHECK-NEXT:        %{{.*}} = loop.alloc "B" local {align = 64 : i64} : memref<2xf32>
// CHECK-NEXT:      } {tag}
// CHECK-NEXT:    } {note = "x"}
// CHECK-NEXT:    func.return

// -----

// A typed buffer at a byte offset of an arena (a memory plan's shared buffer).
// CHECK-LABEL: func.func @view
// CHECK:         %arena = loop.alloc "arena" global : memref<1024xi8>
// CHECK-NEXT:    %a = loop.view %arena[0] : memref<1024xi8> to memref<8x16xf32>
// CHECK-NEXT:    %b = loop.view %arena[512] : memref<1024xi8> to memref<128xi32>
func.func @view() {
  %arena = loop.alloc "arena" global : memref<1024xi8>
  %a = loop.view %arena[0] : memref<1024xi8> to memref<8x16xf32>
  %b = loop.view %arena[512] : memref<1024xi8> to memref<128xi32>
  func.return
}

// -----

// A launch of an outlined body: its arguments, then the chunk [begin, end).
func.func private @body(%A: memref<64xf32>, %x: f32, %begin: index, %end: index) {
  func.return
}
func.func @launch(%A: memref<64xf32>, %x: f32) {
  loop.launch @body(%A, %x) 0 to 64 : memref<64xf32>, f32
  func.return
}

// CHECK-LABEL: func.func @launch(
// CHECK-SAME:      %[[A:.*]]: memref<64xf32>, %[[X:.*]]: f32) {
// CHECK-NEXT:    loop.launch @body(%[[A]], %[[X]]) 0 to 64 : memref<64xf32>, f32
// CHECK-NEXT:    func.return

// -----

// A launch to a bound known when it runs (here a buffer's `?` size), with what
// an iteration costs: the launch caps its threads from the extent it gets.
func.func private @rows(%A: memref<?x8xf32>, %begin: index, %end: index) {
  func.return
}
func.func @launch_dynamic(%A: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %A, %c0 : memref<?x8xf32>
  loop.launch @rows(%A) 0 to %n {tc.iteration_cost = 0.25 : f64} : memref<?x8xf32>
  func.return
}

// CHECK-LABEL: func.func @launch_dynamic(
// CHECK:         %[[N:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @rows(%{{.*}}) 0 to %[[N]] {tc.iteration_cost = 2.500000e-01 : f64} : memref<?x8xf32>

// -----

// A run-time check: where %ok is false the call fails with the message.
func.func @check(%A: memref<8xi32>) {
  %c4 = arith.constant 4 : i32
  loop.for %i = 0 to 8 {
    %a = memref.load %A[%i] : memref<8xi32>
    %ok = arith.cmpi slt, %a, %c4 : i32
    loop.assert %ok, "an index is out of range"
  }
  func.return
}

// CHECK-LABEL: func.func @check(
// CHECK:         %[[OK:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    loop.assert %[[OK]], "an index is out of range"

// -----

// A buffer with a `?` size: one index operand per `?`.
func.func @alloc_dynamic(%A: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %A, %c0 : memref<?x8xf32>
  %B = loop.alloc "B" global(%n) : memref<?x8xf32>
  func.return
}

// CHECK-LABEL: func.func @alloc_dynamic(
// CHECK:         %B = loop.alloc "B" global(%n) : memref<?x8xf32>
