"""``chain-designer`` and ``manage.py chain`` are one command-line tree: the commands on
files declared once (``chains.commandline``), and ``manage.py chain`` adding only what
needs the database."""

from __future__ import annotations

import argparse
import ast
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from chains import cli
from chains.management.commands.chain import Command

ROOT = Path(__file__).resolve().parent.parent
FLIGHT = str(ROOT / "fixtures" / "flight-roundtrip.yaml")


def subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub


def helps(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    """Each subcommand's name and the help ``--help`` lists beside it."""
    return {a.dest: a.help for a in subcommands(parser)._choices_actions}


def options(parser: argparse.ArgumentParser, name: str) -> dict[str, str | None]:
    """A subcommand's arguments: each option string (or positional dest) and its help."""
    found = {}
    for action in subcommands(parser).choices[name]._actions:
        for key in action.option_strings or [action.dest]:
            found[key] = action.help
    return found


STANDALONE = cli.parser()
MANAGE = Command().create_parser("manage.py", "chain")


def test_manage_py_chain_lists_every_chain_designer_command_with_the_same_help():
    shared = helps(STANDALONE)
    assert set(shared) >= {"lint", "simulate", "explore", "audit", "export", "import"}
    assert {name: helps(MANAGE)[name] for name in shared} == shared


def test_manage_py_chain_adds_only_the_commands_that_change_stored_chains():
    assert set(helps(MANAGE)) - set(helps(STANDALONE)) == {"edit", "undo", "redo", "scenario"}


@pytest.mark.parametrize("name", sorted(helps(STANDALONE)))
def test_a_shared_command_takes_the_same_options_in_both_doors_but_import_and_harness(name):
    mine, theirs = options(STANDALONE, name), options(MANAGE, name)
    # import may store; harness may send its runs to the Celery workers
    added = {"import": {"--dry-run", "--team"}, "harness": {"--celery"}}.get(name, set())
    assert set(theirs) - set(mine) == added and set(mine) <= set(theirs)
    # A chain argument may also name a stored chain in manage.py: only its help says so.
    positional = {"chain", "targets"}
    assert {k: v for k, v in mine.items() if k not in positional} == {
        k: v for k, v in theirs.items() if k in mine and k not in positional
    }


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, inside functions and ``TYPE_CHECKING`` too."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update([node.module, *(f"{node.module}.{a.name}" for a in node.names)])
    return found


def test_neither_door_imports_the_other_and_both_import_the_shared_tree():
    standalone = imported_modules(ROOT / "chains" / "cli.py")
    manage = imported_modules(ROOT / "chains" / "management" / "commands" / "chain.py")
    assert not any(m.startswith("chains.management") for m in standalone)
    assert not any(m == "chains.cli" or m.startswith("chains.cli.") for m in manage)
    assert "chains.commandline" in standalone & manage


@pytest.mark.django_db
def test_manage_py_chain_exports_a_file_as_chain_designer_does():
    out = StringIO()
    call_command("chain", "export", FLIGHT, "--format", "json", stdout=out)
    mine = StringIO()
    assert cli.main(["export", FLIGHT, "--format", "json"], mine) == 0
    assert out.getvalue() == mine.getvalue()


def test_an_effect_that_is_not_one_is_refused_naming_the_effects(capsys):
    skyloom = str(ROOT / "fixtures" / "openapi" / "skyloom-air.yaml")
    code = cli.main(["openapi", skyloom, "--effect", "refund_payment=undo"], StringIO())
    err = capsys.readouterr().err
    assert code == 1 and "'undo' is not an effect (read, mint, commit, compensate, select)" in err


def test_an_openapi_document_has_a_size_limit_of_its_own(tmp_path, capsys):
    big = tmp_path / "big.yaml"
    skyloom = (ROOT / "fixtures" / "openapi" / "skyloom-air.yaml").read_text()
    big.write_text(skyloom + "\n" + "# padding\n" * 250_000)  # 2.5 MB: over a chain's 2 MiB
    out = StringIO()
    assert cli.main(["openapi", str(big), "--pick", "book_order"], out) == 0
    assert "id: book_order" in out.getvalue()


def test_an_openapi_document_over_its_limit_is_refused_saying_so():
    from chains.commandline.files import Failed, Files

    skyloom = ROOT / "fixtures" / "openapi" / "skyloom-air.yaml"
    with pytest.raises(Failed, match="larger than the 1,000 bytes an OpenAPI document may have"):
        Files(openapi_limit=1000).read_openapi(skyloom)
