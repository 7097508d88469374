// One case per te verifier error: the message and the file:line:col of the op.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s
// Without --verify-diagnostics, the first error stops the tool with exit code 1.
// RUN: not tilecraft-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST
// FIRST: invalid.mlir:10:3: error: 'te.compute' op: te.compute 'C' has 2 index arguments but its result has rank 1.
// FIRST-NOT: Traceback

func.func @rank_args(%A: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute 'C' has 2 index arguments but its result has rank 1.
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<4xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

// Only the generic form can name more axes than there are index arguments.
func.func @rank_names(%A: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute 'C' names 2 axes but its result has rank 1.
  %C = "te.compute"() <{name = "C", axis_names = ["i", "j"]}> ({
  ^bb0(%i: index):
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }) : () -> tensor<4xf32>
  func.return %C : tensor<4xf32>
}

// -----

// A `?` size is named by the type's encoding (tensor<?xf32, ["n"]>).
func.func @dynamic_shape(%A: tensor<4xf32>) -> tensor<?xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute 'C' needs positive extents (or '?' sizes named by the type's encoding: tensor<?x8xf32, ["n"]>).
  %C = te.compute "C" (%i: "i") -> tensor<?xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<?xf32>
}

// -----

func.func @empty_shape(%A: tensor<4xf32>) -> tensor<0xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute 'C' needs positive extents (or '?' sizes named by the type's encoding: tensor<?x8xf32, ["n"]>).
  %C = te.compute "C" (%i: "i") -> tensor<0xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<0xf32>
}

// -----

func.func @index_type(%A: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute index arguments must be of type index.
  %C = "te.compute"() <{name = "C", axis_names = ["i"]}> ({
  ^bb0(%i: i32):
    %z = arith.constant 0.0 : f32
    te.yield %z : f32
  }) : () -> tensor<4xf32>
  func.return %C : tensor<4xf32>
}

// -----

func.func @no_yield(%A: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute body must end with te.yield.
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
  }
  func.return %C : tensor<4xf32>
}

// -----

// A body that ends in another op fails the terminator check first.
func.func @not_terminated(%A: tensor<4xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'te.read' op: Operation te.read terminates block in single-block region but is not a terminator
    %a = te.read %A[%i] : tensor<4xf32>
  }
  func.return %C : tensor<4xf32>
}

// -----

func.func @yield_type(%A: tensor<4xf32>) -> tensor<4xf64> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute 'C' yields f32 but its result holds f64.
  %C = te.compute "C" (%i: "i") -> tensor<4xf64> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf64>
}

// -----

func.func @result_not_tensor(%A: tensor<4xf32>) -> memref<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'te.compute' op: result 'result' at position 0 does not verify:
  // CHECK-NEXT: memref<4xf32> should be of base attribute tensor
  %C = te.compute "C" (%i: "i") -> memref<4xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : memref<4xf32>
}

// -----

