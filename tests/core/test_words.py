"""The sentences people read: the right article, and elements named by id rather than position."""

from __future__ import annotations

import pytest

from chains.core import formats
from chains.core.edit import EditError, apply
from chains.core.errors import DocumentError
from chains.core.formats.validation import validate_chain
from chains.core.lint import lint
from chains.core.model import ChainSpec
from chains.core.sim.scenario import ProposeEvent
from chains.core.words import article


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("unkeyed commit", "an unkeyed commit"),
        ("answer", "an answer"),
        ("owner", "an owner"),
        ("commit", "a commit"),
        ("unique key", "a unique key"),
        ("hour", "an hour"),
    ],
)
def test_the_article_follows_the_sound_of_the_first_word(phrase, expected):
    assert article(phrase) == expected


def test_a_lint_finding_calls_an_unkeyed_commit_an_unkeyed_commit():
    book = {"id": "book", "effect": "commit", "idempotency": {"mode": "none"}}
    chain = ChainSpec.model_validate({"id": "c", "actions": [book]})
    messages = [f.message for f in lint(chain).findings if f.rule == "commit.missing-confirmation"]
    assert messages and messages[0].startswith("actions[book] is an unkeyed commit with")


def test_a_proposed_answer_is_described_as_an_answer():
    event = ProposeEvent.model_validate({"propose": {"kind": "answer", "value": "yes"}})
    assert event.describe() == "proposes an answer"


def test_a_validation_problem_names_the_element_by_id_in_its_path_and_its_message():
    data = {"id": "c", "actions": [{"id": "search", "effect": "read"}, {"id": "reserve"}]}
    with pytest.raises(DocumentError) as caught:
        validate_chain(data)
    problem = caught.value.problems[0]
    assert problem.path == "actions[reserve].effect"  # what the API's location and scripts read
    assert str(problem).startswith("actions[reserve].effect: ")


def test_an_element_without_an_id_is_named_by_its_position_from_one():
    with pytest.raises(DocumentError, match=r"actions\[#1\]\.id"):
        validate_chain({"id": "c", "actions": [{"effect": "read"}]})


def test_a_refused_edit_names_the_element_by_id_in_its_message():
    doc = ChainSpec.model_validate({"id": "c", "actions": [{"id": "search", "effect": "read"}]})
    with pytest.raises(EditError) as caught:
        apply(doc, "update_action", {"id": "search", "fields": {"effect": "teleport"}})
    assert caught.value.path == "actions[search].effect"
    assert str(caught.value).startswith("actions[search].effect: expected read")


def test_an_unknown_key_on_an_element_is_reported_at_its_id():
    text = (
        "id: c\nactions:\n  - {id: search, effect: read}\n"
        "  - {id: reserve, effect: read, colour: red}\n"
    )
    [info] = [p for p in formats.load(text, format="yaml").problems if "colour" in p.message]
    assert (info.path, str(info)) == (
        "actions[reserve].colour",
        "line 4, column 41: actions[reserve].colour: unknown key 'colour' kept in extras",
    )
