// A loop-level function: copies its first buffer into its second.
func.func @copy(%In: memref<100xf32>, %Out: memref<100xf32>) {
  loop.for %i = 0 to 100 {
    %v = memref.load %In[%i] : memref<100xf32>
    memref.store %v, %Out[%i] : memref<100xf32>
  }
  func.return
}
