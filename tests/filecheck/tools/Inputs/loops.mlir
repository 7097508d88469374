// A loop-level function: copies its first buffer into its second. `tc.name`
// names the arguments for tilecraft-run, as convert-te-to-loop does.
func.func @copy(%In: memref<100xf32> {tc.name = "In"}, %Out: memref<100xf32> {tc.name = "Out"}) {
  loop.for %i = 0 to 100 {
    %v = memref.load %In[%i] : memref<100xf32>
    memref.store %v, %Out[%i] : memref<100xf32>
  }
  func.return
}
