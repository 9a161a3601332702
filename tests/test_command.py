"""``manage.py chain`` imports, exports and describes chain documents through the core."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from chains.core import formats
from chains.models import Chain, ChainQuerySet, Revision

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

DEMO = """\
id: demo
description: tiny chain
handles:
  - {id: search_id, minted_by: search, derived_from: []}
actions:
  - {id: search, effect: read, output: {handles: [search_id]}}
"""


@pytest.fixture
def demo_file(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(DEMO)
    return path


def chain(*args: str) -> str:
    out = StringIO()
    call_command("chain", *args, stdout=out)
    return out.getvalue()


def test_import_stores_each_chain_and_reports_counts(demo_file):
    out = chain("import", str(demo_file))
    assert "chain demo: 1 handles, 1 actions, 0 gates" in out
    assert "stored demo: new revision 1" in out
    revision = Chain.objects.get(key="demo").head()
    assert revision.number == 1
    assert revision.message == "import demo.yaml"
    assert revision.document["id"] == "demo"


def test_importing_the_same_file_twice_adds_no_revision(demo_file):
    chain("import", str(demo_file))
    out = chain("import", str(demo_file))
    assert "stored demo: unchanged, head is revision 1" in out
    assert Revision.objects.count() == 1


def test_dry_run_stores_nothing(demo_file):
    out = chain("import", str(demo_file), "--dry-run")
    assert "chain demo:" in out
    assert "stored" not in out
    assert not Chain.objects.exists()


def test_json_report_lists_chains_problems_and_what_was_stored(demo_file):
    report = json.loads(chain("import", str(demo_file), "--json"))
    assert [c["id"] for c in report["chains"]] == ["demo"]
    assert report["chains"][0]["handles"] == 1
    assert report["problems"] == []
    assert report["stored"] == [{"id": "demo", "team": "-", "revision": 1, "created": True}]


def test_explicit_format_is_passed_to_the_loader(demo_file):
    assert "chain demo:" in chain("import", str(demo_file), "--format", "yaml")


def test_a_file_without_chains_fails_and_still_reports_its_problems(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("id: [unclosed\n")
    out = StringIO()
    with pytest.raises(CommandError, match="no chain found"):
        call_command("chain", "import", str(path), "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["chains"] == []
    assert report["problems"]
    assert all(set(p) >= {"line", "column", "path", "message"} for p in report["problems"])
    assert not Chain.objects.exists()


def test_human_report_prints_problems_with_their_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("id: demo\nactions: [unclosed\n")
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("chain", "import", str(path), stdout=out)
    assert "line " in out.getvalue()


def test_import_stores_the_usable_chains_of_a_compile_with_an_error_as_the_page_would():
    """The CLI needs no confirmation: running it is the operator's; errors come first."""
    path = FIXTURES / "import-problems" / "parcel-lockers.md"
    report = json.loads(chain("import", str(path), "--json"))
    assert [s["id"] for s in report["stored"]] == ["locker_reserve", "locker_release"]
    assert [(p["severity"], p["line"]) for p in report["problems"]] == [
        ("error", 36),
        ("info", 16),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_failed_import_writes_nothing(demo_file, monkeypatch):
    real_store = ChainQuerySet.store

    def store_then_fail(self, document, message="", **kw):
        real_store(self, document, message, **kw)
        raise RuntimeError("disk full")

    monkeypatch.setattr(ChainQuerySet, "store", store_then_fail)
    with pytest.raises(RuntimeError):
        chain("import", str(demo_file))
    assert not Chain.objects.exists()
    assert not Revision.objects.exists()


def test_files_over_the_upload_limit_are_refused(demo_file, settings):
    settings.CHAIN_UPLOAD_MAX_BYTES = 10
    with pytest.raises(CommandError, match="larger than the 10 bytes"):
        chain("import", str(demo_file))


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        chain("import", str(tmp_path / "nope.yaml"))


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_prints_the_head_document(demo_file, fmt):
    chain("import", str(demo_file))
    out = chain("export", "demo", "--format", fmt)
    document = json.loads(out) if fmt == "json" else yaml.safe_load(out)
    assert document["id"] == "demo"
    assert document["description"] == "tiny chain"


def test_export_as_md_prints_the_design_document_that_imports_back_to_the_chain(demo_file):
    chain("import", str(demo_file))
    out = chain("export", "demo", "--format", "md")
    assert out.startswith("# Design document: `demo`\n")
    assert "## 11. Boundary recap" in out
    result = formats.load(out, format="md")
    assert result.errors == []
    assert [formats.to_document(c) for c in result.chains] == [
        Chain.objects.get(key="demo").head().document
    ]


def test_export_of_an_unknown_chain_fails():
    with pytest.raises(CommandError, match="ghost is neither a file nor a stored chain"):
        chain("export", "ghost")


def test_schema_prints_a_json_schema():
    schema = json.loads(chain("schema"))
    assert isinstance(schema, dict)
    assert "properties" in schema or "$defs" in schema
