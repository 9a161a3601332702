"""``manage.py chain export KEY --format md`` prints the chain's design document."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from chains.core import formats
from chains.models import Chain

pytestmark = pytest.mark.django_db

DEMO = """\
id: demo
description: tiny chain
handles:
  - {id: search_id, minted_by: search, derived_from: []}
actions:
  - {id: search, effect: read, output: {handles: [search_id]}}
"""


@pytest.fixture
def stored(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(DEMO)
    call_command("chain", "import", str(path), stdout=StringIO())
    return Chain.objects.get(key="demo")


def chain(*args: str) -> str:
    out = StringIO()
    call_command("chain", *args, stdout=out)
    return out.getvalue()


def test_export_as_md_prints_the_design_document_of_the_head_revision(stored):
    out = chain("export", "demo", "--format", "md")
    assert out.startswith("# Design document: `demo`\n")
    assert "## 11. Boundary recap" in out


def test_the_exported_design_document_imports_back_to_the_stored_chain(stored):
    out = chain("export", "demo", "--format", "md")
    result = formats.load(out, format="md")
    assert result.errors == []
    assert [formats.to_document(c) for c in result.chains] == [stored.head().document]


def test_export_as_md_of_an_unknown_chain_fails():
    with pytest.raises(CommandError, match="no chain with key 'ghost'"):
        chain("export", "ghost", "--format", "md")
