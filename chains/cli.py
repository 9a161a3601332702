"""``chain-designer``: the chain commands on files, with no database and no Django settings.

For repositories and CI pipelines: ``pip install chain-designer``, then
``chain-designer lint chains/*.md``. Only the pure core runs (``chains.core``),
so nothing needs configuring. The commands, their arguments and their work
are :mod:`chains.commandline`'s, which ``manage.py chain`` runs too, with the
same JSON and the same exit statuses (see
:mod:`chains.commandline.commands`). A command that cannot run (a file
missing or too big, a bad scenario) says why on stderr and exits 1 (audit: 2).
``lint --format sarif`` writes SARIF 2.1.0, which code-review tools show
inline (docs/ci.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from chains.commandline import COMMANDS, Failed, Files, Output, add_commands, version

__all__ = ["main", "parser"]


def parser() -> argparse.ArgumentParser:
    """``chain-designer``'s parser: the commands on files and ``--version``."""
    top = argparse.ArgumentParser(
        prog="chain-designer",
        description="Check, simulate and explore chain documents (chain-re-action SPEC v0.4).",
    )
    top.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    add_commands(top)
    return top


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run one command; the exit status."""
    options = parser().parse_args(argv)
    try:
        return COMMANDS[options.subcommand](options, Output(out or sys.stdout), Files())
    except Failed as exc:
        print(f"chain-designer: {exc}", file=sys.stderr)
        return exc.status


if __name__ == "__main__":
    sys.exit(main())
