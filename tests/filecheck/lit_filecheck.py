"""`filecheck` as the lit tests run it: the filecheck package's own matcher, started
with `python -S` and without the package's console script.

    python -S lit_filecheck.py SITE_PACKAGES [filecheck arguments...]

A RUN line's `filecheck` is this (lit.cfg): the same matcher and options, but the
interpreter skips site (the virtual environment's .pth files: tilecraft's editable
finder, setuptools' hook) and `filecheck.main`, which imports importlib.metadata
for `--version`. That is ~0.1 s of each of the suite's ~300 checks. SITE_PACKAGES
is where lit's own interpreter finds the filecheck package.
"""

import io
import sys

sys.path.append(sys.argv.pop(1))

if "--help" in sys.argv or "--version" in sys.argv or "-version" in sys.argv or len(sys.argv) < 2:
    from filecheck.main import main

    sys.exit(main())

from filecheck.matcher import Matcher  # noqa: E402
from filecheck.options import parse_argv_options  # noqa: E402

# As filecheck.main.main does.
for stream in (sys.stdout, sys.stderr):
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(encoding="utf-8")
sys.exit(Matcher.from_opts(parse_argv_options(sys.argv)).run())
