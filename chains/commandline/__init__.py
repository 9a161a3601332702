"""The command line both doors share: one parser tree, the commands on chain files, their text.

``chain-designer`` (:mod:`chains.cli`, no Django) and ``manage.py chain``
(:mod:`chains.management.commands.chain`, around the database) both build
their parser with :func:`~.parser.add_commands` and run these commands;
``manage.py chain`` adds what needs the database to the same tree and passes
a :class:`~.files.Files` that also reads stored chains. Neither door imports
the other. ``parser`` declares the commands, ``commands`` runs them,
``files`` holds what they share (reading a target, picking its chain, SARIF),
``text`` words results as lines. Nothing here imports Django.
"""

from __future__ import annotations

from .commands import COMMANDS, Command, Output, version
from .files import Failed, Files, LintedFile, Loaded, read_limited, read_scenario
from .parser import FILES, Targets, add_commands

__all__ = [
    "COMMANDS",
    "FILES",
    "Command",
    "Failed",
    "Files",
    "LintedFile",
    "Loaded",
    "Output",
    "Targets",
    "add_commands",
    "read_limited",
    "read_scenario",
    "version",
]
