"""Posted forms are read through the pydantic schemas the API takes (chains/views/forms.py)."""

from typing import Literal

import pytest
from django.http import QueryDict
from pydantic import BaseModel, Field

from chains.views.forms import FormError, read_form


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
