"""The docs cannot go stale: the generated reference equals what the code generates.

`tilecraft.tools.gen_docs` renders docs/reference/ from the pass and dialect
registries; the committed pages must equal a fresh rendering (run
`python3 tasks.py docs` after changing a pass, an op or a docstring).
"""

from __future__ import annotations

import functools

import pytest

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
