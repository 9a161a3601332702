"""The workspace's layout state without JavaScript: ``?wide=1`` gives the Table or
Coverage tab the whole width, ``?sev=`` filters the lint summary and panel, and
links and forms carry both along (chains/views/workspace.py ``layout_state``)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings

from chains.core import formats
from chains.core.lint import lint
from chains.models import Chain

pytestmark = pytest.mark.django_db

UNSAFE = Path(settings.BASE_DIR) / "fixtures" / "unsafe-retry-booking.yaml"


@pytest.fixture
def unsafe() -> Chain:
    """A chain with findings of every severity (error, warning, info)."""
    chain = formats.load(UNSAFE.read_bytes(), filename=UNSAFE.name).chains[0]
    return Chain.objects.store(formats.to_document(chain), message="import").chain


def severities(chain: Chain) -> Counter:
    return Counter(f.severity for f in lint(formats.from_document(chain.head().document)).findings)


def page(client, chain: Chain, query: str = "") -> str:
    return client.get(f"{chain.url()}{query}").content.decode()


def section(body: str, marker: str) -> str:
    return body.split(marker)[1].split("</section>")[0]


def panel_severities(body: str) -> set[str]:
    return set(re.findall(r'<tr class="severity-(\w+)"', section(body, 'id="lint-panel"')))


def summary_severities(body: str) -> set[str]:
    return set(re.findall(r'<li class="severity-(\w+)"', section(body, 'id="lint-summary"')))


def href(body: str, anchor_id: str) -> str:
    return body.split(f'id="{anchor_id}"')[0].rsplit('href="', 1)[1].split('"')[0]


# --- full width -----------------------------------------------------------------------


def test_wide_gives_the_table_tab_the_whole_width(client, unsafe):
    body = page(client, unsafe, "?tab=table&wide=1")
    assert 'class="ws-body wide"' in body
    assert 'data-wide="1"' in body


def test_the_table_tab_offers_a_link_to_full_width_and_one_back(client, unsafe):
    narrow = page(client, unsafe, "?tab=table")
    assert "&amp;wide=1" in href(narrow, "wide-toggle")
    wide = page(client, unsafe, "?tab=table&wide=1")
    assert "&amp;wide=1" not in href(wide, "wide-toggle")
    assert "Side panel" in wide.split('id="wide-toggle"')[1].split("</a>")[0]


def test_wide_is_ignored_on_tabs_that_do_not_need_the_width(client, unsafe):
    body = page(client, unsafe, "?tab=actions&wide=1")
    assert 'class="ws-body"' in body
    assert 'id="wide-toggle"' not in body


def test_tab_links_keep_wide_between_table_and_coverage_only(client, unsafe):
    nav = page(client, unsafe, "?tab=table&wide=1").split('class="tabs"')[1].split("</nav>")[0]
    coverage = re.search(r'href="(\?tab=coverage[^"]*)"', nav).group(1)
    actions = re.search(r'href="(\?tab=actions[^"]*)"', nav).group(1)
    assert "wide=1" in coverage
    assert "wide" not in actions


def test_the_state_fields_of_every_form_carry_wide_and_the_filter(client, unsafe):
    body = page(client, unsafe, "?tab=table&wide=1&sev=error")
    assert body.count('name="wide" value="1"') == body.count('name="base"')
    assert body.count('name="sev" value="error"') == body.count('name="base"')


def test_a_plain_edit_from_the_wide_table_comes_back_to_it(client, unsafe):
    answer = client.post(
        f"{unsafe.url()}edit",
        {
            "base": "1",
            "op": "move_row",
            "args": '{"id": "U3", "index": 0}',
            "tab": "table",
            "view": "handles",
            "wide": "1",
            "sev": "warning",
        },
    )
    assert answer.status_code == 302
    assert "wide=1" in answer.url and "sev=warning" in answer.url


def test_a_comment_from_the_workspace_comes_back_with_the_layout(client, unsafe):
    answer = client.post(
        f"{unsafe.url()}comments",
        {
            "revision": "1",
            "from": "workspace",
            "anchor": "chain",
            "body": "looks risky",
            "tab": "coverage",
            "wide": "1",
            "sev": "error",
        },
    )
    assert answer.status_code == 303
    assert "wide=1" in answer.url and "sev=error" in answer.url


# --- the lint summary and the severity filter ------------------------------------------


def test_the_lint_summary_counts_findings_by_severity(client, unsafe):
    counts = severities(unsafe)
    summary = section(page(client, unsafe), 'id="lint-summary"')
    for name, label in (("error", "Errors"), ("warning", "Warnings"), ("info", "Info")):
        assert f"{label} <b>{counts[name]}</b>" in summary


def test_the_lint_summary_names_the_first_findings_and_links_to_the_panel(client, unsafe):
    summary = section(page(client, unsafe), 'id="lint-summary"')
    assert summary.count("<li ") == 3
    assert f"All {sum(severities(unsafe).values())} findings" in summary
    assert 'href="#lint-panel"' in summary


def test_a_severity_filter_lists_only_that_severity_in_summary_and_panel(client, unsafe):
    body = page(client, unsafe, "?sev=warning")
    assert panel_severities(body) == {"warning"}
    assert summary_severities(body) == {"warning"}
    assert len(re.findall(r'<tr class="severity-warning"', body)) == severities(unsafe)["warning"]


def test_without_a_filter_every_severity_is_listed(client, unsafe):
    assert panel_severities(page(client, unsafe)) == {"error", "warning", "info"}


def test_an_unknown_severity_is_ignored(client, unsafe):
    body = page(client, unsafe, "?sev=fatal")
    assert panel_severities(body) == {"error", "warning", "info"}
    assert 'data-sev=""' in body


def test_the_filter_marks_the_chosen_severity_and_offers_all(client, unsafe):
    summary = section(page(client, unsafe, "?sev=info"), 'id="lint-summary"')
    assert 'class="sev-info active"' in summary
    assert re.search(r'href="[^"]*&amp;sev="[^>]*class="sev-all"', summary)


def test_a_filter_with_nothing_to_show_says_so(client):
    chain = formats.load(
        "id: tiny\nactions:\n  - {id: look, effect: read}\n", format="yaml"
    ).chains[0]
    stored = Chain.objects.store(formats.to_document(chain), message="import").chain
    counts = severities(stored)
    missing = next(s for s in ("error", "warning", "info") if not counts[s])
    body = page(client, stored, f"?sev={missing}")
    assert f"No {missing} findings." in section(body, 'id="lint-panel"')


def test_the_count_of_findings_not_listed_counts_only_the_filtered_severity(
    client, unsafe, settings
):
    settings.WORKSPACE_FINDINGS_SHOWN = 1
    warnings = severities(unsafe)["warning"]
    panel = section(page(client, unsafe, "?sev=warning"), 'id="lint-panel"')
    assert f"{warnings - 1} more are not" in panel


def test_finding_links_keep_the_filter(client, unsafe):
    panel = section(page(client, unsafe, "?sev=error"), 'id="lint-panel"')
    links = re.findall(r'href="([^"]*)" class="finding-link"', panel)
    assert links and all("sev=error" in link for link in links)


def test_quick_fixes_loaded_on_demand_keep_the_filter_in_their_forms(client, settings):
    settings.WORKSPACE_EAGER_FIXES = 0
    text = "id: gates\nactions:\n  - {id: ask, effect: read}\ngates:\n"
    text += "  - {id: g0, audience: user, outcomes: {yes: ok, no: dead_end}}\n"
    chain = formats.load(text, format="yaml").chains[0]
    stored = Chain.objects.store(formats.to_document(chain), message="import").chain
    body = page(client, stored, "?sev=error")
    url = re.search(r'hx-get="([^"]*)"', section(body, 'id="lint-panel"')).group(1)
    answer = client.get(url.replace("&amp;", "&"), HTTP_HX_REQUEST="true").content.decode()
    assert 'name="op" value="update_gate"' in answer
    assert 'name="sev" value="error"' in answer


def test_row_tools_come_before_the_row_in_the_verdict_table(client, unsafe):
    row = page(client, unsafe, "?tab=table").split('class="domain-row')[1].split("</tr>")[0]
    assert row.index('class="row-tools"') < row.index("<code>U1</code>")


def test_the_page_sets_no_panel_width_of_its_own(client, unsafe):
    body = page(client, unsafe)
    assert 'id="ws-resizer"' in body
    assert "--side-width" not in body  # only layout.js sets it, on <html>
