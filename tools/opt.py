"""`tilecraft-opt`: read IR, run a pass pipeline, print IR (xdsl-opt with diagnostics).

On top of xDSL's driver it parses with op locations, verifies op by op so an error
names `file:line:col` of the op at fault, and turns every user error (bad IR, bad
schedule, unknown pass, bad pass option, a plugin that does not load or clashes
with another) into one line on stderr and exit code 1 instead of a traceback
(tools/errors.py).

It speaks tilecraft: `--help` lists tilecraft's dialects, passes (by level, in
pipeline order) and targets, then each plugin's (found through the `xdsl.universe`
entry point); xDSL's own passes and targets still run, but they know xDSL's
dialects, not tilecraft's, so they are listed apart, by `--help-xdsl`. `-t` writes
tilecraft's targets (tools/targets.py: mlir, llvm, asm, accel-asm), and `-v`
prints tilecraft's version and the xDSL it is built on.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.universe import XDSL_UNIVERSE
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from tilecraft.registry import (
    PluginError,
    Provider,
    get_all_dialects,
    get_multiverse,
    pass_groups,
    plugins,
    providers,
)
from tilecraft.tools.errors import UserError, add_traceback_option, run_tool, writing
from tilecraft.tools.options import add_tuning_log_option, tuning_lookup
from tilecraft.tools.options import version_format as tool_version_format
from tilecraft.tools.targets import TARGET_SUMMARIES, get_all_targets
from tilecraft.utils.compile_timing import pass_label, record, section
from tilecraft.utils.diagnostics import LocatedParser, verify_module
from tilecraft.utils.weights import WeightError, WeightStore, attach, referenced_names, store_of


PROG = "tilecraft-opt"


class TilecraftOptMain(xDSLOptMain):
    version_format = tool_version_format(PROG)  # -v (xDSL's driver fills in its version)

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
        # tilecraft's first: its `llvm` (te, loop or llvm IR -> LLVM IR) stands for
        # xDSL's (the llvm dialect only); xDSL's others stay reachable, unlisted.
        own = get_all_targets()
        for provider in plugins(self._providers):
            for name in provider.universe.all_targets:
                if name in own:
                    raise PluginError(
                        f"target '{name}' is defined twice, by tilecraft and by {provider.describe()}; "
                        "uninstall the plugin or rename its target"
                    )
        self.available_targets.update(own)
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
        arg_parser.add_argument(
            "--annotate",
            metavar="ANALYSES",
            help="after the passes, attach these analyses' facts to the ops as tc.<fact> "
            "attributes, e.g. --annotate=macs,bytes (tilecraft-analyze lists them)",
        )
        add_traceback_option(arg_parser)
        arg_parser.add_argument(
            "--help-xdsl",
            action=_ListXdsl,
            help="list xDSL's own passes and targets (they run on tilecraft IR at your own risk)",
        )
        self._speak_tilecraft(arg_parser)

    def _speak_tilecraft(self, arg_parser: argparse.ArgumentParser) -> None:
        """-p, -t and the epilog list tilecraft's passes and targets, then plugins'."""
        own_targets = list(get_all_targets())
        plugin_targets = [name for p in plugins(self._providers) for name in p.universe.all_targets]
        known = own_targets + plugin_targets

        def target(text: str) -> str:
            name = parse_spec(text).name
            if name not in self.available_targets:
                raise argparse.ArgumentTypeError(
                    f"unknown target '{name}' (tilecraft's: {', '.join(known)}; xDSL's: see --help-xdsl)"
                )
            return text

        for action in arg_parser._actions:
            if action.dest == "target":
                action.type = target
                action.metavar = "TARGET"
                action.help = f"what to write: {', '.join(known)} (default mlir; targets below)"
            elif action.dest == "version":
                action.help = "print tilecraft's version (and xDSL's) and exit"
            elif action.dest == "passes":
                action.metavar = "PIPELINE"
                action.help = "the passes to run, e.g. 'fuse-ops,plan-memory' or 'tile{sizes=32,32}' (passes below)"
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        xdsl_passes = sorted(XDSL_UNIVERSE.all_passes)
        examples = [name for name in ("canonicalize", "cse", "dce") if name in xdsl_passes]
        groups = pass_groups()
        arg_parser.epilog = "\n".join(
            [
                *_wrap("tilecraft dialects: ", ", ".join(sorted(get_all_dialects()))),
                "tilecraft passes (-p), by level, in pipeline order:",
                *(line for group, names in groups.items() for line in _wrap(f"  {group}:".ljust(16), " ".join(names))),
                "tilecraft targets (-t):",
                *(f"  {name:14}{summary}" for name, summary in TARGET_SUMMARIES.items()),
                *(line for p in plugins(self._providers) for line in _plugin_help(p)),
                *_wrap(
                    "",
                    f"xDSL's own {len(xdsl_passes)} passes ({', '.join(examples)}, ...) and its targets "
                    "run too, but they know xDSL's dialects, not tilecraft's: use them on tilecraft IR at "
                    "your own risk. --help-xdsl lists them.",
                ),
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
                record(pass_label(previous_pass), time.perf_counter() - mark[0])
            with section("verify"):
                if not self.args.disable_verify:
                    verify_module(module)
            if previous_pass and next_pass and self.args.print_between_passes:
                print(f"// IR after {pass_label(previous_pass)}:")
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
        if self.args.annotate:
            from tilecraft.analysis.framework import AnalysisManager, annotate

            manager = AnalysisManager()
            for name in (n.strip() for n in self.args.annotate.split(",")):
                if name:
                    annotate(manager.run(name, prog))

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


def _wrap(head: str, text: str, width: int = 88) -> list[str]:
    """`head` then `text`, wrapped under itself."""
    return textwrap.wrap(text, width, initial_indent=head, subsequent_indent=" " * len(head), break_on_hyphens=False)


class _ListXdsl(argparse.Action):
    """`--help-xdsl`: xDSL's own passes and targets, then exit."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        own = get_all_targets()
        targets = [name for name in XDSL_UNIVERSE.all_targets if name not in own]
        shadowed = [n for n, f in XDSL_UNIVERSE.all_targets.items() if n in own and own[n]() is not f()]
        lines = [
            "xDSL's passes and targets, reachable from tilecraft-opt. They know xDSL's dialects,",
            "not tilecraft's (graph, te, sched, loop, accel): run them on tilecraft IR at your own risk.",
            f"xDSL passes ({len(XDSL_UNIVERSE.all_passes)}):",
            *_wrap("  ", " ".join(sorted(XDSL_UNIVERSE.all_passes))),
            "xDSL targets (-t):",
            *_wrap("  ", " ".join(targets)),
            *_wrap("", f"(xDSL's {', '.join(shadowed)} target: tilecraft's of that name stands for it.)"),
        ]
        print("\n".join(lines))
        parser.exit()


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
