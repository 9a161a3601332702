"""A ChainSpec and every element in it are frozen: one parse is shared by identity."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel, ValidationError

from chains.core import model
from chains.core.model import ChainSpec, commit_steps


def spec() -> ChainSpec:
    return ChainSpec.model_validate(
        {
            "id": "c",
            "handles": [{"id": "offer_id", "minted_by": "search", "source": "documented"}],
            "actions": [
                {"id": "search", "effect": "mint", "output": {"handles": ["offer_id"]}},
                {
                    "id": "book",
                    "effect": "commit",
                    "input": {"handles": ["offer_id"]},
                    "idempotency": {"mode": "keyed"},
                },
            ],
            "gates": [{"id": "consent", "audience": "user", "outcomes": {"ok": "ok"}}],
            "verdict_table": [{"signal": "http:410", "verdict": "rewind(to: search)"}],
            "policy": {"per_step": {"read": {"attempts": 3}}},
        }
    )


def models_inside(cls: type[BaseModel]) -> set[type[BaseModel]]:
    """``cls`` and every model class its fields can hold, however deeply."""
    found: set[type[BaseModel]] = set()
    todo: list[object] = [cls]
    while todo:
        kind = todo.pop()
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            if kind not in found:
                found.add(kind)
                todo += [field.annotation for field in kind.model_fields.values()]
        else:
            todo += typing.get_args(kind)
    return found


def test_assigning_to_an_attribute_of_a_spec_raises():
    doc = spec()
    with pytest.raises(ValidationError, match="frozen"):
        doc.title = "changed"
    assert doc.title is None


@pytest.mark.parametrize(
    ("element", "attribute", "value"),
    [
        (lambda d: d.actions[1], "effect", "read"),
        (lambda d: d.actions[1].idempotency, "mode", "none"),
        (lambda d: d.actions[1].input, "handles", []),
        (lambda d: d.handles[0], "minted_by", "book"),
        (lambda d: d.handles[0].source, "tag", "assumed"),
        (lambda d: d.gates[0], "audience", "model"),
        (lambda d: d.gates[0].outcomes["ok"], "verdict", "retry"),
        (lambda d: d.verdict_table[0], "verdict", "retry"),
        (lambda d: d.verdict_table[0].scope, "any", True),
        (lambda d: d.policy, "escalation", []),
        (lambda d: d.policy.per_step["read"], "attempts", 1),
        (lambda d: d.policy.per_chain, "max_rewinds", 0),
    ],
)
def test_assigning_to_an_attribute_of_an_element_raises(element, attribute, value):
    doc = spec()
    before = doc.model_dump()
    with pytest.raises(ValidationError, match="frozen"):
        setattr(element(doc), attribute, value)
    assert doc.model_dump() == before


def test_every_model_a_spec_can_hold_is_frozen():
    held = models_inside(ChainSpec)
    assert {model.Action, model.Handle, model.Gate, model.VerdictRow, model.Policy} <= held
    assert [m.__name__ for m in held if not m.model_config.get("frozen")] == []


def test_a_changed_element_is_a_new_spec_and_the_old_one_keeps_its_answers():
    doc = spec()
    assert commit_steps(doc) == {"book"}
    read = doc.actions[1].model_copy(update={"effect": "read"})
    changed = doc.model_copy(update={"actions": [doc.actions[0], read]})
    assert commit_steps(changed) == frozenset()
    assert doc.actions[1].effect == "commit" and commit_steps(doc) == {"book"}
