"""The Actions tab lists the steps in the order a run walks them, and moves them."""

from __future__ import annotations

import json
import re

import pytest

from chains.core.model import main_steps
from chains.services.access import spec_of

pytestmark = pytest.mark.django_db


def step_list(body: str) -> list[str]:
    listed = body.split('id="step-list"')[1].split("</ol>")[0]
    return re.findall(r'data-move-id="([^"]+)"', listed)


def test_the_steps_are_listed_in_run_order_and_probes_and_compensators_apart(client, flight):
    body = client.get(f"{flight.url()}?tab=actions").content.decode()
    assert step_list(body) == main_steps(spec_of(flight.head()))
    side = body.split('id="side-actions"')[1].split("</ul>")[0]
    assert "probe of book_trip" in side and "undoes book_trip" in side


def test_a_step_moved_up_walks_before_the_step_it_passed(client, flight):
    steps = main_steps(spec_of(flight.head()))
    actions = [a["id"] for a in flight.head().document["actions"]]
    args = {"id": steps[1], "index": actions.index(steps[0])}
    response = client.post(
        f"{flight.url()}edit", {"op": "move_action", "args": json.dumps(args), "base": 1}
    )
    assert response.status_code == 302
    assert main_steps(spec_of(flight.head()))[:2] == [steps[1], steps[0]]


def test_the_first_step_cannot_move_up_and_the_last_cannot_move_down(client, flight):
    body = client.get(f"{flight.url()}?tab=actions").content.decode()
    steps = step_list(body)
    assert re.search(rf'aria-label="Move up {steps[0]}" disabled', body)
    assert re.search(rf'aria-label="Move down {steps[-1]}" disabled', body)


def test_a_viewer_sees_the_steps_without_move_buttons(signed_in, people, flight):
    body = signed_in(people["viewer"]).get(f"{flight.url()}?tab=actions").content.decode()
    assert "Move up" not in body and 'data-move-op="move_action"' not in body
