// A loop-level function: copies its first buffer into its second. `tc.name`
// names the arguments for tilecraft-run, as convert-te-to-loop does.
func.func @copy(%In: memref<100xf32> {tc.name = "In"}, %Out: memref<100xf32> {tc.name = "Out"}) {
  loop.for %i = 0 to 100 {
    %v = memref.load %In[%i] : memref<100xf32>
    memref.store %v, %Out[%i] : memref<100xf32>
  }
  func.return
}

// Two buffers it only reads, one it writes; `Acc` it reads and writes (an
// accumulator: Acc += X * Y).
func.func @fma(%X: memref<4xf32> {tc.name = "X"}, %Y: memref<4xf32> {tc.name = "Y"}, %Acc: memref<4xf32> {tc.name = "Acc"}) {
  loop.for %i = 0 to 4 {
    %x = memref.load %X[%i] : memref<4xf32>
    %y = memref.load %Y[%i] : memref<4xf32>
    %a = memref.load %Acc[%i] : memref<4xf32>
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %a, %p : f32
    memref.store %s, %Acc[%i] : memref<4xf32>
  }
  func.return
}
