"""Named pass pipelines: a list of passes wrapped in one pass, so that
`tilecraft-opt -p NAME` and the Python API run the same passes in the same order."""
