// RUN: not tilecraft-opt %s -p loop-to-accel 2>&1 | filecheck %s
// RUN: not tilecraft-opt %s -p 'loop-to-accel{spec="%S/missing-spec.json"}' 2>&1 | filecheck %s --check-prefix=SPEC

// An error in a stage of the pipeline is that stage's, at the op at fault.
func.func @transpose(%A: memref<4x4x16xi8>) {
  %B = loop.alloc "A.inp" inp_buffer : memref<4x4x16xi8>
  loop.for %i = 0 to 4 {
    loop.for %j = 0 to 4 {
      loop.for %c = 0 to 16 {
        %v = memref.load %A[%i, %j, %c] : memref<4x4x16xi8>
        // CHECK: loop-to-accel-invalid.mlir:[[# @LINE + 1]]:9: error: inject-dma: this copy into the inp_buffer buffer cannot be one DMA
        memref.store %v, %B[%j, %i, %c] : memref<4x4x16xi8>
      }
    }
  }
  func.return
}

// A spec file that is not there is named.
// SPEC: tilecraft-opt: error: {{.*}}missing-spec.json: cannot read the spec file
