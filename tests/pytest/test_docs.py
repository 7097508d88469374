"""The docs cannot go stale: the generated reference equals what the code generates,
and every code block of the README and docs/ runs.

Reference: `tilecraft.tools.gen_docs` renders docs/reference/ from the pass and
dialect registries; the committed pages must equal a fresh rendering (run
`python3 tasks.py docs` after changing a pass, an op or a docstring).

Code blocks: each page runs in a subprocess of its own, in a temporary directory
(its blocks in order, sharing one namespace, as a reader runs them one after the
other). `python` blocks are executed; `sh` blocks run each `tilecraft-*` command
in-process (no interpreter start per command) and fail on a non-zero exit; an
`mlir` block is parsed and verified. A block right after `<!-- illustrative -->`
is not run (a set-up command, a long benchmark, a fragment); one right after
`<!-- file: NAME -->` is written to NAME, for the blocks after it to read (an
`mlir` one is parsed first). Other languages (toml, diagrams) are not run.
docs/contributing-docs.md documents the markers for authors.

Run one page by hand: `python tests/pytest/test_docs.py docs/guide/models.md`.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ILLUSTRATIVE = "<!-- illustrative -->"
FILE_MARKER = re.compile(r"<!--\s*file:\s*(\S+)\s*-->")
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")
RUNNABLE = {"python", "sh", "mlir"}


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the first line of code (after the fence)
    lang: str
    code: str
    illustrative: bool
    file: str | None  # <!-- file: NAME -->: written to NAME

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a markdown page, with the marker before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else str(page)
    found: list[Block] = []
    marker = ""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i].strip())
        if m is None:
            if lines[i].strip():
                marker = lines[i].strip()
            i += 1
            continue
        fence, lang = m.groups()
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        if end == len(lines):
            raise ValueError(f"{name}:{i + 1}: code block never closed")
        file = FILE_MARKER.fullmatch(marker)
        found.append(
            Block(
                name, i + 2, lang.lower(), "\n".join(lines[i + 1 : end]) + "\n",
                illustrative=marker == ILLUSTRATIVE, file=file.group(1) if file else None,
            )
        )  # fmt: skip
        marker = ""
        i = end + 1
    return found


def pages() -> list[Path]:
    """The README and every page under docs/ but the generated reference (whose
    blocks are docstring excerpts, fragments of IR)."""
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "reference" not in p.relative_to(ROOT / "docs").parts)
    return [ROOT / "README.md", *docs]


# -- running a page (in the subprocess) -------------------------------------------------


def console_scripts() -> dict[str, str]:
    """tilecraft's command-line tools: name -> "module:function"."""
    from importlib.metadata import entry_points

    return {e.name: e.value for e in entry_points(group="console_scripts") if e.value.startswith("tilecraft.")}


def run_sh(block: Block, tools: dict[str, str]) -> None:
    from importlib import import_module

    text = re.sub(r"\\\n", " ", block.code)  # line continuations
    for offset, line in enumerate(text.splitlines()):
        argv = shlex.split(line, comments=True)
        if not argv:
            continue
        if argv[0] not in tools or set("|<>;&") & set(line.split("#")[0]):
            raise AssertionError(
                f"{block.where}: `{line.strip()}` is not a tilecraft command this test can run; "
                f"mark the block {ILLUSTRATIVE} if it is not meant to run"
            )
        module, function = tools[argv[0]].split(":")
        main = getattr(import_module(module), function)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv[1:])
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if rc:
            raise AssertionError(f"{block.where}: `{line.strip()}` exited {rc}:\n{err.getvalue()[-2000:]}")


def run_mlir(block: Block) -> None:
    from tilecraft.driver.context import parse_text
    from tilecraft.utils.diagnostics import verify_module

    verify_module(parse_text(block.code, block.where))


def run_page(page: Path) -> int:
    """Run a page's blocks in the current directory; print the first failure."""
    import matplotlib

    matplotlib.use("Agg")  # a tuning block may plot; never open a window
    tools = console_scripts()
    namespace: dict = {"__name__": "__main__"}
    ran = 0
    for block in blocks(page):
        if not runnable(block):
            continue
        try:
            if block.lang == "mlir":
                run_mlir(block)
            if block.file is not None:
                Path(block.file).write_text(block.code)
            elif block.lang == "python":
                # Blank lines before the code, so a traceback names the page's line.
                code = compile("\n" * (block.line - 1) + block.code, block.page, "exec")
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(code, namespace)
            elif block.lang == "sh":
                run_sh(block, tools)
        except Exception:
            print(f"{block.where}: {block.lang} block failed", file=sys.stderr)
            traceback.print_exc()
            return 1
        ran += 1
    print(f"{page}: {ran} blocks ran")
    return 0


