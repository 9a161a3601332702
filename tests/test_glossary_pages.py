"""The glossary page and a page per lint rule, reached from every box and every finding."""

from __future__ import annotations

import re

import pytest
from django.utils.html import escape

from chains.core import formats
from chains.core.glossary import TERMS
from chains.core.lint import RULES
from chains.core.lint.examples import EXAMPLES
from chains.core.model import EFFECT_MEANINGS
from chains.models import Chain

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(client):
    return client.get("/glossary/").content.decode()


def test_the_glossary_has_an_anchor_for_every_word_a_box_links_to(page):
    anchors = set(re.findall(r'id="([^"]+)" class="entry"', page))
    assert sorted(set(TERMS.values()) - anchors) == []


def test_the_glossary_links_to_every_lint_rule_s_page(page):
    linked = set(re.findall(r'href="/glossary/rules/([^/"]+)/"', page))
    assert linked == set(RULES)


def test_the_glossary_does_not_link_to_documents_the_app_does_not_serve(page):
    assert not re.search(r'href="[^"#]*\.md', page)


def test_a_rule_s_page_shows_the_bad_and_the_good_example_with_the_changes_marked(client):
    response = client.get("/glossary/rules/commit.unkeyed-retried/")
    html = response.content.decode()
    assert response.status_code == 200
    rule = RULES["commit.unkeyed-retried"]
    assert rule.hint in html and rule.ref in html
    bad = re.search(r'id="example-bad">.*?</figure>', html, re.S)[0]
    good = re.search(r'id="example-good">.*?</figure>', html, re.S)[0]
    assert "<del>" in bad and "<ins>" not in bad
    assert "<ins>" in good and "<del>" not in good
    assert EXAMPLES["commit.unkeyed-retried"].why.split()[0] in html


def test_an_unknown_rule_is_not_found(client):
    assert client.get("/glossary/rules/commit.no-such-rule/").status_code == 404


def test_a_finding_in_the_lint_panel_links_to_its_rule_s_page(client, team):
    bad = formats.load(EXAMPLES["commit.unkeyed-retried"].bad, format="yaml").chains[0]
    chain = Chain.objects.store(formats.to_document(bad), "import", team=team).chain
    html = client.get(f"/chains/{chain.key}/").content.decode()
    rules = re.findall(r'<a href="/glossary/rules/([^/"]+)/"[^>]*class="rule-link"', html)
    assert "commit.unkeyed-retried" in rules


PAGES = [
    ("?select=action:book_trip&tab=actions", "element-fields"),
    ("?select=handle:quote_id&tab=handles", "element-fields"),
    ("?select=gate:price_change_consent&tab=gates", "element-fields"),
    ("?select=row:F1&tab=table", "element-fields"),
    ("?tab=table", "add-row-form"),
    ("?tab=policy", "policy-form"),
    ("?tab=policy", "variants-form"),
    ("", "add-action-form"),
    ("", "add-handle-form"),
    ("", "add-gate-form"),
    ("?tab=policy", "per-action-form"),
]


@pytest.mark.parametrize(
    ("query", "editor"),
    [
        ("?select=action:book_trip&tab=actions", "element-yaml"),
        ("?tab=policy", "policy-yaml"),
        ("?tab=policy", "settings-yaml"),
    ],
)
def test_a_yaml_editor_has_its_help_beside_it(client, flight, query, editor):
    html = client.get(f"{flight.url()}{query}").content.decode()
    box = re.search(rf'<textarea[^>]*id="{editor}"[^>]*>', html)[0]
    target = re.search(r'aria-describedby="([^"]*_helptext)', box)[1]
    assert f'id="{target}"' in html


@pytest.mark.parametrize(("query", "form_id"), PAGES)
def test_every_box_of_a_form_on_the_page_has_its_help_beside_it(client, flight, query, form_id):
    html = client.get(f"{flight.url()}{query}").content.decode()
    form = re.search(rf'<form[^>]*id="{form_id}".*?</form>', html, re.S)[0]
    boxes = re.findall(r"<(?:input|select|textarea)(?![^>]*type=\"hidden\")[^>]*>", form)
    unhelped = [b for b in boxes if "_helptext" not in b]
    assert boxes and unhelped == []
    for target in re.findall(r'aria-describedby="([^"]*_helptext)', form):
        assert f'id="{target}"' in form


def test_the_legend_explains_each_effect_class_and_links_to_the_glossary(client, flight):
    html = client.get(flight.url()).content.decode()
    legend = re.search(r'<ul class="legend".*?</ul>', html, re.S)[0]
    for effect, meaning in EFFECT_MEANINGS.items():
        link = f'href="/glossary/#effect-class" target="_blank" rel="noopener">{effect}'
        assert link + f'<span class="tip" role="tooltip">{escape(meaning)}</span></a>' in legend
