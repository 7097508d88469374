// RUN: tilecraft-opt %s --split-input-file -p inject-virtual-threads | filecheck %s

// Two threads, each loading its own weight block (the offset depends on the
// thread), then a loop computing from it: the buffers are made per thread, the
// loop is kept once and the threads' statements alternate inside it.
func.func @interleave(%W: memref<4x16xi8>, %O: memref<4x16xi8>) {
  %c2 = arith.constant 2 : index
  loop.for %t = 0 to 2 vthread {
    %b = loop.alloc "W.wgt" wgt_buffer : memref<2x16xi8>
    %row = arith.muli %t, %c2 : index
    loop.for %r = 0 to 2 {
      %src = arith.addi %row, %r : index
      loop.for %c = 0 to 16 {
        %v = memref.load %W[%src, %c] : memref<4x16xi8>
        memref.store %v, %b[%r, %c] : memref<2x16xi8>
      }
    }
    loop.for %k = 0 to 2 {
      %dst = arith.addi %row, %k : index
      loop.for %c = 0 to 16 {
        %v = memref.load %b[%k, %c] : memref<2x16xi8>
        memref.store %v, %O[%dst, %c] : memref<4x16xi8>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @interleave(
// CHECK-SAME:      %[[W:.*]]: memref<4x16xi8>, %[[O:.*]]: memref<4x16xi8>) {
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[T0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[T1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[B0:.*]] = loop.alloc "W.wgt.vt0" wgt_buffer {tc.vthread = 0 : i64} : memref<2x16xi8>
// CHECK-NEXT:    %[[B1:.*]] = loop.alloc "W.wgt.vt1" wgt_buffer {tc.vthread = 1 : i64} : memref<2x16xi8>
// CHECK-NEXT:    %[[ROW0:.*]] = arith.muli %[[T0]], %[[C2]] {tc.vthread = 0 : i64} : index
// CHECK-NEXT:    %[[ROW1:.*]] = arith.muli %[[T1]], %[[C2]] {tc.vthread = 1 : i64} : index
// CHECK-NEXT:    loop.for %[[R:.*]] = 0 to 2 {
// CHECK-NEXT:      %[[SRC0:.*]] = arith.addi %[[ROW0]], %[[R]] {tc.vthread = 0 : i64} : index
// CHECK-NEXT:      %[[SRC1:.*]] = arith.addi %[[ROW1]], %[[R]] {tc.vthread = 1 : i64} : index
// CHECK-NEXT:      loop.for %[[C:.*]] = 0 to 16 {
// CHECK-NEXT:        %[[V0:.*]] = memref.load %[[W]][%[[SRC0]], %[[C]]] {tc.vthread = 0 : i64}
// CHECK-NEXT:        %[[V1:.*]] = memref.load %[[W]][%[[SRC1]], %[[C]]] {tc.vthread = 1 : i64}
// CHECK-NEXT:        memref.store %[[V0]], %[[B0]][%[[R]], %[[C]]] {tc.vthread = 0 : i64}
// CHECK-NEXT:        memref.store %[[V1]], %[[B1]][%[[R]], %[[C]]] {tc.vthread = 1 : i64}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[K:.*]] = 0 to 2 {
// CHECK:             memref.load %[[B0]][%[[K]], %{{.*}}] {tc.vthread = 0 : i64}
// CHECK-NEXT:        memref.load %[[B1]][%[[K]], %{{.*}}] {tc.vthread = 1 : i64}
// CHECK-NOT:     to 2 vthread
// CHECK:         func.return

// -----

// What does not depend on the thread and has no effect is kept once; a guard
// on the thread is a statement of its own, copied per thread; effects that do
// not depend on the thread are still made once per thread (the serial loop
// made them once per iteration too).
func.func @shared(%A: memref<4xf32>, %x: f32) {
  loop.for %t = 0 to 2 vthread {
    %c1 = arith.constant 1 : index
    %first = arith.cmpi slt, %t, %c1 : index
    loop.guard %first {
      memref.store %x, %A[%t] : memref<4xf32>
    }
    memref.store %x, %A[%c1] : memref<4xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @shared(
// CHECK-NEXT:    %[[T0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[T1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[F0:.*]] = arith.cmpi slt, %[[T0]], %[[C1]] : index
// CHECK-NEXT:    %[[F1:.*]] = arith.cmpi slt, %[[T1]], %[[C1]] : index
// CHECK-NEXT:    loop.guard %[[F0]] {
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[T0]]] : memref<4xf32>
// CHECK-NEXT:    } {tc.vthread = 0 : i64}
// CHECK-NEXT:    loop.guard %[[F1]] {
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[T1]]] : memref<4xf32>
// CHECK-NEXT:    } {tc.vthread = 1 : i64}
// CHECK-NEXT:    memref.store %{{.*}}, %{{.*}}[%[[C1]]] {tc.vthread = 0 : i64}
// CHECK-NEXT:    memref.store %{{.*}}, %{{.*}}[%[[C1]]] {tc.vthread = 1 : i64}
// CHECK-NEXT:    func.return