# -- the tests ---------------------------------------------------------------------------


# The reference tests share one rendering (a few seconds of imports): one worker runs them.
REFERENCE_GROUP = pytest.mark.xdist_group("docs-reference")


@functools.cache
def _reference() -> dict[str, str]:
    from tilecraft.tools import gen_docs

    return gen_docs.render()


@REFERENCE_GROUP
def test_reference_is_up_to_date():
    from tilecraft.tools import gen_docs

    wrong = gen_docs.stale(pages=_reference())
    assert not wrong, (
        f"the generated reference differs from the code: {', '.join(wrong)}; "
        "run `python3 tasks.py docs` and commit the pages it writes"
    )


@REFERENCE_GROUP
def test_reference_covers_every_pass_and_op():
    from tilecraft.registry import get_all_dialects, get_all_passes

    pages = _reference()
    for name in get_all_passes():
        assert f"\n## `{name}`\n" in pages["passes.md"], name
    for name, load in get_all_dialects().items():
        for op in load().operations:
            assert f"\n### `{op.name}`\n" in pages[f"dialects/{name}.md"], op.name


@REFERENCE_GROUP
def test_stale_pages_are_named(tmp_path):
    # The check must be able to fail: an edited page, a missing one and a left-over one.
    from tilecraft.tools import gen_docs

    pages = _reference()
    gen_docs.write(tmp_path, pages)
    assert gen_docs.stale(tmp_path, pages) == []
    (tmp_path / "passes.md").write_text(pages["passes.md"].replace("fuse-ops", "fuse-opz"))
    (tmp_path / "dialects" / "te.md").unlink()
    (tmp_path / "dialects" / "gone.md").write_text("a dialect that no longer exists\n")
    assert gen_docs.stale(tmp_path, pages) == [str(tmp_path / p) for p in ("dialects/te.md", "passes.md", "dialects/gone.md")]
    gen_docs.write(tmp_path, pages)
    assert gen_docs.stale(tmp_path, pages) == [] and not (tmp_path / "dialects" / "gone.md").exists()


@REFERENCE_GROUP
def test_pass_options_are_documented_as_the_command_line_spells_them():
    pages = _reference()["passes.md"]
    assert "| `max-iterations` | `int` | `512` | The most copies of one loop body the pass makes. |" in pages
    assert "| `kn-dense` | `bool` | `true` |" in pages


def test_markers_are_known():
    """A misspelled marker would silently run (or skip) a block."""
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for comment in re.findall(r"<!--.*?-->", text):
            assert comment == ILLUSTRATIVE or FILE_MARKER.fullmatch(comment), (
                f"{page.relative_to(ROOT)}: unknown marker {comment}; "
                f"use {ILLUSTRATIVE} or <!-- file: NAME -->"
            )


def test_blocks_found():
    # The extractor must see the README's tour, or every page would pass by running nothing.
    found = blocks(ROOT / "README.md")
    assert [b.lang for b in found if b.lang in RUNNABLE and not b.illustrative][:3] == ["python", "mlir", "sh"]
    assert any(b.file == "mm.mlir" for b in found)


def test_an_illustrative_block_is_skipped_and_a_failing_one_reported(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- illustrative -->\n```python\nraise SystemExit(3)\n```\n\n"
        "```python\nx = 1\n```\n\n```python\nassert x == 2, 'x is 1'\n```\n"
    )
    done = subprocess.run(
        [sys.executable, __file__, str(page)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert f"{page}:11: python block failed" in done.stderr
    assert "x is 1" in done.stderr


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def pytest_generate_tests(metafunc):
    if "page" in metafunc.fixturenames:
        metafunc.parametrize("page", pages(), ids=_page_id)


def runnable(block: Block) -> bool:
    return not block.illustrative and (block.lang in RUNNABLE or block.file is not None)


def test_code_blocks_run(page: Path):
    if not any(runnable(b) for b in blocks(page)):
        return  # nothing to run: spare the interpreter start
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MPLBACKEND="Agg")
        done = subprocess.run(
            [sys.executable, __file__, str(page)], cwd=tmp, env=env, capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, (
        f"a code block of {page.relative_to(ROOT)} failed (mark it {ILLUSTRATIVE} if it is not "
        f"meant to run):\n{done.stderr[-4000:]}"
    )


if __name__ == "__main__":
    sys.exit(run_page(Path(sys.argv[1])))
