"""Posted forms are read through the pydantic schemas the API takes (chains/views/forms.py)."""

from typing import Annotated, Literal

import pytest
from django.http import QueryDict
from pydantic import BaseModel, Field

from chains.views.forms import FormError, Prefixed, SchemaForm, read_form


class Review(BaseModel):
    reviewers: list[str] = Field(min_length=1)
    revision: int | None = None
    note: str = ""
    crashes: bool = False
    vote: Literal["approve", "request_changes"] = "approve"


def test_every_value_of_a_list_field_is_read():
    form = read_form(Review, QueryDict("reviewers=ana&reviewers=bo"))
    assert form.reviewers == ["ana", "bo"]


def test_an_empty_box_leaves_the_default():
    form = read_form(Review, QueryDict("reviewers=ana&revision=&note="))
    assert (form.revision, form.note) == (None, "")


def test_a_number_field_is_converted():
    assert read_form(Review, QueryDict("reviewers=ana&revision=3")).revision == 3


def test_a_ticked_checkbox_is_true_and_an_unticked_one_false():
    assert read_form(Review, QueryDict("reviewers=ana&crashes=on")).crashes is True
    assert read_form(Review, QueryDict("reviewers=ana")).crashes is False


def test_a_refused_value_names_its_field():
    with pytest.raises(FormError, match=r"^revision: Input should be a valid integer"):
        read_form(Review, QueryDict("reviewers=ana&revision=three"))


def test_a_missing_required_field_is_named():
    with pytest.raises(FormError, match=r"^reviewers: required$"):
        read_form(Review, QueryDict("note=hi"))


def test_an_empty_list_is_refused_by_its_schema_not_dropped():
    with pytest.raises(FormError, match=r"^reviewers: List should have at least 1 item"):
        read_form(Review, QueryDict("reviewers="))


def test_every_refused_field_is_named_once():
    with pytest.raises(FormError) as caught:
        read_form(Review, QueryDict("revision=x&vote=maybe"))
    assert str(caught.value).count(";") == 2


class Picks(BaseModel):
    effects: Annotated[dict[str, Literal["read", "commit"]], Prefixed("effect-")] = {}


def test_a_prefixed_field_holds_every_box_under_its_prefix():
    form = read_form(Picks, QueryDict("effect-book=commit&effect-look=read&effect-skip=&q=x"))
    assert form.effects == {"book": "commit", "look": "read"}


def test_a_prefixed_field_is_validated_by_its_schema_naming_the_item():
    with pytest.raises(FormError, match=r"^effects\.book: Input should be 'read' or 'commit'"):
        read_form(Picks, QueryDict("effect-book=teleport"))


def test_a_bound_form_refuses_a_value_beside_its_field_and_keeps_what_was_typed():
    form = SchemaForm(Review, QueryDict("reviewers=ana&reviewers=bo&revision=three&note=hi"))
    assert not form.is_valid()
    assert form.errors == {
        "revision": ["Input should be a valid integer, unable to parse string as an integer"]
    }
    assert (form["revision"].value(), form["note"].value()) == ("three", "hi")
    assert form["reviewers"].value() == ["ana", "bo"]


def test_a_bound_form_holds_the_schemas_instance_once_valid():
    form = SchemaForm(Review, QueryDict("reviewers=ana&revision=3&crashes=on"))
    assert form.is_valid() and form.value == Review(reviewers=["ana"], revision=3, crashes=True)


def test_an_unticked_checkbox_of_a_bound_form_is_false_whatever_the_schemas_default():
    class Launch(BaseModel):
        crashes: bool = True

    form = SchemaForm(Launch, QueryDict(""))
    assert form.is_valid() and form.value.crashes is False


def test_a_refusal_from_a_use_case_goes_beside_the_field_its_message_names():
    form = SchemaForm(Review, QueryDict("reviewers=ana"))
    assert form.is_valid()
    form.refuse(ValueError("note: say what should change"))
    form.refuse(ValueError("the review is closed"))
    assert form.errors["note"] == ["say what should change"]
    assert form.non_field_errors() == ["the review is closed"]
    assert form.message == "note: say what should change; the review is closed"


def test_an_unbound_form_shows_its_initial_values():
    form = SchemaForm(Review, initial={"revision": 4})
    assert not form.is_bound and form["revision"].value() == 4


def test_no_page_reads_the_post_but_through_the_forms_helper():
    import ast
    from pathlib import Path

    views = Path(__file__).resolve().parent.parent / "chains" / "views"
    readers = [
        f"{path.name}:{node.lineno}"
        for path in sorted(views.glob("*.py"))
        if path.name != "forms.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "POST"
    ]
    assert readers == []
