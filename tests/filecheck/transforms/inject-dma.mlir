// RUN: tilecraft-opt %s --split-input-file -p inject-dma | filecheck %s

// A cache_read into the input buffer: rows of 64 int8 are 4 elements of 16
// (BATCH 1 x BLOCK 16 in VTA's default spec); the two rows of the tile are
// contiguous in A too, so they fold into one run of 8 elements.
func.func @rows(%A: memref<8x64xi8>) {
  loop.for %i = 0 to 4 {
    %B = loop.alloc "A.inp" inp_buffer : memref<2x64xi8>
    %c2 = arith.constant 2 : index
    %base = arith.muli %i, %c2 : index
    loop.for %r = 0 to 2 {
      %row = arith.addi %base, %r : index
      loop.for %c = 0 to 64 {
        %v = memref.load %A[%row, %c] : memref<8x64xi8>
        memref.store %v, %B[%r, %c] : memref<2x64xi8>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @rows(
// CHECK-SAME:      %[[A:.*]]: memref<8x64xi8>) {
// CHECK-NEXT:    loop.for %[[I:.*]] = 0 to 4 {
// CHECK-NEXT:      %[[B:.*]] = loop.alloc "A.inp" inp_buffer : memref<2x64xi8>
// CHECK:           %[[ROW:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:           loop.dma %[[A]][%[[ROW]], %[[Z:[0-9a-z_]+]]] -> %[[B]][%[[Z]], %[[Z]]] size(%[[ONE:[0-9a-z_]+]], %[[EIGHT:[0-9a-z_]+]]) pad(%[[Z]], %[[Z]], %[[Z]], %[[Z]]) stride 8 tile 1 x 8 elem 16 : memref<8x64xi8> -> memref<2x64xi8>
// CHECK-NOT:       loop.for
// CHECK:         func.return

// -----

// A weight tile: 2 x 2 elements of 16 x 16 out of a 4 x 4 grid: 2 rows of 2,
// rows 4 elements apart in DRAM, packed in the buffer.
func.func @weights(%W: memref<4x4x16x16xi8>) {
  loop.for %j = 0 to 2 {
    %WB = loop.alloc "W.wgt" wgt_buffer : memref<2x2x16x16xi8>
    %c2 = arith.constant 2 : index
    %jb = arith.muli %j, %c2 : index
    loop.for %a = 0 to 2 {
      loop.for %b = 0 to 2 {
        %col = arith.addi %jb, %b : index
        loop.for %y = 0 to 16 {
          loop.for %x = 0 to 16 {
            %v = memref.load %W[%a, %col, %y, %x] : memref<4x4x16x16xi8>
            memref.store %v, %WB[%a, %b, %y, %x] : memref<2x2x16x16xi8>
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @weights(
// CHECK:         %[[WB:.*]] = loop.alloc "W.wgt" wgt_buffer : memref<2x2x16x16xi8>
// CHECK:         %[[JB:.*]] = arith.muli
// CHECK:         loop.dma %{{.*}}[%[[Z:[0-9a-z_]+]], %[[JB]], %[[Z]], %[[Z]]] -> %[[WB]][%[[Z]], %[[Z]], %[[Z]], %[[Z]]] size(%[[TWO:[0-9a-z_]+]], %[[TWO]]) pad({{.*}}) stride 4 tile 2 x 2 elem 256

// -----

// The padded form te writes for a zero-padded input (`if_then_else`): the
// bounds become the padding, here constants: rows 0 and 7 of the tile are zero.
func.func @padded(%A: memref<6x16xi8>) {
  %P = loop.alloc "pad" inp_buffer : memref<8x16xi8>
  %m1 = arith.constant -1 : index
  loop.for %h = 0 to 8 {
    %src = arith.addi %h, %m1 : index
    loop.for %c = 0 to 16 {
      %c1 = arith.constant 1 : index
      %c7 = arith.constant 7 : index
      %lo = arith.cmpi sge, %h, %c1 : index
      %hi = arith.cmpi slt, %h, %c7 : index
      %in = arith.andi %lo, %hi : i1
      %v = scf.if %in -> (i8) {
        %a = memref.load %A[%src, %c] : memref<6x16xi8>
        scf.yield %a : i8
      } else {
        %z = arith.constant 0 : i8
        scf.yield %z : i8
      }
      memref.store %v, %P[%h, %c] : memref<8x16xi8>
    }
  }
  func.return
}

// The one dimension left is x: pads 1 and 1, 6 elements read from A's row 0.
// CHECK-LABEL: func.func @padded(
// CHECK:         %[[P:.*]] = loop.alloc "pad" inp_buffer : memref<8x16xi8>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[SIX:.*]] = arith.constant 6 : index
// CHECK:         loop.dma %{{.*}}[%[[Z:[0-9a-z_]+]], %[[Z]]] -> %[[P]][%[[Z]], %[[Z]]] size(%[[ONE]], %[[SIX]]) pad(%[[Z]], %[[Z]], %[[ONE]], %[[ONE]]) stride 8 tile 1 x 8 elem 16
// CHECK-NOT:     scf.if

// -----

// Padding that depends on the tile: rows of a 3-row output tile read rows
// 3*%t - 1 ... 3*%t + 3 of a 6-row input; the first tile has a zero row on top,
// the last one at the bottom. The pads are clamped index expressions of %t.
func.func @tiles(%A: memref<6x4x16xi8>) {
  %c3 = arith.constant 3 : index
  %m1 = arith.constant -1 : index
  loop.for %t = 0 to 2 {
    %P = loop.alloc "pad" inp_buffer : memref<5x4x16xi8>
    %t3 = arith.muli %t, %c3 : index
    %first = arith.addi %t3, %m1 : index
    loop.for %h = 0 to 5 {
      %row = arith.addi %first, %h : index
      loop.for %w = 0 to 4 {
        loop.for %c = 0 to 16 {
          %c0 = arith.constant 0 : index
          %c6 = arith.constant 6 : index
          %lo = arith.cmpi sge, %row, %c0 : index
          %hi = arith.cmpi slt, %row, %c6 : index
          %in = arith.andi %lo, %hi : i1
          %v = scf.if %in -> (i8) {
            %a = memref.load %A[%row, %w, %c] : memref<6x4x16xi8>
            scf.yield %a : i8
          } else {
            %z = arith.constant 0 : i8
            scf.yield %z : i8
          }
          memref.store %v, %P[%h, %w, %c] : memref<5x4x16xi8>
        }
      }
    }
  }
  func.return
}

// y_pad_0 = min(max(1 - 3t, 0), 5), the end min(max(7 - 3t, y_pad_0), 5);
// the rows read start at 3t - 1 + y_pad_0.
// CHECK-LABEL: func.func @tiles(
// CHECK:         %[[P:.*]] = loop.alloc "pad" inp_buffer : memref<5x4x16xi8>
// CHECK:         %[[FIRST:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:         %[[LO:.*]] = arith.maxsi
// CHECK-NEXT:    %[[FIVE:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[YP0:.*]] = arith.minsi %[[LO]], %[[FIVE]] : index
// CHECK:         %[[HI:.*]] = arith.maxsi %{{.*}}, %[[YP0]] : index
// CHECK-NEXT:    %[[END:.*]] = arith.minsi %[[HI]], %[[FIVE]] : index
// CHECK-NEXT:    %[[YS:.*]] = arith.subi %[[END]], %[[YP0]] : index
// CHECK-NEXT:    %[[YP1:.*]] = arith.subi %[[FIVE]], %[[END]] : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.addi %[[FIRST]], %[[YP0]] : index
// CHECK:         loop.dma %{{.*}}[%[[ROW]], %[[Z:[0-9a-z_]+]], %[[Z]]] -> %[[P]][%[[Z]], %[[Z]], %[[Z]]] size(%[[YS]], %[[X:[0-9a-z_]+]]) pad(%[[YP0]], %[[YP1]], %[[Z]], %[[Z]]) stride 4 tile 5 x 4 elem 16

// -----

// Out of the accumulator: int32 narrowed to int8 on the way (VTA's output buffer).
func.func @store(%C: memref<8x32xi8>) {
  loop.for %i = 0 to 4 {
    %acc = loop.alloc "C.acc" acc_buffer : memref<2x32xi32>
    %c2 = arith.constant 2 : index
    %base = arith.muli %i, %c2 : index
    loop.for %r = 0 to 2 {
      %row = arith.addi %base, %r : index
      loop.for %c = 0 to 32 {
        %v = memref.load %acc[%r, %c] : memref<2x32xi32>
        %n = arith.trunci %v : i32 to i8
        memref.store %n, %C[%row, %c] : memref<8x32xi8>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @store(
// CHECK:         %[[ACC:.*]] = loop.alloc "C.acc" acc_buffer : memref<2x32xi32>
// CHECK:         %[[ROW:.*]] = arith.muli
// CHECK:         loop.dma %[[ACC]][%[[Z:[0-9a-z_]+]], %[[Z]]] -> %{{.*}}[%[[ROW]], %[[Z]]] size({{.*}}) pad(%[[Z]], %[[Z]], %[[Z]], %[[Z]]) stride 4 tile 1 x 4 elem 16 : memref<2x32xi32> -> memref<8x32xi8>

// -----

// What is not a plain copy stays: the compute into the accumulator (a store of
// arithmetic), its initialization (a store of a constant).
func.func @compute(%A: memref<16xi32>) {
  %acc = loop.alloc "C.acc" acc_buffer : memref<16xi32>
  loop.for %c = 0 to 16 {
    %z = arith.constant 0 : i32
    memref.store %z, %acc[%c] : memref<16xi32>
  }
  loop.for %c = 0 to 16 {
    %a = memref.load %A[%c] : memref<16xi32>
    %s = arith.addi %a, %a : i32
    memref.store %s, %acc[%c] : memref<16xi32>
  }
  func.return
}

// CHECK-LABEL: func.func @compute(
// CHECK-NOT:     loop.dma
// CHECK:         func.return

// -----

// One element per row, rows two elements apart: y = 4 rows of x = 1.
func.func @strided(%A: memref<8x16xi8>) {
  %B = loop.alloc "A.inp" inp_buffer : memref<4x16xi8>
  %c2 = arith.constant 2 : index
  loop.for %i = 0 to 4 {
    %r = arith.muli %i, %c2 : index
    loop.for %c = 0 to 16 {
      %v = memref.load %A[%r, %c] : memref<8x16xi8>
      memref.store %v, %B[%i, %c] : memref<4x16xi8>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @strided(
// CHECK:         loop.dma {{.*}} size(%[[FOUR:[0-9a-z_]+]], %[[ONE:[0-9a-z_]+]]) pad({{.*}}) stride 2 tile 4 x 1 elem 16

// -----

// Three strided dimensions that do not fold into two: the outer loop stays a loop
// around a 2-D DMA of the inner two (one DMA per iteration, as VTA's runtime issues
// them; a tile of several channel blocks copies this way).
func.func @three_dims(%A: memref<4x4x4x16xi8>) {
  %B = loop.alloc "A.inp" inp_buffer : memref<2x2x2x16xi8>
  loop.for %i = 0 to 2 {
    loop.for %j = 0 to 2 {
      loop.for %k = 0 to 2 {
        loop.for %c = 0 to 16 {
          %v = memref.load %A[%i, %j, %k, %c] : memref<4x4x4x16xi8>
          memref.store %v, %B[%i, %j, %k, %c] : memref<2x2x2x16xi8>
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @three_dims(
// CHECK:         loop.for %i = 0 to 2 {
// CHECK-NOT:       loop.for
// CHECK:           loop.dma %A[%i, %{{.*}}, %{{.*}}, %{{.*}}] -> %B[%i, %{{.*}}, %{{.*}}, %{{.*}}] size(%[[TWO:.*]], %[[TWO]]) pad({{.*}}) stride 4 tile 2 x 2 elem 16
// CHECK-NEXT:    }
