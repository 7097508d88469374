// RUN: tilecraft-opt %s --split-input-file -p loop-vectorize | filecheck %s

// Contiguous access becomes vector.load/store at the first lane's indices; a
// value that is the same in every lane stays a scalar and is broadcast where
// it meets a vector.
func.func @contiguous(%A: memref<4x16xf32>, %B: memref<4x16xf32>, %X: memref<f32>) {
  %x = memref.load %X[] : memref<f32>
  loop.for %i = 0 to 4 {
    loop.for %j = 0 to 16 vectorized {
      %a = memref.load %A[%i, %j] : memref<4x16xf32>
      %b = arith.mulf %a, %x : f32
      memref.store %b, %B[%i, %j] : memref<4x16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @contiguous(
// CHECK-SAME:      %[[A:.*]]: memref<4x16xf32>, %[[B:.*]]: memref<4x16xf32>, %{{.*}}: memref<f32>) {
// CHECK-NEXT:    %[[X:.*]] = memref.load
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[VA:.*]] = vector.load %[[A]][%[[I]], %[[C0]]] : memref<4x16xf32>, vector<16xf32>
// CHECK-NEXT:      %[[VX:.*]] = vector.broadcast %[[X]] : f32 to vector<16xf32>
// CHECK-NEXT:      %[[VB:.*]] = arith.mulf %[[VA]], %[[VX]] : vector<16xf32>
// CHECK-NEXT:      vector.store %[[VB]], %[[B]][%[[I]], %[[C0]]] : memref<4x16xf32>, vector<16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Longer than 4 registers' worth (100 x f64 > 32 lanes): a serial loop over
// three full 32-lane vectors, then a 4-lane vector for the remainder.
func.func @remainder(%A: memref<100xf64>) {
  loop.for %j = 0 to 100 vectorized {
    %a = memref.load %A[%j] : memref<100xf64>
    %n = arith.negf %a : f64
    memref.store %n, %A[%j] : memref<100xf64>
  }
  func.return
}

// CHECK-LABEL: func.func @remainder(
// CHECK-SAME:      %[[A:.*]]: memref<100xf64>) {
// CHECK-DAG:     %[[W:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C96:.*]] = arith.constant 96 : index
// CHECK:         loop.for %[[V:.*]] = 0 to 3 {
// CHECK-NEXT:      %[[J:.*]] = arith.muli %[[V]], %[[W]] : index
// CHECK-NEXT:      %[[X:.*]] = vector.load %[[A]][%[[J]]] : memref<100xf64>, vector<32xf64>
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[X]] : vector<32xf64>
// CHECK-NEXT:      vector.store %[[N]], %[[A]][%[[J]]] : memref<100xf64>, vector<32xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[XT:.*]] = vector.load %[[A]][%[[C96]]] : memref<100xf64>, vector<4xf64>
// CHECK-NEXT:    %[[NT:.*]] = arith.negf %[[XT]] : vector<4xf64>
// CHECK-NEXT:    vector.store %[[NT]], %[[A]][%[[C96]]] : memref<100xf64>, vector<4xf64>
// CHECK-NEXT:    func.return

// -----

// A tail that is not a power of two lanes is one vector of the next power of
// two, its lanes past the end masked off: 108 x f32 is one 64-lane vector, then
// a 64-lane vector with 44 active lanes (never a 44-lane vector, whose masked
// gathers LLVM's code generator takes minutes over). The guard's mask is
// combined with the tail's.
func.func @tail_powers_of_two(%A: memref<400xf32>, %B: memref<108xf32>) {
  %c3 = arith.constant 3 : index
  %c100 = arith.constant 100 : index
  loop.for %i = 0 to 108 vectorized {
    %in = arith.cmpi slt, %i, %c100 : index
    loop.guard %in {
      %j = arith.muli %i, %c3 : index
      %a = memref.load %A[%j] : memref<400xf32>
      memref.store %a, %B[%i] : memref<108xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @tail_powers_of_two(
// CHECK:         %[[TAIL:.*]] = arith.constant dense<[{{(true, ){44}false}}, {{(false, ){18}false}}]> : vector<64xi1>
// CHECK:         loop.for %{{.*}} = 0 to 1 {
// CHECK:           loop.gather {{.*}} -> vector<64xf32>
// CHECK:         }
// CHECK:         %[[GUARD:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : vector<64xi64>
// CHECK-NEXT:    %[[MASK:.*]] = arith.andi %[[TAIL]], %[[GUARD]] : vector<64xi1>
// CHECK:         %[[V:.*]] = loop.gather %A[%{{.*}}], %[[MASK]] : memref<400xf32>, vector<64xi64>, vector<64xi1> -> vector<64xf32>
// CHECK-NEXT:    vector.maskedstore %B[%{{.*}}], %[[MASK]], %[[V]] : memref<108xf32>, vector<64xi1>, vector<64xf32>
// CHECK-NOT:     vector<44
// CHECK:         func.return

// -----

// Loops inside the vectorized one run serially, with a uniform variable; an
// unrolled one stays unrolled (LLVM or loop-unroll unrolls it after this pass).
func.func @inner_loops(%A: memref<4x16xf32>, %B: memref<16xf32>) {
  loop.for %j = 0 to 16 vectorized {
    loop.for %k = 0 to 2 unrolled {
      %a = memref.load %A[%k, %j] : memref<4x16xf32>
      memref.store %a, %B[%j] : memref<16xf32>
    }
    loop.for %k = 2 to 4 parallel {
      %a = memref.load %A[%k, %j] : memref<4x16xf32>
      memref.store %a, %B[%j] : memref<16xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @inner_loops(
// CHECK:         loop.for %[[K:.*]] = 0 to 2 unrolled {
// CHECK-NEXT:      %[[V:.*]] = vector.load %{{.*}}[%[[K]], %{{.*}}] : memref<4x16xf32>, vector<16xf32>
// CHECK-NEXT:      vector.store %[[V]], %{{.*}}[%{{.*}}] : memref<16xf32>, vector<16xf32>
// CHECK:         loop.for %[[K2:.*]] = 2 to 4 {
// CHECK-NEXT:      %[[W:.*]] = vector.load %{{.*}}[%[[K2]], %{{.*}}] : memref<4x16xf32>, vector<16xf32>

// -----

// A whole loop of 7 lanes: one 8-lane vector, the last lane masked off.
func.func @tail_masked(%A: memref<7xf32>) {
  loop.for %i = 0 to 7 vectorized {
    %a = memref.load %A[%i] : memref<7xf32>
    %n = arith.negf %a : f32
    memref.store %n, %A[%i] : memref<7xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @tail_masked(
// CHECK:         %[[M:.*]] = arith.constant dense<[true, true, true, true, true, true, true, false]> : vector<8xi1>
// CHECK:         %[[A:.*]] = vector.maskedload %{{.*}}[%{{.*}}], %[[M]], %{{.*}} : memref<7xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NEXT:    %[[N:.*]] = arith.negf %[[A]] : vector<8xf32>
// CHECK-NEXT:    vector.maskedstore %{{.*}}[%{{.*}}], %[[M]], %[[N]] : memref<7xf32>, vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    func.return

// -----

// A guard that varies across lanes becomes a mask (lane index < 100, the lane
// index being io * 16 + <0..15> in i64 lanes); access under it is masked. The
// store to B[i, 0] has stride 2 between lanes: a scatter at flat offsets
// 2 * (io * 16) + <0, 2, ..., 30>.
func.func @masked(%A: memref<100xf32>, %B: memref<100x2xf32>) {
  loop.for %io = 0 to 7 {
    loop.for %ii = 0 to 16 vectorized {
      %c16 = arith.constant 16 : index
      %t = arith.muli %io, %c16 : index
      %i = arith.addi %t, %ii : index
      %c100 = arith.constant 100 : index
      %in = arith.cmpi slt, %i, %c100 : index
      loop.guard %in {
        %a = memref.load %A[%i] : memref<100xf32>
        %c0 = arith.constant 0 : index
        memref.store %a, %B[%i, %c0] : memref<100x2xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @masked(
// CHECK-SAME:      %[[A:.*]]: memref<100xf32>, %[[B:.*]]: memref<100x2xf32>) {
// CHECK:         loop.for %[[IO:.*]] = 0 to 7 {
// CHECK-DAG:       %[[IOTA:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xi64>
// CHECK-DAG:       %[[HUNDRED:.*]] = arith.constant dense<100> : vector<16xi64>
// CHECK-DAG:       %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-DAG:       %[[STRIDE2:.*]] = arith.constant dense<[0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]> : vector<16xi64>
// CHECK:           %[[T:.*]] = arith.muli %[[IO]], %{{.*}} : index
// CHECK:           %[[T64:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK-NEXT:      %[[TS:.*]] = vector.broadcast %[[T64]] : i64 to vector<16xi64>
// CHECK-NEXT:      %[[LANES:.*]] = arith.addi %[[TS]], %[[IOTA]] : vector<16xi64>
// CHECK-NEXT:      %[[MASK:.*]] = llvm.icmp "slt" %[[LANES]], %[[HUNDRED]] : vector<16xi64>
// CHECK-NEXT:      %[[V:.*]] = vector.maskedload %[[A]][%[[T]]], %[[MASK]], %[[ZERO]] : memref<100xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:           %[[ROW:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK-NEXT:      %[[ROW64:.*]] = arith.index_cast %[[ROW]] : index to i64
// CHECK-NEXT:      %[[RS:.*]] = vector.broadcast %[[ROW64]] : i64 to vector<16xi64>
// CHECK-NEXT:      %[[OFFSETS:.*]] = arith.addi %[[RS]], %[[STRIDE2]] : vector<16xi64>
// CHECK-NEXT:      loop.scatter %[[V]], %[[B]][%[[OFFSETS]]], %[[MASK]] : vector<16xf32>, memref<100x2xf32>, vector<16xi64>, vector<16xi1>
// CHECK-NEXT:    }
// CHECK-NOT:     loop.guard

// -----

// A uniform address under a mask (x[k] of a GEMV whose last column tile is
// guarded) is one scalar load when any lane is active, broadcast where it meets
// the lanes: not a gather of one element into every lane.
func.func @uniform_under_mask(%X: memref<8xf32>, %W: memref<8x100xf32>, %Y: memref<100xf32>) {
  loop.for %k = 0 to 8 {
    loop.for %j = 96 to 112 vectorized {
      %c100 = arith.constant 100 : index
      %in = arith.cmpi slt, %j, %c100 : index
      loop.guard %in {
        %x = memref.load %X[%k] : memref<8xf32>
        %w = memref.load %W[%k, %j] : memref<8x100xf32>
        %p = arith.mulf %x, %w : f32
        memref.store %p, %Y[%j] : memref<100xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @uniform_under_mask(
// CHECK-SAME:      %[[X:.*]]: memref<8xf32>, %[[W:.*]]: memref<8x100xf32>, %[[Y:.*]]: memref<100xf32>) {
// CHECK-NEXT:    loop.for %[[K:.*]] = 0 to 8 {
// CHECK-DAG:       %[[NONE:.*]] = arith.constant 0 : i16
// CHECK-DAG:       %[[FZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[MASK:.*]] = llvm.icmp "slt"
// CHECK-NEXT:      %[[BITS:.*]] = llvm.bitcast %[[MASK]] : vector<16xi1> to i16
// CHECK-NEXT:      %[[ANY:.*]] = arith.cmpi ne, %[[BITS]], %[[NONE]] : i16
// CHECK-NEXT:      %[[XK:.*]] = scf.if %[[ANY]] -> (f32) {
// CHECK-NEXT:        %[[L:.*]] = memref.load %[[X]][%[[K]]] : memref<8xf32>
// CHECK-NEXT:        scf.yield %[[L]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[FZERO]] : f32
// CHECK-NEXT:      }
// CHECK:           vector.maskedload %[[W]]
// CHECK:           vector.broadcast %[[XK]] : f32 to vector<16xf32>
// CHECK-NOT:       loop.gather
// CHECK:           vector.maskedstore %[[Y]]

// -----

// A uniform guard stays a guard around vector code; scf.if on a lane-varying
// condition computes both sides and selects; a gather reads A[j, i] (stride 8).
// An integer division under a mask divides the inactive lanes by one.
func.func @conditions(%A: memref<8x8xf32>, %U: memref<1xi1>, %N: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %u = memref.load %U[%c0] : memref<1xi1>
  loop.for %j = 0 to 8 vectorized {
    loop.guard %u {
      %a = memref.load %A[%j, %c0] : memref<8x8xf32>
      %z = arith.constant 0.0 : f32
      %pos = arith.cmpf ogt, %a, %z : f32
      %r = scf.if %pos -> (f32) {
        scf.yield %a : f32
      } else {
        %n = arith.negf %a : f32
        scf.yield %n : f32
      }
      memref.store %r, %A[%j, %c0] : memref<8x8xf32>
    }
    %c4 = arith.constant 4 : index
    %low = arith.cmpi slt, %j, %c4 : index
    loop.guard %low {
      %n = memref.load %N[%j] : memref<8xi32>
      %q = arith.divsi %n, %n : i32
      memref.store %q, %N[%j] : memref<8xi32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @conditions(
// CHECK-SAME:      %[[A:.*]]: memref<8x8xf32>, %{{.*}}: memref<1xi1>, %[[N:.*]]: memref<8xi32>) {
// CHECK:         %[[U:.*]] = memref.load
// CHECK-DAG:     %[[STRIDES:.*]] = arith.constant dense<[0, 8, 16, 24, 32, 40, 48, 56]> : vector<8xi64>
// CHECK-DAG:     %[[ALL:.*]] = arith.constant dense<true> : vector<8xi1>
// CHECK-DAG:     %[[ONES:.*]] = arith.constant dense<1> : vector<8xi32>
// CHECK:         loop.guard %[[U]] {
// CHECK-NEXT:      %[[V:.*]] = loop.gather %[[A]][%[[STRIDES]]], %[[ALL]] : memref<8x8xf32>, vector<8xi64>, vector<8xi1> -> vector<8xf32>
// CHECK:           %[[POS:.*]] = llvmx.fcmp "ogt" %[[V]], %{{.*}} : vector<8xf32> -> vector<8xi1>
// CHECK:           %[[NEG:.*]] = arith.negf %[[V]] : vector<8xf32>
// CHECK-NEXT:      %[[R:.*]] = llvmx.select %[[POS]], %[[V]], %[[NEG]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:      loop.scatter %[[R]], %[[A]][%[[STRIDES]]], %[[ALL]]
// CHECK-NEXT:    }
// CHECK:         %[[LOW:.*]] = llvm.icmp "slt"
// CHECK-NEXT:    %[[VN:.*]] = vector.maskedload %[[N]]
// CHECK-NEXT:    %[[SAFE:.*]] = llvmx.select %[[LOW]], %[[VN]], %[[ONES]] : vector<8xi1>, vector<8xi32>
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %[[VN]], %[[SAFE]] : vector<8xi32>
// CHECK-NEXT:    vector.maskedstore %[[N]][%{{.*}}], %[[LOW]], %[[Q]]

// -----

// Lanes that are not independent: a store to one address from every lane (a
// reduction into S[0]) and a buffer allocated per iteration. Such loops are
// made serial (LLVM may still vectorize them), not vectorized.
func.func @serial(%A: memref<32xf32>, %S: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  loop.for %k = 0 to 32 vectorized {
    %s = memref.load %S[%c0] : memref<1xf32>
    %a = memref.load %A[%k] : memref<32xf32>
    %t = arith.addf %s, %a : f32
    memref.store %t, %S[%c0] : memref<1xf32>
  }
  loop.for %k = 0 to 32 vectorized {
    %L = loop.alloc "L" local : memref<1xf32>
    %a = memref.load %A[%k] : memref<32xf32>
    memref.store %a, %L[%c0] : memref<1xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @serial(
// CHECK:         loop.for %{{.*}} = 0 to 32 {
// CHECK-NEXT:      memref.load
// CHECK:         loop.for %{{.*}} = 0 to 32 {
// CHECK-NEXT:      loop.alloc
// CHECK-NOT:     vector

// -----

// A check that varies across lanes: one scalar check that no lane fails, the
// failing lanes' bits read as one integer (under a tail or guard mask, only the
// active lanes count).
func.func @check_all_lanes(%A: memref<7xi32>) {
  %c4 = arith.constant 4 : i32
  loop.for %i = 0 to 7 vectorized {
    %a = memref.load %A[%i] : memref<7xi32>
    %ok = arith.cmpi slt, %a, %c4 : i32
    loop.assert %ok, "too big"
  }
  func.return
}

// CHECK-LABEL: func.func @check_all_lanes(
// CHECK-DAG:     %[[TAIL:.*]] = arith.constant dense<[true, true, true, true, true, true, true, false]> : vector<8xi1>
// CHECK-DAG:     %[[TRUE:.*]] = arith.constant dense<true> : vector<8xi1>
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK:         %[[OK:.*]] = llvm.icmp "slt" %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK-NEXT:    %[[NOT:.*]] = arith.xori %[[OK]], %[[TRUE]] : vector<8xi1>
// CHECK-NEXT:    %[[FAILED:.*]] = arith.andi %[[NOT]], %[[TAIL]] : vector<8xi1>
// CHECK-NEXT:    %[[BITS:.*]] = llvm.bitcast %[[FAILED]] : vector<8xi1> to i8
// CHECK-NEXT:    %[[NONE:.*]] = arith.cmpi eq, %[[BITS]], %[[ZERO]] : i8
// CHECK-NEXT:    loop.assert %[[NONE]], "too big"

// -----

// Buffers with sizes known only when it runs: lanes along the last axis (stride
// 1 whatever the sizes) load a vector; lanes of a gather take the strides of
// the axes before from `memref.dim`; lanes that step through an axis followed
// by a `?` (a stride known only when it runs) stay serial.
func.func @dynamic_strides(%A: memref<?x?xf32>, %B: memref<?x8xf32>, %m: index) {
  %c2 = arith.constant 2 : index
  loop.for %i = 0 to %m {
    loop.for %j = 0 to 8 vectorized {
      %a = memref.load %A[%i, %j] : memref<?x?xf32>
      memref.store %a, %B[%i, %j] : memref<?x8xf32>
    }
    loop.for %j = 0 to 8 vectorized {
      %jj = arith.muli %j, %c2 : index
      %a = memref.load %A[%i, %jj] : memref<?x?xf32>
      memref.store %a, %B[%i, %j] : memref<?x8xf32>
    }
    loop.for %j = 0 to 8 vectorized {
      %a = memref.load %A[%j, %i] : memref<?x?xf32>
      memref.store %a, %B[%i, %j] : memref<?x8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @dynamic_strides(
// CHECK:         %{{.*}} = vector.load %A[%i, %{{.*}}] : memref<?x?xf32>, vector<8xf32>
// CHECK:         %[[N:.*]] = memref.dim %A, %{{.*}} : memref<?x?xf32>
// CHECK:         %[[ROW:.*]] = arith.muli %i, %[[N]] : index
// CHECK:         loop.gather %A
// CHECK:         loop.for %{{.*}} = 0 to 8 {
// CHECK-NEXT:      memref.load %A[%{{.*}}, %i] : memref<?x?xf32>
