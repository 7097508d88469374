// `loop-counts`: per function of a loop program, what it does when it runs —
// loop iterations, FLOPs, MACs, bytes, guards evaluated and taken — counted by
// evaluating every condition over the loops it reads.

// RUN: tilecraft-opt %s --annotate=loop-counts | filecheck %s

// A split of 10 by 4 leaves a guard: 12 points, 10 pass it. Each passing one
// loads 4 bytes, multiplies and adds (one MAC, two FLOPs) and stores 4 bytes.
// CHECK:      func.func @tail(%A: memref<10xf32> {tc.name = "A"}, %B: memref<10xf32> {tc.name = "B"})
// CHECK-SAME: tc.calls = 1 : i64, tc.iterations = 15 : i64, tc.flops = 20 : i64, tc.macs = 10 : i64, tc.bytes_read = 40 : i64, tc.bytes_written = 40 : i64, tc.guards = 12 : i64, tc.guards_taken = 10 : i64
func.func @tail(%A: memref<10xf32> {tc.name = "A"}, %B: memref<10xf32> {tc.name = "B"}) {
  loop.for %io = 0 to 3 parallel {
    loop.for %ii = 0 to 4 vectorized {
      %c4 = arith.constant 4 : index
      %t = arith.muli %io, %c4 : index
      %i = arith.addi %t, %ii : index
      %c10 = arith.constant 10 : index
      %ok = arith.cmpi slt, %i, %c10 : index
      loop.guard %ok {
        %a = memref.load %A[%i] : memref<10xf32>
        %b = arith.mulf %a, %a : f32
        %c = arith.addf %b, %a : f32
        memref.store %c, %B[%i] : memref<10xf32>
      }
    }
  }
  func.return
}

// Padding by one on each side of 6: `scf.if` loads where 1 <= p < 7 (6 of 8
// points), the else branch makes a zero. 8 iterations, 8 stores, 6 loads.
// CHECK:      func.func @pad(
// CHECK-SAME: tc.calls = 1 : i64, tc.iterations = 8 : i64, tc.flops = 0 : i64, tc.macs = 0 : i64, tc.bytes_read = 24 : i64, tc.bytes_written = 32 : i64, tc.guards = 8 : i64, tc.guards_taken = 6 : i64
func.func @pad(%X: memref<6xf32>, %P: memref<8xf32>) {
  loop.for %p = 0 to 8 {
    %c1 = arith.constant 1 : index
    %c7 = arith.constant 7 : index
    %lo = arith.cmpi sge, %p, %c1 : index
    %hi = arith.cmpi slt, %p, %c7 : index
    %in = arith.andi %lo, %hi : i1
    %v = scf.if %in -> (f32) {
      %x = arith.subi %p, %c1 : index
      %l = memref.load %X[%x] : memref<6xf32>
      scf.yield %l : f32
    } else {
      %z = arith.constant 0.0 : f32
      scf.yield %z : f32
    }
    memref.store %v, %P[%p] : memref<8xf32>
  }
  func.return
}

// A guard on a loaded value depends on the data: unknown, with the reason,
// never counted as zero.
// CHECK:      func.func @gather(
// CHECK-SAME: tc.unknown = "guard %ok: a condition reads memref.load"
func.func @gather(%I: memref<4xindex>, %A: memref<8xf32>) {
  loop.for %i = 0 to 4 {
    %n = memref.load %I[%i] : memref<4xindex>
    %c8 = arith.constant 8 : index
    %ok = arith.cmpi slt, %n, %c8 : index
    loop.guard %ok {
      %z = arith.constant 0.0 : f32
      memref.store %z, %A[%n] : memref<8xf32>
    }
  }
  func.return
}

// tilecraft-analyze reads loop IR at loop level: a row per function, the
// totals, the unknown listed.
// RUN: tilecraft-analyze %s --level loop | filecheck %s --check-prefix=TOOL
// TOOL:      name {{ +}}op {{ +}}calls {{ +}}iterations {{ +}}macs {{ +}}flops {{ +}}bytes_read {{ +}}bytes_written {{ +}}guards {{ +}}guards_taken
// TOOL-NEXT: tail {{ +}}func.func {{ +}}1 {{ +}}15 {{ +}}10 {{ +}}20 {{ +}}40 {{ +}}40 {{ +}}12 {{ +}}10
// TOOL-NEXT: pad {{ +}}func.func {{ +}}1 {{ +}}8 {{ +}}0 {{ +}}0 {{ +}}24 {{ +}}32 {{ +}}8 {{ +}}6
// TOOL:      unknown: @gather: guard %ok: a condition reads memref.load

// Graph-level analyses of loop IR: one line naming the function, exit 1.
// RUN: not tilecraft-analyze %s 2>&1 | filecheck %s --check-prefix=GRAPH
// GRAPH: loop-counts.mlir:[[# @LINE - 70]]:1: error: @tail is loop-level IR; graph-level analyses read a model (tilecraft-analyze --level loop reads loop IR)
