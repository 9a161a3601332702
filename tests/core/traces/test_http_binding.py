"""Matching an HTTP call to the action bound to its method and path template."""

from __future__ import annotations

import pytest

from chains.core.traces.http import route_of

from .traced import duffel


def step(method: str, url: str) -> tuple[str, dict[str, str]] | None:
    found = route_of(duffel(), method, url)
    return None if found is None else (found[0].id, found[1])


def test_a_path_parameter_matches_one_segment_and_is_read():
    assert step("GET", "/air/orders/ord_1") == ("get_order", {"order_id": "ord_1"})


def test_a_parameter_matches_no_more_than_one_segment():
    assert step("GET", "/air/orders/ord_1/extra") is None


def test_a_host_and_a_base_path_before_the_template_are_ignored():
    assert step("GET", "https://api.duffel.com/v2/air/offers/off_1?x=1") == (
        "get_offer",
        {"offer_id": "off_1"},
    )


def test_the_method_must_match_in_any_case():
    assert step("post", "/air/orders")[0] == "create_order"
    assert step("DELETE", "/air/orders") is None


def test_the_template_with_more_literal_segments_wins():
    url = "/air/order_cancellations/ore_1/actions/confirm"
    assert step("POST", url) == ("confirm_order_cancellation", {"cancellation_id": "ore_1"})


def test_a_list_and_a_read_by_id_on_one_resource_are_told_apart_by_the_path():
    assert step("GET", "/air/orders?offer_id=off_1")[0] == "list_orders_by_offer"
    assert step("GET", "/air/orders/ord_1")[0] == "get_order"


@pytest.mark.parametrize("url", ["/air/orders%2Fx", "/air", "/", "https://api.duffel.com"])
def test_a_path_no_template_fits_is_no_step(url):
    assert step("GET", url) is None
