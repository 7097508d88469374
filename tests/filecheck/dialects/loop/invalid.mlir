// One case per loop verifier error: the message and the file:line:col of the op.
// RUN: tilecraft-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics 2>&1 | filecheck %s

// The kind is an enum: an unknown keyword is a parse error at the keyword.
func.func @kind() {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:24
  // CHECK: loop.for kind must be one of serial, parallel, vectorized, unrolled, vthread, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, not 'pipelined'.
  loop.for %i = 0 to 8 pipelined {
  }
  func.return
}

// -----

// An empty range (lb == ub) is fine; a reversed one is not.
func.func @reversed() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.for' op: loop.for has an upper bound 2 below its lower bound 4.
  loop.for %i = 4 to 2 {
  }
  func.return
}

// -----

func.func @no_induction_variable() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.for' op: loop.for body takes one index argument.
  "loop.for"() <{lb = #builtin.int<0>, ub = #builtin.int<4>, kind = #loop<kind serial>}> ({
    "loop.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

func.func @induction_variable_type() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.for' op: loop.for body takes one index argument.
  "loop.for"() <{lb = #builtin.int<0>, ub = #builtin.int<4>, kind = #loop<kind serial>}> ({
  ^bb0(%i: i64):
    "loop.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

func.func @alloc_scope() {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:23
  // CHECK: Expected `global`, `local`, `shared`, `inp_buffer`, `wgt_buffer`, or `acc_buffer`.
  %B = loop.alloc "B" stack : memref<4xf32>
  func.return
}

// -----

// A `?` size is given as an operand.
func.func @alloc_dynamic() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.alloc' op: loop.alloc of memref<?x4xf32> takes 1 size operand(s), one per '?', not 0.
  %B = loop.alloc "B" global : memref<?x4xf32>
  func.return
}

// -----

func.func @alloc_empty() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.alloc' op: loop.alloc needs positive extents (or '?' sizes given as operands).
  %B = loop.alloc "B" local : memref<4x0xf32>
  func.return
}

// -----

func.func @alloc_tensor() {
  // The declarative syntax checks the result type while parsing.
  // CHECK: invalid.mlir:[[# @LINE + 2]]:3
  // CHECK: tensor<4xf32> should be of base attribute memref
  %B = loop.alloc "B" local : tensor<4xf32>
  func.return
}

// -----

// The condition is parsed as an i1, like scf.if's.
func.func @guard_condition(%c: index) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:14
  // CHECK: operand is used with type i1, but has been previously used or defined with type index
  loop.guard %c {
  }
  func.return
}

// -----

func.func @guard_condition_generic(%c: index) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'loop.guard' op: operand 'cond' at position 0 does not verify:
  // CHECK-NEXT: Expected attribute i1 but got index
  "loop.guard"(%c) ({
    "loop.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}

// -----

func.func @yield_outside() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.yield' op: 'loop.yield' expects parent op to be one of 'loop.for', 'loop.guard'
  loop.yield
}

// -----

// Syntax errors (--parsing-diagnostics) point at the token. A bound known at run
// time is an index.
func.func @dynamic_bound(%n: f32) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:22
  // CHECK: index
  loop.for %i = 0 to %n {
  }
  func.return
}

// -----

func.func @quoted_kind() {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:24
  // CHECK: Expected region!
  loop.for %i = 0 to 8 "parallel" {
  }
  func.return
}

// -----

func.func @alloc_without_name() {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:19
  // CHECK: attribute expected
  %B = loop.alloc local : memref<4xf32>
  func.return
}

// -----

func.func @view_past_the_end() {
  %arena = loop.alloc "arena" global : memref<256xi8>
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.view' op: loop.view of bytes [128, 384) runs past the 256-byte buffer.
  %v = loop.view %arena[128] : memref<256xi8> to memref<64xf32>
  func.return
}

// -----

func.func @view_misaligned() {
  %arena = loop.alloc "arena" global : memref<256xi8>
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.view' op: loop.view offset 6 is not a non-negative multiple of the element size 4.
  %v = loop.view %arena[6] : memref<256xi8> to memref<4xf32>
  func.return
}

// -----

func.func @view_of_floats(%A: memref<64xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.view' op: loop.view reads a 1-D i8 buffer, not memref<64xf32>.
  %v = loop.view %A[0] : memref<64xf32> to memref<4xf32>
  func.return
}

// -----

// The generic form: a kind must be the enum attribute, not a string.
func.func @string_kind() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.for' op: "serial" should be of base attribute loop.kind
  "loop.for"() <{lb = #builtin.int<0>, ub = #builtin.int<4>, kind = "serial"}> ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

func.func @launch_missing_body(%A: memref<8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.launch' op: loop.launch body '@nowhere' is not a function in this module.
  loop.launch @nowhere(%A) 0 to 8 : memref<8xf32>
  func.return
}

// -----

// The body takes the launch's arguments and then the chunk [begin, end).
func.func private @body(%A: memref<8xf32>) {
  func.return
}
func.func @launch_signature(%A: memref<8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.launch' op: loop.launch body '@body' must take the launch's arguments and two index values (the chunk) and return nothing; it has type (memref<8xf32>) -> ().
  loop.launch @body(%A) 0 to 8 : memref<8xf32>
  func.return
}

// -----

func.func private @body(%A: memref<8xf32>, %b: index, %e: index) {
  func.return
}
func.func @launch_bounds(%A: memref<8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.launch' op: loop.launch has an upper bound 2 below its lower bound 4.
  loop.launch @body(%A) 4 to 2 : memref<8xf32>
  func.return
}

// -----

// A bound known only at run time takes a serial or parallel loop: vectorized,
// unrolled and vthread loops copy or widen their body per iteration.
func.func @dynamic_vectorized(%n: index) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.for' op: a vectorized loop.for needs a static extent; a bound known only when the program runs takes a serial or parallel loop.
  loop.for %i = 0 to %n vectorized {
  }
  func.return
}

// -----

// Each value a launch passes has its type listed after the colon.
func.func private @body(%A: memref<8xf32>, %b: index, %e: index) {
  func.return
}
func.func @launch_types(%A: memref<8xf32>) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:15
  // CHECK: loop.launch passes 1 values but lists 0 types
  loop.launch @body(%A) 0 to 8
  func.return
}
