// RUN: tilecraft-translate %s --emit=asm | filecheck %s --check-prefix=ASM
// RUN: tilecraft-translate %s --emit=llvm-ir | filecheck %s --check-prefix=IR
// RUN: tilecraft-translate %s --emit=llvm-ir --no-opt | filecheck %s --check-prefix=NOOPT
// RUN: tilecraft-translate %s --emit=obj -o %t.o && head -c 4 %t.o | filecheck %s --check-prefix=OBJ
// RUN: tilecraft-translate %s --emit=shared-lib -o %t.so && head -c 4 %t.so | filecheck %s --check-prefix=OBJ

// A register-tiled matrix multiply: a 4 x 32 accumulator tile in a "local"
// buffer, rows unrolled, columns vectorized, k serial outside them, row blocks
// in parallel. The inner loop must become packed FMAs on vector registers with
// the accumulators kept in registers (no loads or stores of the tile inside).

func.func @matmul(%A: memref<64x256xf32> {tc.name = "A"}, %B: memref<256x64xf32> {tc.name = "B"}, %C: memref<64x64xf32> {tc.name = "C"}) {
  loop.for %io = 0 to 16 parallel {
    loop.for %jo = 0 to 2 {
      %acc = loop.alloc "C.local" local : memref<4x32xf32>
      loop.for %ii = 0 to 4 unrolled {
        loop.for %ji = 0 to 32 vectorized {
          %z = arith.constant 0.0 : f32
          memref.store %z, %acc[%ii, %ji] : memref<4x32xf32>
        }
      }
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %i0 = arith.muli %io, %c4 : index
      %j0 = arith.muli %jo, %c32 : index
      loop.for %k = 0 to 256 {
        loop.for %ii = 0 to 4 unrolled {
          loop.for %ji = 0 to 32 vectorized {
            %i = arith.addi %i0, %ii : index
            %j = arith.addi %j0, %ji : index
            %a = memref.load %A[%i, %k] : memref<64x256xf32>
            %b = memref.load %B[%k, %j] : memref<256x64xf32>
            %c = memref.load %acc[%ii, %ji] : memref<4x32xf32>
            %p = arith.mulf %a, %b : f32
            %s = arith.addf %c, %p : f32
            memref.store %s, %acc[%ii, %ji] : memref<4x32xf32>
          }
        }
      }
      loop.for %ii = 0 to 4 unrolled {
        loop.for %ji = 0 to 32 vectorized {
          %i = arith.addi %i0, %ii : index
          %j = arith.addi %j0, %ji : index
          %c = memref.load %acc[%ii, %ji] : memref<4x32xf32>
          memref.store %c, %C[%i, %j] : memref<64x64xf32>
        }
      }
    }
  }
  func.return
}

// The k loop: a broadcast of A[i, k] feeds FMAs of B's vectors into
// accumulators held in registers (zmm with AVX-512, ymm with AVX2): register
// operands only, no loads or stores of the tile in between.
// ASM-LABEL: matmul:
// ASM:       vbroadcastss
// ASM:       vfmadd231ps {{%[yz]mm[0-9]+, %[yz]mm[0-9]+, %[yz]mm[0-9]+}}
// ASM-NEXT:  vfmadd231ps {{%[yz]mm[0-9]+, %[yz]mm[0-9]+, %[yz]mm[0-9]+}}
// ASM:       j{{ne|b|l}} .LBB

// The kernel is exported with its promises to LLVM; the outlined task and the
// runtime are internal; ahead-of-time code uses the pool runtime (threads of
// its own, started by the first launch).
// IR:        define void @matmul(ptr noalias nonnull align 4 dereferenceable(65536) %{{.*}}, ptr noalias nonnull align 4 dereferenceable(65536) %{{.*}}, ptr noalias nonnull align 4 dereferenceable(16384) %{{.*}})
// IR:        atomicrmw add ptr @tilecraft_pool_generation, i32 1 seq_cst
// IR:        fmul reassoc contract <32 x float>
// IR:        define internal void @matmul_parallel0_task(
// IR:        define internal {{.*}}ptr @tilecraft_pool_thread(
// IR:        call i32 @pthread_create(ptr nonnull %{{.*}}, ptr null, ptr nonnull @tilecraft_pool_thread, ptr %{{.*}})

// Before O3: the body is its own function (loop-outline-parallel) with noalias
// buffers again, the tile is a 64-byte aligned alloca, A is loaded and broadcast.
// NOOPT:     define void @matmul(ptr noalias nonnull align 4 dereferenceable(65536) %{{.*}}, ptr noalias nonnull align 4 dereferenceable(65536) %{{.*}}, ptr noalias nonnull align 4 dereferenceable(16384) %{{.*}})
// NOOPT:     define internal void @matmul_parallel0(ptr noalias nonnull align 4 dereferenceable(65536) %{{.*}}, ptr noalias nonnull align 4 dereferenceable(65536) %{{.*}}, ptr noalias nonnull align 4 dereferenceable(16384) %{{.*}}, i64 %{{.*}}, i64 %{{.*}})
// NOOPT-NEXT: {{.*}}:
// NOOPT-NEXT:  %{{.*}} = alloca [128 x float], i64 1, align 64
// NOOPT:     load <32 x float>, ptr %{{.*}}, align 4
// NOOPT:     shufflevector <32 x float> %{{.*}}, <32 x float> %{{.*}}, <32 x i32> zeroinitializer

// The object and the library are ELF files.
// OBJ:       ELF
