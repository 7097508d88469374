// A syntax error: the loop's lower bound must be an integer literal.
func.func @f(%n: index) {
  loop.for %i = %n to 8 {
  }
  func.return
}
