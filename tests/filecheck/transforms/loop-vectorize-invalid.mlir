// RUN: tilecraft-opt %s --split-input-file -p loop-vectorize --verify-diagnostics 2>&1 | filecheck %s

// A call cannot run once per lane.
func.func @call(%A: memref<8xf32>) {
  loop.for %i = 0 to 8 vectorized {
    // CHECK: loop-vectorize-invalid.mlir:[[# @LINE + 1]]:5: error: loop-vectorize: 'func.call' cannot be vectorized; make the loop around it serial.
    func.call @k(%A) : (memref<8xf32>) -> ()
  }
  func.return
}
func.func @k(%A: memref<8xf32>) {
  func.return
}

// -----

// Neither can a launch of parallel work.
func.func private @body(%A: memref<8xf32>, %b: index, %e: index) {
  func.return
}
func.func @launch(%A: memref<8xf32>) {
  loop.for %i = 0 to 8 vectorized {
    // CHECK: loop-vectorize-invalid.mlir:[[# @LINE + 1]]:5: error: loop-vectorize: 'loop.launch' cannot be vectorized; make the loop around it serial.
    loop.launch @body(%A) 0 to 8 : memref<8xf32>
  }
  func.return
}
