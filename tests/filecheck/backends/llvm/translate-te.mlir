// RUN: tilecraft-translate %s --emit=llvm-ir --no-opt | filecheck %s

// te-level input is lowered to loops first (tilecraft.driver.context.lower_to_loops):
// 100 = 7 x 16 split, the outer part parallel, the inner one vectorized with a
// guard for the last, partial vector.

func.func @add(%A: tensor<100xf32>, %B: tensor<100xf32>) -> tensor<100xf32> {
  %C = te.compute "C" (%i: "i") -> tensor<100xf32> {
    %a = te.read %A[%i] : tensor<100xf32>
    %b = te.read %B[%i] : tensor<100xf32>
    %s = arith.addf %a, %b : f32
    te.yield %s : f32
  }
  sched.schedule {
    %s = sched.stage %C : tensor<100xf32>
    %i = sched.axis %s "i"
    %io, %ii = sched.split %i by 16
    sched.parallel %io
    sched.vectorize %ii
  }
  func.return %C : tensor<100xf32>
}

// CHECK:     define void @add(ptr noalias nonnull align 4 dereferenceable(400) %{{.*}}, ptr noalias nonnull align 4 dereferenceable(400) %{{.*}}, ptr noalias nonnull align 4 dereferenceable(400) %{{.*}})
// 100 floats are not worth a second thread: the parallel loop's body is called
// on the caller (loop-outline-parallel caps it at one thread).
// CHECK:     call void @add_parallel0(ptr %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, i64 0, i64 7)
// CHECK:     define internal void @add_parallel0(
// The guard i < 100 varies across lanes: masked vector loads and stores. (Where
// 16 floats are two registers, AVX2, each mask passes an empty inline-asm barrier
// first, so the mask operand is not matched to the icmp: see translate.py.)
// CHECK:     icmp slt <16 x i64> %{{.*}}, splat (i64 100)
// CHECK:     %[[A:.*]] = call <16 x float> @llvm.masked.load.v16f32.p0(ptr align 4 %{{.*}}, <16 x i1> %{{.*}}, <16 x float> zeroinitializer)
// CHECK:     %[[B:.*]] = call <16 x float> @llvm.masked.load.v16f32.p0(ptr align 4 %{{.*}}, <16 x i1> %{{.*}}, <16 x float> zeroinitializer)
// CHECK:     %[[C:.*]] = fadd reassoc contract <16 x float> %[[A]], %[[B]]
// CHECK:     call void @llvm.masked.store.v16f32.p0(<16 x float> %[[C]], ptr align 4 %{{.*}}, <16 x i1> %{{.*}})
