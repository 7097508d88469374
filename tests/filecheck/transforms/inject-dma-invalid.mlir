// RUN: tilecraft-opt %s --split-input-file -p inject-dma --verify-diagnostics 2>&1 | filecheck %s

// A transposing copy: the buffer is written column by column.
func.func @transpose(%A: memref<4x4x16xi8>) {
  %B = loop.alloc "A.inp" inp_buffer : memref<4x4x16xi8>
  loop.for %i = 0 to 4 {
    loop.for %j = 0 to 4 {
      loop.for %c = 0 to 16 {
        %v = memref.load %A[%i, %j, %c] : memref<4x4x16xi8>
        // CHECK: inject-dma-invalid.mlir:[[# @LINE + 1]]:9: error: inject-dma: this copy into the inp_buffer buffer cannot be one DMA: the accelerator buffer is not written row by row in loop order (a transposing copy); change the schedule
        memref.store %v, %B[%j, %i, %c] : memref<4x4x16xi8>
      }
    }
  }
  func.return
}

// -----

// Padding inside an element: half of each 16-lane vector is zero.
func.func @pad_in_element(%A: memref<4x16xi8>) {
  %B = loop.alloc "A.inp" inp_buffer : memref<4x16xi8>
  loop.for %i = 0 to 4 {
    loop.for %c = 0 to 16 {
      %c8 = arith.constant 8 : index
      %in = arith.cmpi slt, %c, %c8 : index
      %v = scf.if %in -> (i8) {
        %a = memref.load %A[%i, %c] : memref<4x16xi8>
        scf.yield %a : i8
      } else {
        %z = arith.constant 0 : i8
        scf.yield %z : i8
      }
      // CHECK: error: inject-dma: this copy into the inp_buffer buffer cannot be one DMA: its condition clips a loop inside the element (padding must be whole elements)
      memref.store %v, %B[%i, %c] : memref<4x16xi8>
    }
  }
  func.return
}

// -----

// Less than an element: 8 of the 16 lanes.
func.func @part(%A: memref<4x16xi8>) {
  %B = loop.alloc "A.inp" inp_buffer : memref<4x16xi8>
  loop.for %i = 0 to 4 {
    loop.for %c = 0 to 8 {
      %v = memref.load %A[%i, %c] : memref<4x16xi8>
      // CHECK: error: inject-dma: this copy into the inp_buffer buffer cannot be one DMA: its innermost loops cover 8 scalars, not one element of 16
      memref.store %v, %B[%i, %c] : memref<4x16xi8>
    }
  }
  func.return
}

// -----

// A weight tile read transposed inside the element: the element is not a
// contiguous block of the global buffer.
func.func @weight_transposed(%W: memref<4x16x16xi8>) {
  %B = loop.alloc "W.wgt" wgt_buffer : memref<4x16x16xi8>
  loop.for %i = 0 to 4 {
    loop.for %y = 0 to 16 {
      loop.for %x = 0 to 16 {
        %v = memref.load %W[%i, %x, %y] : memref<4x16x16xi8>
        // CHECK: error: inject-dma: this copy into the wgt_buffer buffer cannot be one DMA: its innermost loops do not walk one contiguous element of 256 scalars on both sides
        memref.store %v, %B[%i, %y, %x] : memref<4x16x16xi8>
      }
    }
  }
  func.return
}

// -----

// After inject-virtual-threads the threads' copies share their loops: no copy
// has a nest of its own.
func.func @interleaved(%A: memref<2x16xi8>) {
  %B0 = loop.alloc "A.inp.vt0" inp_buffer : memref<1x16xi8>
  %B1 = loop.alloc "A.inp.vt1" inp_buffer : memref<1x16xi8>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %c = 0 to 16 {
    %v0 = memref.load %A[%c0, %c] : memref<2x16xi8>
    %v1 = memref.load %A[%c1, %c] : memref<2x16xi8>
    // CHECK: inject-dma-invalid.mlir:[[# @LINE + 1]]:5: error: inject-dma: this copy into the inp_buffer buffer is not a loop nest of its own (it has no loop, or its loops do other work too: run inject-dma before inject-virtual-threads and unrolling)
    memref.store %v0, %B0[%c0, %c] : memref<1x16xi8>
    memref.store %v1, %B1[%c0, %c] : memref<1x16xi8>
  }
  func.return
}
