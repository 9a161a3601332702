"""Every box of every workspace form explains itself and links to its glossary entry."""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from chains.core.glossary import entries
from chains.views.element_forms import FORMS
from chains.views.workspace_forms import BY_ID, ElementYamlForm, _source, element_data
from tests.test_element_forms import SPEC

GLOSSARY = entries((settings.BASE_DIR / "docs" / "glossary.md").read_text(encoding="utf-8"))


def _element_forms():
    for op, form in FORMS.items():
        kind = op.removeprefix("update_")
        section = getattr(SPEC, {"row": "verdict_table"}.get(kind, f"{kind}s"))
        value = section[0]
        target = value.id or "#1"
        yield op, form(SPEC, element_data(SPEC, kind, value), target)
        yield f"{op} yaml", ElementYamlForm(SPEC, {}, target, kind=kind)


def _every_form():
    yield from _element_forms()
    for form_id, form in BY_ID.items():
        yield form_id, form(SPEC, _source(SPEC, form))


def _boxes(form):
    """Every shown field of the form and of its rows: (where, bound field, glossary entry)."""
    for name in form.fields:
        if not form.fields[name].widget.is_hidden:
            yield name, form[name], form.terms.get(name)
    for prefix, rows in getattr(form, "formsets", {}).items():
        for row in rows:
            for name in row.fields:
                yield f"{prefix}.{name}", row[name], row.terms.get(name)


FORMS_SHOWN = dict(_every_form())


@pytest.mark.parametrize("form_name", sorted(FORMS_SHOWN))
def test_every_box_of_the_form_has_help_text(form_name):
    unhelped = [where for where, box, _ in _boxes(FORMS_SHOWN[form_name]) if not box.help_text]
    assert unhelped == []


@pytest.mark.parametrize("form_name", sorted(FORMS_SHOWN))
def test_every_box_of_the_form_links_to_an_entry_of_the_glossary(form_name):
    boxes = list(_boxes(FORMS_SHOWN[form_name]))
    assert boxes
    assert [(where, term) for where, _, term in boxes if term not in GLOSSARY] == []


def test_a_box_is_described_by_its_help_and_the_help_links_to_the_glossary():
    box = FORMS_SHOWN["update_action"]["idempotency__mode"]
    described = re.search(r'aria-describedby="([^"]+)"', str(box))
    assert described and described[1] == "element-idempotency__mode_helptext"
    html = box.help_html()
    assert 'href="/glossary/#idempotency"' in html
    assert 'target="_blank"' in html  # what was typed in the form stays
    tip = '<span class="tip" role="tooltip" id="element-idempotency__mode_helptext">'
    assert tip in html


def test_a_hidden_field_carries_no_help():
    assert FORMS_SHOWN["update_action"]["target"].help_html() == ""


def test_a_backticked_word_of_the_help_is_shown_as_code():
    html = FORMS_SHOWN["update_action"]["idempotency__mode"].help_html()
    assert "<code>keyed</code>" in html


def test_the_help_of_a_box_is_its_document_field_s_description():
    from chains.core.model.actions import Idempotency

    box = FORMS_SHOWN["update_action"]["idempotency__key_scope"]
    assert box.help_text == Idempotency.model_fields["key_scope"].description
