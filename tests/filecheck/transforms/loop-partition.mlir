// RUN: tilecraft-opt %s --split-input-file -p loop-partition | filecheck %s
// RUN: tilecraft-opt %s --split-input-file -p 'loop-partition{residues=true}' | filecheck %s --check-prefix=RES

// A split's tail: 30 columns in vectors of 8. The guard holds for every lane
// while jo < 3, so a serial loop becomes jo in [0, 3) without the guard and
// jo = 3 with it.
func.func @tail(%A: memref<30xf32>, %x: f32) {
  %c8 = arith.constant 8 : index
  %c30 = arith.constant 30 : index
  loop.for %jo = 0 to 4 {
    %base = arith.muli %jo, %c8 : index
    loop.for %ji = 0 to 8 vectorized {
      %j = arith.addi %base, %ji : index
      %ok = arith.cmpi slt, %j, %c30 : index
      loop.guard %ok {
        memref.store %x, %A[%j] : memref<30xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @tail(
// CHECK:         loop.for %[[JO:.*]] = 0 to 3 {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[JO]], %{{.*}} : index
// CHECK-NEXT:      loop.for %[[JI:.*]] = 0 to 8 vectorized {
// CHECK-NEXT:        %[[J:.*]] = arith.addi %[[BASE]], %[[JI]] : index
// CHECK-NEXT:        memref.store %{{.*}}, %{{.*}}[%[[J]]] : memref<30xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %{{.*}} = 3 to 4 {
// CHECK:             %[[OK:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:        loop.guard %[[OK]] {
// CHECK-NEXT:          memref.store
// CHECK:         func.return

// -----

// A parallel loop keeps its one launch: its body branches between a copy
// without the guards (1 <= i < 6 here: the head guard `i - 1 >= 0` and the tail
// guard `i + 1 <= 6` of a 3-point stencil) and the original body.
func.func @stencil(%A: memref<8xf32>, %B: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  loop.for %i = 0 to 8 parallel {
    %im = arith.subi %i, %c1 : index
    %ip = arith.addi %i, %c1 : index
    %lo = arith.cmpi sge, %im, %c0 : index
    %hi = arith.cmpi sle, %ip, %c6 : index
    %ok = arith.andi %lo, %hi : i1
    loop.guard %ok {
      %a = memref.load %A[%im] : memref<8xf32>
      memref.store %a, %B[%i] : memref<8xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @stencil(
// CHECK:         loop.for %[[I:.*]] = 0 to 8 parallel {
// CHECK:           %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[GE:.*]] = arith.cmpi sge, %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[LT1:.*]] = arith.cmpi slt, %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[C6:.*]] = arith.constant 6 : index
// CHECK-NEXT:      %[[LT6:.*]] = arith.cmpi slt, %[[I]], %[[C6]] : index
// CHECK-NEXT:      %[[GE6:.*]] = arith.cmpi sge, %[[I]], %[[C6]] : index
// CHECK-NEXT:      %[[IN:.*]] = arith.andi %[[GE]], %[[LT6]] : i1
// CHECK-NEXT:      %[[OUT:.*]] = arith.ori %[[LT1]], %[[GE6]] : i1
// CHECK-NEXT:      loop.guard %[[IN]] {
// CHECK-NEXT:        %[[IM:.*]] = arith.subi %[[I]], %{{.*}} : index
// CHECK-NEXT:        %{{.*}} = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT:        %[[A:.*]] = memref.load %{{.*}}[%[[IM]]] : memref<8xf32>
// CHECK-NEXT:        memref.store %[[A]], %{{.*}}[%[[I]]] : memref<8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.guard %[[OUT]] {
// CHECK:             %[[OK:.*]] = arith.andi
// CHECK-NEXT:        loop.guard %[[OK]] {

// -----

// The guard belongs to the outermost loop it depends on (%o); the inner
// unrolled %u ranges over its bounds: o * 4 + u < 10 holds for every u while
// o < 2. A guard that holds on every iteration is inlined in place.
func.func @owner(%A: memref<12xf32>, %x: f32) {
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %c100 = arith.constant 100 : index
  loop.for %o = 0 to 3 {
    %base = arith.muli %c4, %o : index
    loop.for %u = 0 to 4 unrolled {
      %j = arith.addi %base, %u : index
      %ok = arith.cmpi slt, %j, %c10 : index
      loop.guard %ok {
        memref.store %x, %A[%j] : memref<12xf32>
      }
      %always = arith.cmpi sgt, %c100, %j : index
      loop.guard %always {
        memref.store %x, %A[%u] : memref<12xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @owner(
// CHECK:         loop.for %{{.*}} = 0 to 2 {
// CHECK-NOT:       loop.guard
// CHECK:         loop.for %{{.*}} = 2 to 3 {
// CHECK:             %[[OK:.*]] = arith.cmpi slt
// CHECK-NEXT:        loop.guard %[[OK]] {
// CHECK-NEXT:          memref.store
// CHECK-NEXT:        }
// CHECK-NEXT:        memref.store
// CHECK-NOT:     loop.guard
// CHECK:         func.return

// -----

// A 2-D tiling of 13 x 37 by 4 x 16: the guard `i < 13 and j < 37` splits the
// row loop (its conjunct i < 13), then each piece's column loop (j < 37): whole
// tiles run with no guard, the column edge tests only j, the row edge only i.
func.func @tiles(%A: memref<13x37xf32>, %x: f32) {
  %c4 = arith.constant 4 : index
  %c13 = arith.constant 13 : index
  %c16 = arith.constant 16 : index
  %c37 = arith.constant 37 : index
  loop.for %io = 0 to 4 {
    %ib = arith.muli %io, %c4 : index
    loop.for %jo = 0 to 3 {
      %jb = arith.muli %jo, %c16 : index
      loop.for %ii = 0 to 4 {
        %i = arith.addi %ib, %ii : index
        loop.for %ji = 0 to 16 vectorized {
          %j = arith.addi %jb, %ji : index
          %ri = arith.cmpi slt, %i, %c13 : index
          %rj = arith.cmpi slt, %j, %c37 : index
          %ok = arith.andi %ri, %rj : i1
          loop.guard %ok {
            memref.store %x, %A[%i, %j] : memref<13x37xf32>
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @tiles(
// CHECK:         loop.for %{{.*}} = 0 to 3 {
// CHECK:           loop.for %{{.*}} = 0 to 2 {
// CHECK-NOT:         loop.guard
// CHECK:           loop.for %{{.*}} = 2 to 3 {
// CHECK:               %[[J:.*]] = arith.cmpi slt, %{{.*}}, %c37 : index
// CHECK-NEXT:          loop.guard %[[J]] {
// CHECK:         loop.for %{{.*}} = 3 to 4 {
// CHECK:           loop.for %{{.*}} = 0 to 2 {
// CHECK:                 %[[I:.*]] = arith.cmpi slt, %{{.*}}, %c13 : index
// CHECK-NEXT:            loop.guard %[[I]] {
// CHECK:           loop.for %{{.*}} = 2 to 3 {
// CHECK:                 arith.andi
// CHECK:         func.return

// -----

// A loop whose bound is known only when the program runs is left alone, with
// its guard: where the guard holds depends on %n.
func.func @dynamic(%A: memref<64xf32>, %n: index) {
  loop.for %i = 0 to %n {
    %c30 = arith.constant 30 : index
    %ok = arith.cmpi slt, %i, %c30 : index
    loop.guard %ok {
      %z = arith.constant 0.0 : f32
      memref.store %z, %A[%i] : memref<64xf32>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @dynamic(
// CHECK-NEXT:    loop.for %i = 0 to %n {
// CHECK:           loop.guard %ok {
// CHECK-NOT:     loop.for

// -----

// A split of a size known when the function runs: `io * 8 + ii < %n` holds for
// every lane while io < floordiv(%n - 8, 8) + 1 (the whole tiles), computed
// once before the loop; the parallel loop keeps one launch and branches per
// tile between a copy without the guard and the original.
func.func @split_of_a_size(%A: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %A, %c0 : memref<?xf32>
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %up = arith.addi %n, %c7 : index
  %tiles = arith.floordivsi %up, %c8 : index
  loop.for %io = 0 to %tiles parallel {
    loop.for %ii = 0 to 8 vectorized {
      %base = arith.muli %io, %c8 : index
      %i = arith.addi %base, %ii : index
      %ok = arith.cmpi slt, %i, %n : index
      loop.guard %ok {
        %z = arith.constant 0.0 : f32
        memref.store %z, %A[%i] : memref<?xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @split_of_a_size(
// CHECK:         %[[MINUS8:.*]] = arith.constant -8 : index
// CHECK-NEXT:    %[[NUM:.*]] = arith.addi %[[MINUS8]], %n : index
// CHECK-NEXT:    %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.floordivsi %[[NUM]], %[[EIGHT]] : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[HI:.*]] = arith.addi %[[Q]], %[[ONE]] : index
// CHECK-NEXT:    loop.for %io = 0 to %tiles parallel {
// CHECK-NEXT:      %[[WHOLE:.*]] = arith.cmpi slt, %io, %[[HI]] : index
// CHECK-NEXT:      %[[PART:.*]] = arith.cmpi sge, %io, %[[HI]] : index
// CHECK-NEXT:      loop.guard %[[WHOLE]] {
// CHECK-NEXT:        loop.for %ii = 0 to 8 vectorized {
// CHECK-NOT:           loop.guard
// CHECK:               memref.store
// CHECK:           loop.guard %[[PART]] {
// CHECK:             loop.guard %ok

// -----

// Residue dispatch (`residues=true`): in the last partial tile of a split of %n, the unrolled
// rows `io * 4 + ii < %n` that remain (r = %n - 4 * io, 1 to 3) get a copy
// each, the unrolled loop running r rows without the guard; the serial loop
// bounded alike follows; any other r keeps the guarded body.
func.func @residues(%A: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %A, %c0 : memref<?x16xf32>
  %c3 = arith.constant 3 : index
  %up = arith.addi %n, %c3 : index
  %tiles = arith.floordivsi %up, %c4 : index
  loop.for %io = 0 to %tiles {
    %base = arith.muli %io, %c4 : index
    loop.for %k = 0 to 16 {
      loop.for %ii = 0 to 4 unrolled {
        %i = arith.addi %base, %ii : index
        %ok = arith.cmpi slt, %i, %n : index
        loop.guard %ok {
          %z = arith.constant 1.0 : f32
          memref.store %z, %A[%i, %k] : memref<?x16xf32>
        }
      }
    }
    loop.for %jj = 0 to 4 {
      %j = arith.addi %base, %jj : index
      %ok2 = arith.cmpi slt, %j, %n : index
      loop.guard %ok2 {
        %z = arith.constant 2.0 : f32
        memref.store %z, %A[%j, %c0] : memref<?x16xf32>
      }
    }
  }
  func.return
}

// RES-LABEL: func.func @residues(
// RES:         loop.for %io = 0 to %tiles {
// RES:           loop.guard %[[PART:.*]] {
// RES:             %[[R:.*]] = arith.addi %{{.*}}, %n : index
// RES:             %[[IS1:.*]] = arith.cmpi eq, %[[R]], %{{.*}} : index
// RES-NEXT:        loop.guard %[[IS1]] {
// RES-NEXT:          %{{.*}} = arith.muli %io, %c4 : index
// RES-NEXT:          loop.for %{{.*}} = 0 to 16 {
// RES-NEXT:            loop.for %{{.*}} = 0 to 1 unrolled {
// RES-NOT:               loop.guard
// RES:                 loop.for %{{.*}} = 0 to 1 {
// RES-NOT:               loop.guard
// RES:             arith.cmpi eq, %[[R]]
// RES:               loop.for %{{.*}} = 0 to 2 unrolled {
// RES:             arith.cmpi eq, %[[R]]
// RES:               loop.for %{{.*}} = 0 to 3 unrolled {
// RES:             %[[LOW:.*]] = arith.cmpi slt, %[[R]], %{{.*}} : index
// RES:             %[[HIGH:.*]] = arith.cmpi sge, %[[R]], %{{.*}} : index
// RES-NEXT:        %[[OTHER:.*]] = arith.ori %[[LOW]], %[[HIGH]] : i1
// RES-NEXT:        loop.guard %[[OTHER]] {
// RES:               loop.for %{{.*}} = 0 to 4 unrolled {
// RES:                 loop.guard %{{ok.*}} {

// Without `residues`, the last tile keeps its guards.
// CHECK-LABEL: func.func @residues(
// CHECK-NOT:     arith.cmpi eq
// CHECK:         loop.guard %ok {
// CHECK-NOT:     arith.cmpi eq
// CHECK:         func.return

// -----

// With `residues=true`, serial loops alone keep their guards in the last tile
// (one test per row, none in a hot loop): no residue copies.
func.func @no_residues_for_serial_rows(%A: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %A, %c0 : memref<?x16xf32>
  %c3 = arith.constant 3 : index
  %up = arith.addi %n, %c3 : index
  %tiles = arith.floordivsi %up, %c4 : index
  loop.for %io = 0 to %tiles {
    %base = arith.muli %io, %c4 : index
    loop.for %jj = 0 to 4 {
      %j = arith.addi %base, %jj : index
      %ok = arith.cmpi slt, %j, %n : index
      loop.guard %ok {
        %z = arith.constant 2.0 : f32
        memref.store %z, %A[%j, %c0] : memref<?x16xf32>
      }
    }
  }
  func.return
}

// RES-LABEL: func.func @no_residues_for_serial_rows(
// RES-NOT:     arith.cmpi eq
// RES:         loop.guard %ok {
// RES-NOT:     arith.cmpi eq
// RES:         func.return

// -----

// A size computed inside a loop (here loaded) is no symbol: the guard stays.
func.func @size_from_data(%A: memref<?xf32>, %S: memref<4xindex>) {
  loop.for %r = 0 to 4 {
    %n = memref.load %S[%r] : memref<4xindex>
    loop.for %i = 0 to 8 {
      %ok = arith.cmpi slt, %i, %n : index
      loop.guard %ok {
        %z = arith.constant 0.0 : f32
        memref.store %z, %A[%i] : memref<?xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @size_from_data(
// CHECK-NEXT:    loop.for %r = 0 to 4 {
// CHECK-NEXT:      %n = memref.load
// CHECK-NEXT:      loop.for %i = 0 to 8 {
// CHECK-NEXT:        %ok = arith.cmpi slt, %i, %n : index
// CHECK-NEXT:        loop.guard %ok {
