// RUN: tilecraft-opt %s --split-input-file -p convert-loop-to-gpu,insert-gpu-barriers,convert-gpu-to-nvvm | filecheck %s

// A vectorized loop in a kernel: each thread copies 4 floats through shared
// memory, as 16-byte aligned <4 x f32> loads and stores (ld.global.v4.f32,
// st.shared.v4.f32, ld.shared.v4.f32 in PTX); a loop of 8 is two vectors of 4,
// the widest a thread loads.
// CHECK-LABEL: llvm.func internal @copy4_kernel0(
// CHECK-NOT:   llvm.alloca
// CHECK:       llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:       llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// CHECK:       llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()
// CHECK:       llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:       llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
// CHECK-NOT:   vector<8xf32>
func.func @copy4(%A: memref<2048xf32>, %C: memref<2048xf32>) {
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  loop.for %b = 0 to 8 blockIdx.x {
    %S = loop.alloc "S" shared : memref<256xf32>
    %base = arith.muli %b, %c256 : index
    loop.for %t = 0 to 64 threadIdx.x {
      %o = arith.muli %t, %c4 : index
      %g = arith.addi %base, %o : index
      loop.for %v = 0 to 4 vectorized {
        %i = arith.addi %g, %v : index
        %s = arith.addi %o, %v : index
        %a = memref.load %A[%i] : memref<2048xf32>
        memref.store %a, %S[%s] : memref<256xf32>
      }
    }
    loop.for %t2 = 0 to 32 threadIdx.x {
      %o2 = arith.muli %t2, %c8 : index
      %g2 = arith.addi %base, %o2 : index
      loop.for %v2 = 0 to 8 vectorized {
        %i2 = arith.addi %g2, %v2 : index
        %s2 = arith.addi %o2, %v2 : index
        %x = memref.load %S[%s2] : memref<256xf32>
        memref.store %x, %C[%i2] : memref<2048xf32>
      }
    }
  }
  func.return
}

// -----

// Lanes one float apart from an odd start: still vector code, but only the
// element's alignment (LLVM splits the access into scalar ones); a column
// (lanes a row apart) is a scatter.
// CHECK-LABEL: llvm.func internal @odd_kernel0(
// CHECK:       llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:       llvmx.masked_scatter
func.func @odd(%A: memref<260xf32>, %C: memref<4x64xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %b = 0 to 1 blockIdx.x {
    loop.for %t = 0 to 64 threadIdx.x {
      %o = arith.muli %t, %c4 : index
      %g = arith.addi %o, %c1 : index
      loop.for %v = 0 to 4 vectorized {
        %i = arith.addi %g, %v : index
        %a = memref.load %A[%i] : memref<260xf32>
        memref.store %a, %C[%v, %t] : memref<4x64xf32>
      }
    }
  }
  func.return
}
