// RUN: tilecraft-opt %s -p loop-to-llvm | filecheck %s

// A memref with `?` sizes is passed as its pointer followed by one i64 per `?`
// (a compact descriptor): `memref.dim` reads them, and a trailing `?` size makes
// the strides products of sizes. No `dereferenceable`: the size is known only
// when the function is called. `tc.dims` names the sizes (equal names: the
// caller checks equal sizes).
func.func @square(%A: memref<4x?xf32> {tc.name = "A", tc.dims = ["n"]},
                  %B: memref<4x?xf32> {tc.name = "B", tc.dims = ["n"]}) {
  %c1 = arith.constant 1 : index
  %n = memref.dim %A, %c1 : memref<4x?xf32>
  loop.for %i = 0 to 4 {
    loop.for %j = 0 to %n {
      %a = memref.load %A[%i, %j] : memref<4x?xf32>
      %b = arith.mulf %a, %a : f32
      memref.store %b, %B[%i, %j] : memref<4x?xf32>
    }
  }
  func.return
}

// CHECK:      llvm.func @square(%A: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.align = 4 : i64, tc.name = "A", tc.dims = ["n"]}, %A_size0: i64,
// CHECK-SAME:                   %B: !llvm.ptr {{{.*}}}, %B_size0: i64)
// CHECK-NOT:  dereferenceable
// CHECK:      llvm.icmp "slt" %{{.*}}, %A_size0 : i64
// CHECK:      %[[ROW:.*]] = llvm.mul %i, %A_size0 overflow<nsw> : i64
// CHECK-NEXT: %[[AT:.*]] = llvm.add %[[ROW]], %j overflow<nsw> : i64
// CHECK-NEXT: llvm.getelementptr inbounds %A[%[[AT]]]
// CHECK:      llvm.mul %i, %B_size0 overflow<nsw> : i64

// A leading `?` leaves the strides static; a call passes each memref's sizes
// after its pointer.
func.func @main(%X: memref<?x8xf32> {tc.dims = ["batch"]}, %Y: memref<?x8xf32> {tc.dims = ["batch"]}) {
  func.call @copy(%X, %Y) : (memref<?x8xf32>, memref<?x8xf32>) -> ()
  func.return
}

func.func private @copy(%A: memref<?x8xf32>, %B: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %A, %c0 : memref<?x8xf32>
  loop.for %i = 0 to %m {
    loop.for %j = 0 to 8 {
      %a = memref.load %A[%i, %j] : memref<?x8xf32>
      memref.store %a, %B[%i, %j] : memref<?x8xf32>
    }
  }
  func.return
}

// CHECK:      llvm.call @copy(%X, %X_size0, %Y, %Y_size0) : (!llvm.ptr, i64, !llvm.ptr, i64) -> ()
// CHECK:      llvm.func internal @copy(%A_1: !llvm.ptr {{{.*}}}, %A_size0_1: i64, %B_1: !llvm.ptr {{{.*}}}, %B_size0_1: i64)
// CHECK:      llvm.mul %i_1, %[[EIGHT:.*]] overflow<nsw> : i64

// A parallel loop over a buffer with a `?` size: the launch's context holds
// the size after the pointer, and the outlined body takes both (the loop's
// work is not known, so the thread count is given).
func.func @scale(%A: memref<?x64xf32> {tc.dims = ["m"]}) {
  loop.for %j = 0 to 64 parallel {
    %c0 = arith.constant 0 : index
    %m = memref.dim %A, %c0 : memref<?x64xf32>
    loop.for %i = 0 to %m {
      %a = memref.load %A[%i, %j] : memref<?x64xf32>
      %b = arith.addf %a, %a : f32
      memref.store %b, %A[%i, %j] : memref<?x64xf32>
    }
  } {tc.max_threads = 4 : i64}
  func.return
}

// CHECK:       llvm.func internal @scale_parallel0_task(
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:         llvm.call @scale_parallel0(
// CHECK:       llvm.func internal @scale_parallel0(%{{.*}}: !llvm.ptr {{{.*}}}, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)

// A buffer with a `?` size comes from the heap: its bytes are the size times the
// static part, rounded up to the alignment; it is freed at the end of its block,
// and its accesses use its size as a stride.
func.func @scratch(%A: memref<?x4xf32> {tc.dims = ["m"]}) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %A, %c0 : memref<?x4xf32>
  %T = loop.alloc "T" local(%m) : memref<4x?xf32>
  loop.for %i = 0 to %m {
    %c1 = arith.constant 1 : index
    %a = memref.load %A[%i, %c1] : memref<?x4xf32>
    memref.store %a, %T[%c1, %i] : memref<4x?xf32>
  }
  func.return
}

// CHECK:      llvm.func @scratch(%{{.*}}: !llvm.ptr {{{.*}}}, %[[M:A_size0_[0-9]+]]: i64)
// CHECK:        %[[BYTES:.*]] = llvm.mul %{{.*}}, %[[M]] overflow<nsw> : i64
// CHECK-NEXT:   %[[PADDED:.*]] = llvm.add %[[BYTES]], %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:   %[[LINES:.*]] = llvm.udiv %[[PADDED]], %{{.*}} : i64
// CHECK-NEXT:   %[[ROUNDED:.*]] = llvm.mul %[[LINES]], %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:   %[[T:.*]] = llvm.call @aligned_alloc(%{{.*}}, %[[ROUNDED]])
// CHECK:        %[[AT:.*]] = llvm.add %[[M]], %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:   llvm.getelementptr inbounds %[[T]][%[[AT]]]
// CHECK:        llvm.call @free(%[[T]])
