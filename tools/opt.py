"""`tilecraft-opt`: read IR, run a pass pipeline, print IR (xdsl-opt with diagnostics).

On top of xDSL's driver it parses with op locations, verifies op by op so an error
names `file:line:col` of the op at fault, lists every dialect and pass in `--help`
(tilecraft's, then each plugin's, found through the `xdsl.universe` entry point),
and turns every user error (bad IR, bad schedule, unknown pass, bad pass option, a
plugin that does not load or clashes with another) into one line on stderr and exit
code 1 instead of a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from tilecraft.registry import (
    Provider,
    get_all_dialects,
    get_all_passes,
    get_multiverse,
    plugins,
    providers,
)
from tilecraft.tools.errors import UserError, add_traceback_option, run_tool, writing
from tilecraft.tools.options import add_tuning_log_option, tuning_lookup
from tilecraft.utils.compile_timing import record, section
from tilecraft.utils.diagnostics import LocatedParser, verify_module
from tilecraft.utils.weights import WeightError, WeightStore, attach, referenced_names, store_of


PROG = "tilecraft-opt"


class TilecraftOptMain(xDSLOptMain):
    def __init__(self, args: Sequence[str] | None = None):
        self._line_offset = 0
        # Every `xdsl.universe` entry point, loaded once and checked for clashes
        # (xDSL's driver would load them three times and raise a bare ValueError).
        self._providers = providers()
        self._multiverse = get_multiverse(self._providers)
        super().__init__(description="tilecraft modular optimizer driver", args=args)

    def register_all_dialects(self):
        for name, factory in self._multiverse.all_dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        for name, factory in self._multiverse.all_passes.items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        for name, factory in self._multiverse.all_targets.items():
            self.available_targets.setdefault(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.prog = PROG  # (not the script's file name: python -m, in-process callers)
        arg_parser.add_argument(
            "--weights-out",
            metavar="PATH",
            help="where to save the weight store (.npz) when a pass changed it; "
            "the printed IR then names that file",
        )
        add_tuning_log_option(arg_parser)
        arg_parser.add_argument(
            "--timing",
            action="store_true",
            help="print the time each pass (and parsing, printing, translation, LLVM) "
            "took on stderr, as mlir-opt's -mlir-timing",
        )
        add_traceback_option(arg_parser)
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.epilog = "\n".join(
            [
                "tilecraft dialects: " + ", ".join(sorted(get_all_dialects())),
                "tilecraft passes:",
                *(f"  {name}" for name in sorted(get_all_passes())),
                *(line for p in plugins(self._providers) for line in _plugin_help(p)),
                "(xDSL's own dialects and passes are available too.)",
            ]
        )

    def register_all_frontends(self):
        def parse_mlir(io: IO[bytes]):
            parser = LocatedParser(
                self.ctx,
                io.read(),
                self.get_input_name(),
                line_offset=self._line_offset,
            )
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    def run(self):
        if not self.args.timing:
            return super().run()
        from tilecraft.utils.compile_timing import collect_timing

        with collect_timing() as timer:
            try:
                return super().run()
            finally:
                timer.stop()
                print(timer.report(), file=sys.stderr)

    def parse_chunk(self, chunk, file_extension, start_offset=0):
        self._line_offset = start_offset
        with section("parse"):
            return super().parse_chunk(chunk, file_extension, start_offset)

    def output_resulting_program(self, prog: ModuleOp) -> str:
        with section("output"):
            return super().output_resulting_program(prog)

    def setup_pipeline(self):
        mark = [0.0]  # when the pass now running started (--timing)

        def callback(previous_pass, module: ModuleOp, next_pass) -> None:
            if previous_pass is not None:
                record(previous_pass.name, time.perf_counter() - mark[0])
            with section("verify"):
                if not self.args.disable_verify:
                    verify_module(module)
            if previous_pass and next_pass and self.args.print_between_passes:
                print(f"// IR after {previous_pass.name}:")
                print(module)
                print()
            mark[0] = time.perf_counter()

        try:
            pipeline = PassPipeline.parse_spec(
                self.available_passes, self.args.passes, callback
            )
        # xDSL raises bare ValueErrors for bad specs, and an ArgSpecParseError
        # (a BaseException) for malformed ones.
        except (Exception, ArgSpecParseError) as e:
            raise UserError(f"bad pass pipeline '{self.args.passes}': {e}") from e
        # A named pipeline (compile-model) runs as its stages, so that the module
        # is verified, and printed with --print-between-passes, after each.
        passes = []
        for p in pipeline.passes:
            stages = getattr(p, "stages", None)
            passes.extend(stages() if callable(stages) else [p])
        self.pipeline = PassPipeline(tuple(passes), callback)

    def prepare_input(self):
        try:
            return super().prepare_input()
        except ValueError as e:  # "Unrecognized file extension 'txt'"
            raise UserError(f"{e}; pass -f mlir to read it as IR") from e

    def prepare_output(self):
        with writing(self.args.output_file):
            return super().prepare_output()

    def apply_passes(self, prog: ModuleOp):
        if not self.args.disable_verify:
            verify_module(prog)
        if self.args.tuning_log is None:
            super().apply_passes(prog)
        else:
            from tilecraft.topi.tuning import use_configs

            # Records that do not fit a schedule's knobs are refused with a
            # diagnostic here, where the log is the input under test.
            with use_configs(tuning_lookup(self.args.tuning_log, skip_invalid=False)):
                super().apply_passes(prog)
        self._save_changed_weights(prog)

    def _save_changed_weights(self, prog: ModuleOp):
        """Passes that fold weights add arrays to the module's store; the printed IR
        must name a file that holds them."""
        try:
            store = store_of(prog)
        except WeightError as e:
            raise UserError(str(e)) from e
        if store is None or not store.changed:
            return
        if self.args.weights_out is None:
            raise UserError(
                "the passes changed the weight store; pass --weights-out PATH.npz "
                "to save it (the output IR will name that file)"
            )
        # The new file holds what the printed IR names: arrays the passes replaced
        # (a weight before packing) stay in the old store only.
        names = referenced_names(prog)
        kept = WeightStore({k: v for k, v in store.arrays.items() if k in names})
        attach(prog, kept, self.args.weights_out)


def _plugin_help(provider: Provider) -> list[str]:
    """What `--help` says about one plugin: where it comes from, what it adds."""
    universe = provider.universe
    lines = [f"plugin {provider.describe()}:"]
    if universe.all_dialects:
        lines.append("  dialects: " + ", ".join(sorted(universe.all_dialects)))
    if universe.all_passes:
        lines.append("  passes:")
        lines += [f"    {name}" for name in sorted(universe.all_passes)]
    if universe.all_targets:
        lines.append("  targets: " + ", ".join(sorted(universe.all_targets)))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return run_tool(PROG, lambda: TilecraftOptMain(args=args).run(), args)


if __name__ == "__main__":
    sys.exit(main())
