"""From the chain list to a chain and its downloads, in a real browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from chains.core import formats
from chains.core.model import main_steps
from chains.models import Chain

pytestmark = pytest.mark.browser

CARD = Path(__file__).resolve().parents[2] / "fixtures" / "card-payment.yaml"


@pytest.fixture
def card():
    chain = formats.load(CARD.read_bytes(), filename=CARD.name).chains[0]
    return Chain.objects.store(formats.to_document(chain), message="import").chain, chain


def test_clicking_a_chain_opens_its_page_with_the_steps_in_order(live_server, page, card):
    stored, document = card
    page.goto(live_server.url + "/")

    page.get_by_role("link", name=stored.title).click()

    page.wait_for_url(f"**/chains/{stored.key}/")
    steps = page.locator("ol.steps li code").all_inner_texts()
    assert steps == main_steps(document)


def test_the_yaml_download_link_serves_a_document_that_reimports(live_server, page, card):
    stored, document = card
    page.goto(f"{live_server.url}/chains/{stored.key}/")
    page.click("#export-menu summary")  # the downloads are in the header's Export menu

    with page.expect_download() as info:
        page.get_by_role("link", name="YAML").first.click()

    download = info.value
    assert download.suggested_filename == f"{stored.key}-r1.yaml"
    reloaded = formats.load(Path(download.path()).read_bytes(), format="yaml").chains
    assert reloaded == [document]
