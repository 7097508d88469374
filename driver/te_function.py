"""The build path of a te function: a schedule and its arguments to native code.

`tilecraft.lower` prints what `lower_text` makes and `tilecraft.build` returns a
`Function` (runtime/function.py) around a `TeBuild`: the te + sched module
(`frontends/te/emit.py`) lowered with the te stages of compile-model
(`driver/context.py`), then JIT-compiled (`driver/kernels.py`), or run in parts
where `te.extern` or `te.scan` cut it (`driver/te_pieces.py`).

Symbolic sizes (`te.var` in shapes) stay symbolic: one native function takes
every size (the sizes are `?`s of the IR's types, read from the arrays). What
cannot be built that way yet is compiled once per set of sizes (`specialize`),
on first use, and kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ModuleOp

from tilecraft.driver.te_pieces import build_pieces, cut_ops, lower_module
from tilecraft.frontends import te
from tilecraft.frontends.te.symbolic import Var

DEFAULT_PRINT_SIZE = 64


def check_args(args) -> list:
    """The argument list of lower/build: te tensors and te.vars."""
    args = list(args) if isinstance(args, (list, tuple)) else [args]
    for t in args:
        if not isinstance(t, (te.Tensor, Var)):
            kind = "a cache stage" if isinstance(t, te.CacheTensor) else type(t).__name__
            raise ValueError(f"args of lower/build are tensors and te.vars, not {kind} ({t!r})")
    return args


def lower_text(s: te.Schedule, args: Sequence, name: str, sizes: dict[str, int] | None) -> str:
    """The loop-level IR of a schedule as text. `te.var` sizes stay symbolic (the
    function built for every size), unless `sizes` specializes them (by name), or
    the computation cannot be built for every size yet: then they are shown
    specialized (`DEFAULT_PRINT_SIZE` where not given), as a first comment line says."""
    args = check_args(args)
    free = te.shape_vars(args)
    given = dict(sizes or {})
    unknown = set(given) - {v.name for v in free}
    if unknown:
        raise ValueError(f"tvm.lower: sizes names {sorted(unknown)}, which are not te.var sizes here")
    if free and not given and cut_ops(args) is None:
        from tilecraft.frontends.te.emit import symbolic_sizes
        from tilecraft.utils.diagnostics import OpError

        try:
            _, module = build_pieces(s, args, name, symbolic_sizes(free), jit=False)
            return str(module)
        except (OpError, ValueError):
            pass  # shown specialized, as it will be compiled
    bindings = {id(v): int(given.get(v.name, DEFAULT_PRINT_SIZE)) for v in free}
    _, modules = build_pieces(s, args, name, bindings, jit=False)
    if isinstance(modules, ModuleOp):
        text = str(modules)
    else:  # cut at te.extern / te.scan: the pieces, in the order they run
        text = (
            "// this computation runs in parts, in this order, with te.extern calls and "
            "te.scan row loops between them\n"
            + "\n".join(
                f"// part {n}: {what}" + ("" if module is None else f"\n{module}")
                for n, (what, module) in enumerate(modules)
            )
        )
    if free:
        shown = ", ".join(f"{v.name} = {bindings[id(v)]}" for v in free)
        text = f"// te.var sizes shown specialized to {shown}\n" + text
    return text


class TeBuild:
    """A te function's compiled forms and its code for saving and showing.

    A static function has one (the key `()`). With `te.var` sizes, one native
    function takes every size when the computation can be built for all of them
    (`symbolic`: the sizes are `?`s of its types, read from the arrays); where it
    cannot yet (a reduce axis starting at a size, a schedule whose loops need
    static extents, te.extern or te.scan: `why_specialized` says which),
    one per set of sizes, compiled when first called with them."""

    def __init__(self, s: te.Schedule, args: list, name: str):
        self.entry_name = name
        self.schedule, self.args = s, args
        self.size_vars = te.shape_vars(args)
        self._compiled: dict[tuple[int, ...], Callable] = {}
        self._modules: dict[tuple[int, ...], ModuleOp | list] = {}
        self.symbolic: Callable | None = None
        self.why_specialized: str | None = None
        if self.size_vars:
            self._build_symbolic()

    def _build_symbolic(self) -> None:
        from tilecraft.driver.te_pieces import cut_ops
        from tilecraft.frontends.te.emit import symbolic_sizes
        from tilecraft.utils.diagnostics import OpError

        if cut_ops(self.args) is not None:
            self.why_specialized = "it runs in parts (te.extern or te.scan)"
            return
        try:
            names = symbolic_sizes(self.size_vars)
            compiled, module = build_pieces(self.schedule, self.args, self.entry_name, names)
        except (OpError, ValueError) as e:
            # What it cannot build for every size yet; a real error in the
            # computation shows again when the first size is compiled.
            self.why_specialized = str(e).strip().splitlines()[-1]
            return
        assert compiled is not None
        self.symbolic = compiled
        self._modules[()] = module

    def specialize(self, key: tuple[int, ...]) -> Callable:
        """The callable for the sizes `key` (one per size var, in order), compiled on first use."""
        if self.symbolic is not None:
            return self.symbolic
        compiled = self._compiled.get(key)
        if compiled is None:
            bindings = {id(v): n for v, n in zip(self.size_vars, key)}
            compiled, modules = build_pieces(self.schedule, self.args, self.entry_name, bindings)
            assert compiled is not None  # (jit: a callable)
            self._compiled[key], self._modules[key] = compiled, modules
        return compiled

    def variants(self, what: str) -> list[tuple[str, ModuleOp]]:
        """(symbol, loop-level module) per compiled set of sizes: the one function
        of a static build; for te.var sizes, one per size it was called with."""
        if any(not isinstance(m, ModuleOp) for m in self._modules.values()):
            raise NotImplementedError(
                f"{what} of a function with te.extern or te.scan stages: it runs in parts "
                "from Python, so there is no one native function"
            )
        if not self.size_vars or self.symbolic is not None:
            module = self._modules[()]
            assert isinstance(module, ModuleOp)
            return [(self.entry_name, module)]
        if not self._modules:
            raise NotImplementedError(
                f"{what} of a function with te.var sizes before any call: tilecraft compiles "
                "one function per set of sizes, when it is first called with them"
            )
        variants = []
        for key in self._modules:
            bindings = {id(v): n for v, n in zip(self.size_vars, key)}
            symbol = self.entry_name + "".join(
                f"_{''.join(c if c.isalnum() else '_' for c in v.name)}{n}" for v, n in zip(self.size_vars, key)
            )
            variants.append((symbol, lower_module(self.schedule, self.args, symbol, bindings)))
        return variants

    def source(self, fmt: str = "ll") -> str:
        """The LLVM IR (`"ll"`) or assembly (`"asm"`/`"s"`) of the compiled variants."""
        from tilecraft.driver.emit import emit_assembly, emit_llvm_ir
        from tilecraft.driver.te_library import merged_module

        module = merged_module(self.variants("get_source"))
        if fmt in ("ll", "llvm", ""):
            return emit_llvm_ir(module)
        if fmt in ("asm", "s"):
            return emit_assembly(module)
        raise ValueError(f"get_source: format {fmt!r} is not 'll' or 'asm'")

    def save(self, path: str, fmt: str = "") -> None:
        """An object file (`.o`, with `<path>.json`) or LLVM IR (`.ll`)."""
        from tilecraft.driver.te_library import save_object

        path = str(path)
        if path.endswith(".ll") or fmt == "ll":
            with open(path, "w") as f:
                f.write(self.source("ll"))
        elif path.endswith(".o") or fmt == "o":
            save_object(self, self.variants("save"), path)
        else:
            raise ValueError(f"save writes .o or .ll files, not {path!r}; use export_library for .so")

    def export_library(self, path: str) -> None:
        """A shared library (`.so`) and, next to it, `<path>.json` (driver/te_library.py)."""
        from tilecraft.driver.te_library import export_library

        export_library(self, self.variants("export_library"), str(path))