func.func @same_axis_name(%A: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute 'C' uses the axis name 'i' twice.
  %C = te.compute "C" (%i: "i", %j: "i") -> tensor<4x4xf32> {
    %a = te.read %A[%i, %j] : tensor<4x4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4x4xf32>
}

// -----

// A reduce axis may not reuse the name of a spatial axis either.
func.func @same_reduce_axis_name(%A: tensor<4x4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute 'C' uses the axis name 'i' twice.
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    %s = te.reduce sum (%k: "i" = 0 to 4) -> f32 {
      %a = te.read %A[%i, %k] : tensor<4x4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

func.func @reduce_not_whole_body(%A: tensor<4x4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.reduce in te.compute 'C' must be the value the body yields (a reduction is the whole body, as in TVM); compute the rest in a second te.compute.
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    %s = te.reduce sum (%k: "k" = 0 to 4) -> f32 {
      %a = te.read %A[%i, %k] : tensor<4x4xf32>
      te.yield %a : f32
    }
    %d = arith.addf %s, %s : f32
    te.yield %d : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

func.func @reduce_kind(%A: tensor<4xf32>) -> tensor<f32> {
  %C = te.compute "C" () -> tensor<f32> {
    // The kind is an enum attribute: a word outside it is a parse error at the word.
    // CHECK: invalid.mlir:[[# @LINE + 2]]:20
    // CHECK: Expected `sum`, `max`, `min`, or `prod`.
    %s = te.reduce mean (%k: "k" = 0 to 4) -> f32 {
      %a = te.read %A[%k] : tensor<4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<f32>
}

// -----

func.func @reduce_no_axes(%A: tensor<4xf32>) -> tensor<f32> {
  %C = te.compute "C" () -> tensor<f32> {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'te.reduce' op: te.reduce needs one named, bounded index argument per reduce axis.
    %s = te.reduce sum () -> f32 {
      %z = arith.constant 0.0 : f32
      te.yield %z : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<f32>
}

// -----

// The generic form can give bounds for fewer axes than the body has.
func.func @reduce_bounds_count(%A: tensor<4x4xf32>) -> tensor<f32> {
  %C = te.compute "C" () -> tensor<f32> {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'te.reduce' op: te.reduce needs one named, bounded index argument per reduce axis.
    %s = "te.reduce"() <{kind = #te<reduce_kind sum>, axis_names = ["k", "l"], lower = [#builtin.int<0>, #builtin.int<0>], upper = [#builtin.int<4>]}> ({
    ^bb0(%k: index, %l: index):
      %a = te.read %A[%k, %l] : tensor<4x4xf32>
      te.yield %a : f32
    }) : () -> f32
    te.yield %s : f32
  }
  func.return %C : tensor<f32>
}

// -----

func.func @reduce_empty_range(%A: tensor<4xf32>) -> tensor<f32> {
  %C = te.compute "C" () -> tensor<f32> {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'te.reduce' op: te.reduce axis 'k' has an empty range [4, 4).
    %s = te.reduce sum (%k: "k" = 4 to 4) -> f32 {
      %a = te.read %A[%k] : tensor<4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<f32>
}

// -----

func.func @reduce_no_yield(%A: tensor<4xf32>) -> tensor<f32> {
  %C = te.compute "C" () -> tensor<f32> {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'te.reduce' op: te.reduce body must end with te.yield.
    %s = te.reduce sum (%k: "k" = 0 to 4) -> f32 {
    }
    te.yield %s : f32
  }
  func.return %C : tensor<f32>
}

// -----

func.func @reduce_yield_type(%A: tensor<4xi32>) -> tensor<f32> {
  %C = te.compute "C" () -> tensor<f32> {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'te.reduce' op: te.reduce yields i32 but its result is f32.
    %s = te.reduce sum (%k: "k" = 0 to 4) -> f32 {
      %a = te.read %A[%k] : tensor<4xi32>
      te.yield %a : i32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<f32>
}

// -----

func.func @reduce_outside_compute(%A: tensor<4xf32>) -> f32 {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.reduce' op: 'te.reduce' expects parent op 'te.compute'
  %s = te.reduce sum (%k: "k" = 0 to 4) -> f32 {
    %a = te.read %A[%k] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %s : f32
}

// -----

func.func @read_rank(%A: tensor<4x4xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'te.read' op: te.read of a rank-2 tensor takes 2 indices, not 1.
    %a = te.read %A[%i] : tensor<4x4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

func.func @read_type(%A: tensor<4xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    // IRDL's constraint (the result is the tensor's ELEMENT type) rejects it.
    // CHECK: invalid.mlir:[[# @LINE + 2]]:5: error: 'te.read' op: result 'result' at position 0 does not verify:
    // CHECK-NEXT: attribute f32 expected from variable 'ELEMENT', but got f64
    %a = "te.read"(%A, %i) : (tensor<4xf32>, index) -> f64
    %t = arith.truncf %a : f64 to f32
    te.yield %t : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

func.func @yield_outside(%A: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.yield' op: 'te.yield' expects parent op to be one of 'te.compute', 'te.reduce'
  te.yield %A : tensor<4xf32>
}

// -----

// Syntax errors (--parsing-diagnostics) point at the token.
func.func @read_memref(%A: memref<4xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    // The declarative format checks the operand's type while it parses.
    // CHECK: invalid.mlir:[[# @LINE + 3]]:5
    // CHECK-NEXT: %a = te.read %A[%i] : memref<4xf32>
    // CHECK:      memref<4xf32> should be of base attribute tensor
    %a = te.read %A[%i] : memref<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

func.func @missing_bounds(%A: tensor<4xf32>) -> tensor<f32> {
  %C = te.compute "C" () -> tensor<f32> {
    // CHECK: invalid.mlir:[[# @LINE + 2]]:33
    // CHECK: Expected '='
    %s = te.reduce sum (%k: "k" to 4) -> f32 {
      %a = te.read %A[%k] : tensor<4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<f32>
}

// -----

func.func @axis_name_not_string(%A: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:28
  // CHECK: string literal expected
  %C = te.compute "C" (%i: i) -> tensor<4xf32> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf32>
}

// -----

func.func @badly_named(%A: tensor<4xf32>) -> tensor<?xf32, ["n +"]> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'te.compute' op: te.compute 'C': {{.*}}
  %C = te.compute "C" (%i: "i") -> tensor<?xf32, ["n +"]> {
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<?xf32, ["n +"]>
}

// -----

// A reduce range to a size is an expression of size names.
func.func @bad_reduce_size(%A: tensor<4xf32>) -> tensor<1xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<1xf32> {
    // CHECK: invalid.mlir:[[# @LINE + 2]]:40
    // CHECK: in size 'n +' at column 4: expected a number, a name or '('
    %s = te.reduce sum (%k: "k" = 0 to "n +") -> f32 {
      %a = te.read %A[%k] : tensor<4xf32>
      te.yield %a : f32
    }
    te.yield %s : f32
  }
  func.return %C : tensor<1xf32>
}

// -----

func.func @bad_size_name(%A: tensor<4xf32>) -> tensor<4xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<4xf32> {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'te.size' op: te.size: '2n' is not a size name (letters, digits, _)
    %n = te.size "2n"
    %a = te.read %A[%i] : tensor<4xf32>
    te.yield %a : f32
  }
  func.return %C : tensor<4xf32>
}
