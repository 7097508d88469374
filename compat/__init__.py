"""The TVM-spelled surface of tilecraft (`import tilecraft as tvm`), as TVM's tutorials use it.

Its modules are importable under the names TVM gives them (`tilecraft.tir`,
`tilecraft.contrib`, `tilecraft.target`, `tilecraft.testing`, `tilecraft.nd`;
see the package root), and live here:

- `tir.py`: the scalar functions te programs call (`tvm.tir.exp`, `call_packed`);
- `contrib.py`: `cblas.matmul`, `utils.tempdir`, `cc.create_shared`;
- `target.py`: `Target` and `resolve`, for the `llvm` and `accel` targets;
- `testing.py`: `assert_allclose`.

What the layers below use of TVM's runtime is in `utils/` so that they need not
import this package: `NDArray` and devices (`utils/ndarray.py`, `tilecraft.nd`),
the global functions of `te.extern` (`utils/packed_funcs.py`), `time_evaluator`
(`utils/time_evaluator.py`) and the error for TVM names tilecraft lacks
(`utils/unsupported.py`).
"""

from tilecraft.utils.unsupported import WHERE_TILECRAFT_RUNS, UnsupportedError

__all__ = ["WHERE_TILECRAFT_RUNS", "UnsupportedError"]
