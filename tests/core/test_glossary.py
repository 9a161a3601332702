"""The glossary: its entries, their anchors, and the help of every document field."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from chains.core.glossary import KINDS, TERMS, _model_in, anchor, entries, field_help, glossary_html

GLOSSARY = (Path(__file__).parents[2] / "docs" / "glossary.md").read_text(encoding="utf-8")


def _models() -> dict[str, type[BaseModel]]:
    """Every model a form's field may belong to, by class name (the element kinds and below)."""
    found: dict[str, type[BaseModel]] = {}
    todo = list(KINDS.values())
    while todo:
        model = todo.pop()
        for cls in model.__mro__:
            if isinstance(cls, type) and issubclass(cls, BaseModel) and cls is not BaseModel:
                found.setdefault(cls.__name__, cls)
        for info in model.model_fields.values():
            inner = _model_in(info.annotation)
            if inner is not None and inner.__name__ not in found:
                todo.append(inner)
    return found


MODELS = _models()


def _walk(model, place, seen):
    """Every field's place under ``model``, each model entered once (the policy nests itself)."""
    if model in seen:
        return
    seen.add(model)
    for name, info in model.model_fields.items():
        yield place + [info.alias or name]
        inner = _model_in(info.annotation)
        if inner is not None:
            yield from _walk(inner, place + [info.alias or name], seen)


def _fields():
    for kind, model in KINDS.items():
        for place in _walk(model, [], set()):
            yield kind, place


def test_every_term_names_a_model_or_one_of_its_fields():
    wrong = []
    for key in TERMS:
        model, _, field = key.partition(".")
        if model not in MODELS or (field and field not in MODELS[model].model_fields):
            wrong.append(key)
    assert wrong == []


def test_every_term_is_an_entry_of_the_glossary():
    assert sorted(set(TERMS.values()) - set(entries(GLOSSARY))) == []


def test_every_field_of_a_document_has_help_and_a_glossary_entry():
    known = entries(GLOSSARY)
    unhelped = []
    for kind, place in _fields():
        if place[-1] == "extras":
            continue  # what the grammar does not know is kept, not typed
        found = field_help(kind, place)
        if found is None or not found.text or found.term not in known:
            unhelped.append(f"{kind}: {'.'.join(place)}")
    assert unhelped == []


def test_a_part_of_a_mapping_that_names_no_field_is_its_key():
    assert field_help("gate", ["outcomes", "accept", "verdict"]) == field_help(
        "gate", ["outcomes", "decline", "verdict"]
    )


def test_the_name_of_a_mapping_s_row_is_explained_by_the_mapping():
    assert (
        field_help("action", ["input", "intent", "name"]).text
        == field_help("action", ["input", "intent"]).text
    )


def test_an_unknown_field_has_no_help():
    assert field_help("handle", ["staleness", "nonsense"]) is None


def test_a_glossary_entry_gets_the_anchor_of_its_first_name():
    html = glossary_html("**Business expiry, deadline** (SPEC §2.2). A date.\n")
    assert '<p id="business-expiry" class="entry">' in html


def test_an_entry_in_a_list_puts_its_anchor_on_the_item():
    html = glossary_html("- **I4, spent handles.** Used up.\n")
    assert '<li id="i4" class="entry">' in html


def test_raw_html_in_the_glossary_is_shown_as_text():
    html = glossary_html("A <script>alert(1)</script> here.\n")
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_a_link_the_caller_refuses_keeps_its_text_only():
    html = glossary_html("See [the format](format.md).\n", link=lambda href: None)
    assert html.strip() == "<p>See the format.</p>"


def test_anchors_of_the_glossary_are_unique():
    names = [anchor(n) for n in _bold_names(GLOSSARY)]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def _bold_names(text: str) -> list[str]:
    return [m[1] for m in re.finditer(r"^(?:- )?\*\*([^*]+)\*\*", text, re.MULTILINE)]
