// Every te op in its custom syntax: printed, parsed again, printed identically.
// RUN: tilecraft-opt %s --split-input-file -o %t.once.mlir
// RUN: tilecraft-opt %t.once.mlir --split-input-file | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir
// The generic form carries the same properties back into the custom form.
// RUN: %generic-roundtrip

// An elementwise compute: index arguments named by axis, reads, scalar arith.
func.func @add(%A: tensor<8x16xf32>, %B: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<8x16xf32> {
    %a = te.read %A[%i, %j] : tensor<8x16xf32>
    %b = te.read %B[%i, %j] : tensor<8x16xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  func.return %C : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @add(
// CHECK-SAME:      %[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<8x16xf32>) -> tensor<8x16xf32> {
// CHECK-NEXT:    %[[C:.*]] = te.compute "C" (%[[I:.*]]: "i", %[[J:.*]]: "j") -> tensor<8x16xf32> {
// CHECK-NEXT:      %[[VA:.*]] = te.read %[[A]][%[[I]], %[[J]]] : tensor<8x16xf32>
// CHECK-NEXT:      %[[VB:.*]] = te.read %[[B]][%[[I]], %[[J]]] : tensor<8x16xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[VA]], %[[VB]] : f32
// CHECK-NEXT:      te.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[C]] : tensor<8x16xf32>
// CHECK-NEXT:  }

// -----

// A reduction is the whole body of its compute; its axes carry their bounds.
func.func @matmul(%A: tensor<64x32xf32>, %B: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<64x64xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 32) -> f32 {
      %a = te.read %A[%i, %k] : tensor<64x32xf32>
      %b = te.read %B[%k, %j] : tensor<32x64xf32>
      %m = arith.mulf %a, %b : f32
      te.yield %m : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<64x32xf32>, %[[B:.*]]: tensor<32x64xf32>) -> tensor<64x64xf32> {
// CHECK-NEXT:    %[[C:.*]] = te.compute "C" (%[[I:.*]]: "i", %[[J:.*]]: "j") -> tensor<64x64xf32> {
// CHECK-NEXT:      %[[S:.*]] = te.reduce sum (%[[K:.*]]: "k" = 0 to 32) -> f32 {
// CHECK-NEXT:        %[[VA:.*]] = te.read %[[A]][%[[I]], %[[K]]] : tensor<64x32xf32>
// CHECK-NEXT:        %[[VB:.*]] = te.read %[[B]][%[[K]], %[[J]]] : tensor<32x64xf32>
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[VA]], %[[VB]] : f32
// CHECK-NEXT:        te.yield %[[M]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      te.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[C]] : tensor<64x64xf32>

// -----

// The other reduction kinds, several reduce axes, bounds that do not start at 0
// (and a negative one), integer elements.
func.func @reductions(%A: tensor<4x6x8xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %mx = te.compute "mx" (%i: "i") -> tensor<4xi32> {
    %r = te.reduce max (%k: "k" = 0 to 6, %l: "l" = 2 to 8) -> i32 {
      %a = te.read %A[%i, %k, %l] : tensor<4x6x8xi32>
      te.yield %a : i32
    }
    te.yield %r : i32
  }
  %mn = te.compute "mn" (%i: "i") -> tensor<4xi32> {
    %r = te.reduce min (%k: "k" = -1 to 5) -> i32 {
      %c1 = arith.constant 1 : index
      %k1 = arith.addi %k, %c1 : index
      %a = te.read %A[%i, %k1, %k1] : tensor<4x6x8xi32>
      te.yield %a : i32
    }
    te.yield %r : i32
  }
  %pr = te.compute "pr" (%i: "i") -> tensor<4xi32> {
    %r = te.reduce prod (%k: "k" = 0 to 6) -> i32 {
      %a = te.read %mx[%i] : tensor<4xi32>
      te.yield %a : i32
    }
    te.yield %r : i32
  }
  func.return %mx, %mn, %pr : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @reductions(
// CHECK-SAME:      %[[A:.*]]: tensor<4x6x8xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
// CHECK-NEXT:    %[[MX:.*]] = te.compute "mx" (%[[I:.*]]: "i") -> tensor<4xi32> {
// CHECK-NEXT:      %[[R:.*]] = te.reduce max (%[[K:.*]]: "k" = 0 to 6, %[[L:.*]]: "l" = 2 to 8) -> i32 {
// CHECK-NEXT:        %[[V:.*]] = te.read %[[A]][%[[I]], %[[K]], %[[L]]] : tensor<4x6x8xi32>
// CHECK-NEXT:        te.yield %[[V]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      te.yield %[[R]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MN:.*]] = te.compute "mn" (%[[I2:.*]]: "i") -> tensor<4xi32> {
// CHECK-NEXT:      %[[R2:.*]] = te.reduce min (%[[K2:.*]]: "k" = -1 to 5) -> i32 {
// CHECK-NEXT:        %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[K1:.*]] = arith.addi %[[K2]], %[[C1]] : index
// CHECK-NEXT:        %[[V2:.*]] = te.read %[[A]][%[[I2]], %[[K1]], %[[K1]]] : tensor<4x6x8xi32>
// CHECK-NEXT:        te.yield %[[V2]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      te.yield %[[R2]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[PR:.*]] = te.compute "pr" (%[[I3:.*]]: "i") -> tensor<4xi32> {
// CHECK-NEXT:      %[[R3:.*]] = te.reduce prod (%{{.*}}: "k" = 0 to 6) -> i32 {
// CHECK-NEXT:        %[[V3:.*]] = te.read %[[MX]][%[[I3]]] : tensor<4xi32>
// CHECK-NEXT:        te.yield %[[V3]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      te.yield %[[R3]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[MX]], %[[MN]], %[[PR]] : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>

// -----

// A rank-0 result has no index arguments: `()`.
func.func @total(%A: tensor<16xf64>) -> tensor<f64> {
  %T = te.compute "T" () -> tensor<f64> {
    %s = te.reduce sum (%k: "k" = 0 to 16) -> f64 {
      %a = te.read %A[%k] : tensor<16xf64>
      te.yield %a : f64
    }
    te.yield %s : f64
  }
  func.return %T : tensor<f64>
}

// CHECK-LABEL: func.func @total(
// CHECK-NEXT:    %[[T:.*]] = te.compute "T" () -> tensor<f64> {
// CHECK-NEXT:      %[[S:.*]] = te.reduce sum (%[[K:.*]]: "k" = 0 to 16) -> f64 {
// CHECK-NEXT:        %[[V:.*]] = te.read %{{.*}}[%[[K]]] : tensor<16xf64>
// CHECK-NEXT:        te.yield %[[V]] : f64
// CHECK-NEXT:      }
// CHECK-NEXT:      te.yield %[[S]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[T]] : tensor<f64>

// -----

// Padding: the read sits in the lazy branch of an scf.if, so it never reads
// out of bounds; reads of a computed tensor chain two computes.
func.func @pad(%A: tensor<4xf32>) -> tensor<6xf32> {
  %P = te.compute "P" (%i: "i") -> tensor<6xf32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %x = arith.subi %i, %c1 : index
    %in = arith.cmpi ult, %x, %c4 : index
    %v = scf.if %in -> (f32) {
      %a = te.read %A[%x] : tensor<4xf32>
      scf.yield %a : f32
    } else {
      %z = arith.constant 0.0 : f32
      scf.yield %z : f32
    }
    te.yield %v : f32
  }
  %Q = te.compute "Q" (%i: "i") -> tensor<6xf32> {
    %p = te.read %P[%i] : tensor<6xf32>
    %e = math.exp %p : f32
    te.yield %e : f32
  }
  func.return %Q : tensor<6xf32>
}

// CHECK-LABEL: func.func @pad(
// CHECK-SAME:      %[[A:.*]]: tensor<4xf32>) -> tensor<6xf32> {
// CHECK-NEXT:    %[[P:.*]] = te.compute "P" (%[[I:.*]]: "i") -> tensor<6xf32> {
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %[[X:.*]] = arith.subi %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[X]], %[[C4]] : index
// CHECK-NEXT:      %[[V:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK-NEXT:        %[[VA:.*]] = te.read %[[A]][%[[X]]] : tensor<4xf32>
// CHECK-NEXT:        scf.yield %[[VA]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        scf.yield %[[Z]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      te.yield %[[V]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Q:.*]] = te.compute "Q" (%[[I2:.*]]: "i") -> tensor<6xf32> {
// CHECK-NEXT:      %[[VP:.*]] = te.read %[[P]][%[[I2]]] : tensor<6xf32>
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[VP]] : f32
// CHECK-NEXT:      te.yield %[[E]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Q]] : tensor<6xf32>

// -----

// Discardable attributes survive on every op; names are string literals, so
// any character (escaped when printed) can be part of a tensor or axis name.
func.func @attributes(%A: tensor<4xf32>) -> tensor<f32> {
  %C = te.compute "C.\"out\"" () -> tensor<f32> {
    %s = te.reduce sum (%k: "k\tinner" = 0 to 4) -> f32 {
      %a = te.read %A[%k] {note = "read"} : tensor<4xf32>
      te.yield %a {last} : f32
    } {tag = 1 : i64}
    te.yield %s : f32
  } {stage = "C"}
  func.return %C : tensor<f32>
}

// CHECK-LABEL: func.func @attributes(
// CHECK-NEXT:    %[[C:.*]] = te.compute "C.\22out\22" () -> tensor<f32> {
// CHECK-NEXT:      %[[S:.*]] = te.reduce sum (%[[K:.*]]: "k\09inner" = 0 to 4) -> f32 {
// CHECK-NEXT:        %[[V:.*]] = te.read %{{.*}}[%[[K]]] {note = "read"} : tensor<4xf32>
// CHECK-NEXT:        te.yield %[[V]] {last} : f32
// CHECK-NEXT:      } {tag = 1 : i64}
// CHECK-NEXT:      te.yield %[[S]] : f32
// CHECK-NEXT:    } {stage = "C"}
// CHECK-NEXT:    func.return %[[C]] : tensor<f32>

// -----

// Floor modulo (Python's and TVM's `%`), on index and on integer values.
func.func @floormod(%A: tensor<8xi32>) -> tensor<8xi32> {
  %B = te.compute "B" (%i: "i") -> tensor<8xi32> {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %m = arith.subi %i, %c1 : index
    %w = te.floormod %m, %c8 : index
    %a = te.read %A[%w] : tensor<8xi32>
    %c3 = arith.constant 3 : i32
    %r = te.floormod %a, %c3 : i32
    te.yield %r : i32
  }
  func.return %B : tensor<8xi32>
}

// CHECK-LABEL: func.func @floormod(
// CHECK:         %[[W:.*]] = te.floormod %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[A:.*]] = te.read %{{.*}}[%[[W]]] : tensor<8xi32>
// CHECK:         te.floormod %[[A]], %{{.*}} : i32

// -----

// A run-time check in a compute's body (gather checks its ids this way).
func.func @check(%A: tensor<4xf32>, %I: tensor<2xi32>) -> tensor<2xf32> {
  %B = te.compute "B" (%i: "i") -> tensor<2xf32> {
    %id = te.read %I[%i] : tensor<2xi32>
    %c4 = arith.constant 4 : i32
    %ok = arith.cmpi ult, %id, %c4 : i32
    te.assert %ok, "B: an id is out of range"
    %c0 = arith.constant 0 : index
    %a = te.read %A[%c0] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %B : tensor<2xf32>
}

// CHECK-LABEL: func.func @check(
// CHECK:         %[[OK:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    te.assert %[[OK]], "B: an id is out of range"

// -----

// Sizes known when the function runs: `?`s named by the type's encoding, a
// reduce range to one (a string: the size's expression), and one as a value.
func.func @normalize(%A: tensor<4x?xf32, ["n"]>) -> tensor<4x?xf32, ["n"]> {
  %S = te.compute "S" (%i: "i") -> tensor<4xf32> {
    %s = te.reduce sum (%k: "k" = 0 to "n") -> f32 {
      %a = te.read %A[%i, %k] : tensor<4x?xf32, ["n"]>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  %B = te.compute "B" (%i: "i", %j: "j") -> tensor<4x?xf32, ["n"]> {
    %a = te.read %A[%i, %j] : tensor<4x?xf32, ["n"]>
    %s = te.read %S[%i] : tensor<4xf32>
    %n = te.size "n"
    %ni = arith.index_cast %n : index to i32
    %nf = arith.sitofp %ni : i32 to f32
    %q = arith.divf %a, %s : f32
    %r = arith.addf %q, %nf : f32
    te.yield %r : f32
  }
  func.return %B : tensor<4x?xf32, ["n"]>
}

// CHECK-LABEL: func.func @normalize(
// CHECK:         te.reduce sum (%k: "k" = 0 to "n") -> f32 {
// CHECK:         %n = te.size "n"
