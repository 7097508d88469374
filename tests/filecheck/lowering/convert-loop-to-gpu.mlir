// RUN: tilecraft-opt %s -p convert-loop-to-gpu --split-input-file | filecheck %s

// A vector add on 16 blocks of 64 threads: the nest becomes one kernel, its
// loop variables the block and thread indices; the split's tail guard stays.
// CHECK: builtin.module attributes {gpu.container_module}
// CHECK-LABEL: func.func @add
// The grid and block sizes, x y z each:
// CHECK:       %[[GX:.*]] = arith.constant 16 : index
// CHECK-NEXT:  arith.constant 1 : index
// CHECK-NEXT:  arith.constant 1 : index
// CHECK-NEXT:  %[[BX:.*]] = arith.constant 64 : index
// CHECK:       "gpu.launch_func"(%[[GX]], %{{.*}}, %{{.*}}, %[[BX]], %{{.*}}, %{{.*}}, %A, %B, %C) <{kernel = @add_kernels::@add_kernel0
// CHECK-NEXT:  func.return
// CHECK:       "gpu.module"() <{sym_name = "add_kernels"}>
// CHECK:       "gpu.func"() <{function_type = (memref<1000xf32>, memref<1000xf32>, memref<1000xf32>) -> (), kernel}>
// CHECK:       %[[O:.*]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK:       %[[I:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK:       loop.guard
// CHECK:       memref.store
// CHECK:       "gpu.return"()
// CHECK-NOT:   loop.for
func.func @add(%A: memref<1000xf32>, %B: memref<1000xf32>, %C: memref<1000xf32>) {
  %c64 = arith.constant 64 : index
  %c1000 = arith.constant 1000 : index
  loop.for %o = 0 to 16 blockIdx.x {
    %t = arith.muli %o, %c64 : index
    loop.for %in = 0 to 64 threadIdx.x {
      %i = arith.addi %t, %in : index
      %ok = arith.cmpi slt, %i, %c1000 : index
      loop.guard %ok {
        %a = memref.load %A[%i] : memref<1000xf32>
        %b = memref.load %B[%i] : memref<1000xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %C[%i] : memref<1000xf32>
      }
    }
  }
  func.return
}

// -----

// Two loops bound to threadIdx.x in one block, of 32 and 16 iterations: the
// block has 32 threads, and the shorter loop runs under `thread_id < 16`.
// CHECK-LABEL: func.func @two_stages
// CHECK:       "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK-NOT:   arith.cmpi
// CHECK:       memref.store
// CHECK:       %[[T:.*]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:  %[[N:.*]] = arith.constant 16 : index
// CHECK-NEXT:  %[[IN:.*]] = arith.cmpi slt, %[[T]], %[[N]] : index
// CHECK-NEXT:  loop.guard %[[IN]]
func.func @two_stages(%A: memref<4x32xf32>, %B: memref<4x16xf32>) {
  %one = arith.constant 1.0 : f32
  loop.for %b = 0 to 4 blockIdx.x {
    loop.for %t = 0 to 32 threadIdx.x {
      memref.store %one, %A[%b, %t] : memref<4x32xf32>
    }
    loop.for %u = 0 to 16 threadIdx.x {
      memref.store %one, %B[%b, %u] : memref<4x16xf32>
    }
  }
  func.return
}
