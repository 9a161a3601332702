"""The workspace's edit form: posted field families read into the API's ``EditIn``."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from django.http import QueryDict

from chains.core.edit import EditError
from chains.views.edit_form import FAMILIES, read_edit
from chains.views.forms import FormError


def posted(text: str) -> QueryDict:
    return QueryDict(f"base=3&op=update_handle&{text}")


def test_op_and_base_are_read_as_the_api_reads_them():
    edit = read_edit(posted("arg.id=x"))
    assert (edit.op, edit.base, edit.args) == ("update_handle", 3, {"id": "x"})


def test_a_base_below_one_is_refused_naming_the_field():
    with pytest.raises(FormError, match=r"^base: "):
        read_edit(QueryDict("base=0&op=add_handle"))


def test_a_dotted_path_builds_nested_arguments_and_empty_arg_boxes_are_left_out():
    edit = read_edit(posted("arg.fields.id=R1&arg.fields.fragile=&set.fields.timeout="))
    assert edit.args == {"fields": {"id": "R1", "timeout": None}}


def test_lists_keep_their_non_empty_values_and_setlist_may_clear():
    edit = read_edit(posted("list.fields.only=a&list.fields.only=&setlist.fields.derived_from="))
    assert edit.args == {"fields": {"only": ["a"], "derived_from": []}}


def test_a_checkbox_after_its_hidden_false_posts_its_last_value_as_yaml():
    assert read_edit(posted("yaml.single_use=false&yaml.single_use=true")).args == {
        "single_use": True
    }


def test_the_verdict_builder_writes_one_expression_at_fields_verdict():
    edit = read_edit(posted("verdict.type=rewind&verdict.to=search"))
    assert edit.args == {"fields": {"verdict": "rewind(to: search)"}}


def test_json_args_and_field_families_are_merged():
    edit = read_edit(posted("args=%7B%22index%22%3A%200%7D&arg.id=R2"))
    assert edit.args == {"index": 0, "id": "R2"}


def test_unreadable_yaml_names_the_posted_field():
    with pytest.raises(EditError, match=r"^yaml.fields: not valid YAML"):
        read_edit(posted("yaml.fields=a%3A%20%5B1"))


def test_a_family_without_a_path_names_the_field():
    with pytest.raises(FormError, match=r"^arg\.: the field name needs a path"):
        read_edit(posted("arg.=x"))


def test_a_path_through_a_value_that_is_not_an_object_names_the_field():
    with pytest.raises(FormError, match=r"^arg.id.x: id is not an object$"):
        read_edit(posted("arg.id=a&arg.id.x=b"))


def test_every_field_family_is_described_for_people_in_the_designer_docs():
    text = (Path(__file__).resolve().parent.parent / "docs" / "designer.md").read_text()
    table = text.split("## Posting edits from a script")[1].split("\n## ")[0]
    for family in [*FAMILIES, "verdict"]:
        assert f"| `{family}.<" in table, family


@pytest.mark.parametrize("text", ["²", "--5", "-²"])
def test_a_whole_number_box_with_digits_int_cannot_read_names_the_field(text):
    with pytest.raises(FormError, match=r"^int.fields.budget: expected a whole number"):
        read_edit(QueryDict(f"base=3&op=update_handle&int.fields.budget={quote(text)}"))


@pytest.mark.parametrize("family", ["rows", "named"])
def test_a_row_whose_number_is_not_plain_digits_is_no_row(family):
    rows = f"{family}.fields.x=&arg.fields.x.0.name=a&arg.fields.x.{quote('²')}.name=b"
    edit = read_edit(posted(rows))
    assert edit.args["fields"]["x"] in ([{"name": "a"}], {"a": {}})
