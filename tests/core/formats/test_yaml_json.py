"""Reading YAML and JSON chain documents: limits, locations, problems."""

from __future__ import annotations

import doctest
import json
import textwrap
from pathlib import Path

import pytest

from chains.core.errors import DocumentError
from chains.core.formats import MAX_BYTES, dump, json_schema, load, yamlio
from chains.core.formats.yamlio import MAX_ALIASES, MAX_DEPTH, comments

jsonschema = pytest.importorskip("jsonschema")

SMALL = textwrap.dedent(
    """\
    id: flight
    handles:
      search_id:
        minted_by: search
        staleness: {detect: [http:410, code:SEARCH_EXPIRED], ttl_hint: ">25m", refresh: search}
    actions:
      - id: search
        effect: read
        output: {payload: "itineraries[]", handles: [search_id]}
        idempotency: {mode: natural}
      - id: select
        effect: select
        input: {handles: [search_id]}
      - id: checkout
        effect: mint
      - id: create_pnr
        effect: commit
        idempotency: {mode: none}
        confirmation: {probe: get_pnr, signal: "pnr exists"}
    gates:
      price_change_consent:
        audience: user
        outcomes: {accept: ok, decline: "reselect(to: select)"}
    verdict_table:
      - signal: [http:410]
        scope: any consumer of `search_id`
        verdict: "rewind(to: search)"
    """
)


def only_problem(result):
    assert result.chains == []
    (problem,) = result.problems
    return problem


def test_a_valid_document_loads_one_chain_without_problems():
    result = load(SMALL)
    assert (result.format, [c.id for c in result.chains], result.problems) == (
        "yaml",
        ["flight"],
        [],
    )


def test_malformed_yaml_is_reported_with_line_and_column():
    problem = only_problem(load("id: c\nactions: [\n  {id: a, effect: read\n"))
    assert problem.message.startswith("malformed YAML")
    assert (problem.line, problem.column) == (4, 1)


def test_malformed_json_is_reported_with_line_and_column():
    problem = only_problem(load('{\n  "id": "c",\n  "actions": [,]\n}'))
    assert problem.message.startswith("malformed JSON")
    assert (problem.line, problem.column) == (3, 15)


def test_a_document_over_two_megabytes_is_refused_naming_the_limit():
    problem = only_problem(load(b"id: c\n" + b"#" * MAX_BYTES))
    assert "the limit is 2,097,152 bytes" in problem.message


def test_a_document_of_exactly_two_megabytes_is_read():
    text = "id: c\n"
    assert load(text + "#" * (MAX_BYTES - len(text))).chains


def billion_laughs(levels=9, width=9):
    lines = ["id: c", "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * width) + "]")
    return "\n".join(lines)


def test_an_alias_bomb_is_refused_before_it_expands():
    problem = only_problem(load(billion_laughs()))
    assert "aliases expand to more than" in problem.message
    assert problem.line is not None


def test_too_many_aliases_are_refused():
    text = "id: c\nx: &x 1\ny: [" + ", ".join(["*x"] * (MAX_ALIASES + 1)) + "]"
    problem = only_problem(load(text))
    assert f"more than {MAX_ALIASES} aliases" in problem.message


def test_a_few_aliases_and_merge_keys_are_read():
    text = "id: c\nbase: &b {a: 1, b: 2}\nx: {<<: *b, b: 3}\ny: *b\n"
    assert load(text).chains[0].extras == {
        "base": {"a": 1, "b": 2},
        "x": {"a": 1, "b": 3},
        "y": {"a": 1, "b": 2},
    }


def nested_yaml(levels):
    """A chain whose collections nest ``levels`` deep (the chain mapping is level 1)."""
    return "id: c\nx: " + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "\n"


def nested_json(levels):
    return '{"id": "c",\n "x": ' + "[" * (levels - 1) + "1" + "]" * (levels - 1) + "}"


@pytest.mark.parametrize("nested", [nested_yaml, nested_json])
def test_nesting_fifty_levels_deep_is_accepted(nested):
    assert load(nested(MAX_DEPTH)).chains


@pytest.mark.parametrize("nested", [nested_yaml, nested_json])
def test_nesting_fifty_one_levels_deep_is_refused_with_its_place(nested):
    text = nested(MAX_DEPTH + 1)
    problem = only_problem(load(text))
    assert problem.message == "nesting deeper than 50 levels of mappings and lists"
    line = text.splitlines()[1]
    opening_level_51 = line.index("[" * MAX_DEPTH) + MAX_DEPTH  # the mapping is level 1
    assert (problem.line, problem.column) == (2, opening_level_51)


@pytest.mark.parametrize(
    ("text", "fmt"),
    [("[" * 100_000, "json"), ("[" * 100_000, "yaml"), ("id: c\nx: " + "{a: " * 100_000, "yaml")],
)
def test_pathological_nesting_is_refused_without_crashing(text, fmt):
    assert "nesting deeper than 50" in only_problem(load(text, format=fmt)).message


def test_non_utf8_bytes_are_refused_with_the_place_of_the_bad_byte():
    problem = only_problem(load(b"id: c\ntitle: caf\xe9\n"))
    assert problem.message == "not UTF-8 text: byte 0xe9 is invalid"
    assert (problem.line, problem.column) == (2, 11)


def test_nul_bytes_are_refused():
    problem = only_problem(load(b"id: c\ntitle: a\x00b\n"))
    assert "NUL" in problem.message
    assert (problem.line, problem.column) == (2, 9)


def test_a_nul_written_as_a_yaml_escape_is_refused_where_it_is():
    problem = only_problem(load('id: c\ntitle: "a\\0b"\n'))
    assert problem.message == "a NUL character (\\u0000 or \\0) cannot be stored; remove it"
    assert (problem.path, problem.line) == ("title", 2)


def test_a_nul_written_as_a_json_escape_is_refused_naming_its_path():
    problem = only_problem(load('{"id": "c", "actions": [{"id": "a\\u0000", "effect": "read"}]}'))
    assert "NUL character" in problem.message
    assert problem.path == "actions[0].id"


def test_control_characters_in_yaml_are_refused_with_their_place():
    problem = only_problem(load("id: c\ntitle: a\x07b\n"))
    assert "U+0007" in problem.message
    assert (problem.line, problem.column) == (2, 9)


def test_a_byte_order_mark_is_ignored():
    assert load("\ufeffid: c\n".encode()).chains[0].id == "c"


def test_a_wrong_type_names_the_path_the_expected_values_and_the_line():
    text = SMALL.replace("idempotency: {mode: none}", "idempotency: {mode: sometimes}")
    problem = only_problem(load(text))
    assert problem.path == "actions[create_pnr].idempotency.mode"
    assert problem.message == "expected keyed | natural | none"
    assert problem.line == text.splitlines().index("    idempotency: {mode: sometimes}") + 1


def test_a_wrong_type_in_json_names_the_line_too():
    document = json.loads(json.dumps({"id": "c", "actions": [{"id": "a", "effect": "jump"}]}))
    text = json.dumps(document, indent=2)
    problem = only_problem(load(text))
    assert problem.path == "actions[a].effect"
    assert text.splitlines()[problem.line - 1].strip() == '"effect": "jump"'


def test_an_error_inside_a_mapping_form_handle_points_at_its_line():
    text = "id: c\nhandles:\n  h:\n    single_use: often\n"
    problem = only_problem(load(text))
    assert (problem.path, problem.line) == ("handles[h].single_use", 4)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("id: c\ntitle: a\ntitle: b\n", 3),
        ('{"id": "c",\n "title": "a",\n "title": "b"}', 3),
    ],
)
def test_duplicate_keys_are_refused_with_their_line(text, line):
    problem = only_problem(load(text))
    assert problem.message == "duplicate key 'title'"
    assert problem.line == line


def test_unknown_keys_are_info_problems_with_path_and_line():
    text = "id: c\nactions:\n  - id: a\n    effect: read\n    colour: red\n"
    result = load(text)
    (problem,) = result.problems
    assert (problem.severity, problem.path, problem.line) == ("info", "actions[a].colour", 5)
    assert result.chains[0].actions[0].extras == {"colour": "red"}


@pytest.mark.parametrize("text", ["", "just text", "- a\n- b\n", "null"])
def test_a_document_that_is_no_mapping_is_an_error(text):
    assert "a chain document is a mapping" in only_problem(load(text)).message


@pytest.mark.parametrize(
    "text", ["id: c\nx: !!python/object:os.system ls\n", "id: c\nx: !!int abc\n"]
)
def test_explicit_tags_that_do_not_fit_are_refused_with_their_place(text):
    problem = only_problem(load(text))
    assert "cannot read" in problem.message
    assert problem.line == 2


def test_a_failed_load_returns_no_chain():
    result = load("id: c\nactions: [{id: a, effect: nope}]\n")
    assert result.chains == []
    assert result.errors


def test_json_and_yaml_of_the_same_chain_load_equal():
    (chain,) = load(SMALL).chains
    assert load(dump(chain, "json")).chains == load(dump(chain, "yaml")).chains == [chain]


def test_the_format_is_detected_from_the_content_or_the_file_name():
    (chain,) = load(SMALL).chains
    assert load(dump(chain, "json")).format == "json"
    assert load(dump(chain, "json"), filename="chain.yaml").format == "yaml"


def test_canonical_yaml_puts_id_first_and_evidence_and_extras_last():
    text = "id: c\nhandles:\n  - colour: red\n    source: assumed\n    minted_by: a\n    id: h\n"
    (chain,) = load(text).chains
    handle = dump(chain).split("handles:\n")[1]
    assert handle.splitlines() == [
        "  - id: h",
        "    minted_by: a",
        "    source: {tag: assumed}",
        "    extras: {colour: red}",
    ]


def test_canonical_yaml_writes_short_lists_inline():
    (chain,) = load(SMALL).chains
    assert "detect: [http:410, code:SEARCH_EXPIRED]" in dump(chain)


@pytest.mark.parametrize(
    "text", [">25m", "yes", "null", "12:30", "*star", "&a", "1.5e+3", "~", "2024-01-01"]
)
def test_canonical_yaml_quotes_text_that_would_read_as_something_else(text):
    (chain,) = load(json.dumps({"id": "c", "title": text})).chains
    assert load(dump(chain)).chains[0].title == text
    assert f"title: {text}\n" not in dump(chain)


def test_canonical_json_is_indented_and_leaves_defaults_out():
    (chain,) = load("id: c\nspec_version: '0.4'\nhandles: {h: {single_use: false}}\n").chains
    assert (
        dump(chain, "json")
        == '{\n  "id": "c",\n  "handles": [\n    {\n      "id": "h"\n    }\n  ]\n}\n'
    )


def test_the_json_schema_is_a_valid_draft_2020_12_schema():
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_a_dumped_document_validates_against_the_json_schema():
    (chain,) = load(SMALL).chains
    jsonschema.validate(json.loads(dump(chain, "json")), json_schema())


def test_the_json_schema_refuses_a_wrong_effect():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"id": "c", "actions": [{"id": "a", "effect": "jump"}]}, json_schema())


FIXTURES = sorted((Path(__file__).parents[3] / "fixtures").glob("*.yaml"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_a_dumped_fixture_validates_against_the_json_schema(path):
    (chain,) = load(path.read_bytes(), filename=path.name).chains
    jsonschema.validate(json.loads(dump(chain, "json")), json_schema())


def test_the_example_in_the_format_reference_is_canonical_yaml():
    reference = (Path(__file__).parents[3] / "docs" / "format.md").read_text()
    example = reference.split("## A complete example")[1].split("```yaml\n")[1].split("```")[0]
    result = load(example)
    assert result.problems == []
    assert dump(result.chains[0]) == example


COMMENTED = textwrap.dedent(
    """\
    # a chain-level comment: not a note
    id: flight
    handles:
      search_id:                # cached results behind an id
        minted_by: search
        staleness: {detect: [http:410], ttl_hint: ~30m}   # documented (OFF)
    actions:
      - id: search
        effect: read            # double-call: another cached result set
        description: "keep # this"
      - id: book                # ASSUMED
        effect: commit
        idempotency: {mode: none}
        # correlation record persisted before dispatch;
        # cancellation shield on the in-flight attempt
    gates:
      consent:
        audience: user          # money
    """
)


def test_comments_in_a_yaml_document_become_notes_of_their_elements():
    (chain,) = load(COMMENTED).chains
    assert chain.handle("search_id").notes == [
        "cached results behind an id",
        "staleness: documented (OFF)",
    ]
    assert chain.action("search").notes == ["effect: double-call: another cached result set"]
    assert chain.action("search").description == "keep # this"
    assert chain.action("book").notes == [
        "ASSUMED",
        "correlation record persisted before dispatch; "
        "cancellation shield on the in-flight attempt",
    ]
    assert chain.gate("consent").notes == ["audience: money"]


def test_notes_from_comments_survive_dump_and_load_without_doubling():
    (chain,) = load(COMMENTED).chains
    text = dump(chain)
    assert "#" not in text.replace("keep # this", "")
    (again,) = load(text).chains
    assert again == chain


def test_the_yamlio_doctests_pass():
    assert doctest.testmod(yamlio).failed == 0


@pytest.mark.parametrize(
    "text",
    [
        "a: 'x # y'\n",
        'a: "x # y"\n',
        "a: http:410#x\n",
        "a: |\n  # inside a block scalar\n",
        "a: [b,\n    'c # d']\n",
    ],
)
def test_a_hash_inside_a_value_is_not_a_comment(text):
    assert comments(text) == []


def test_a_comment_knows_its_line_column_and_the_key_it_trails():
    (c,) = comments("id: x\nb:\n  c: 1   # why\n", first_line=10)
    assert (c.line, c.column, c.key, c.text, c.trailing) == (12, 10, "c", "why", True)


# --- large documents (issue 14): libyaml reads them, the limits and lines still hold ---


def test_a_large_malformed_document_is_refused_at_its_line_with_libyamls_message(monkeypatch):
    def slow_reader(loader):
        raise AssertionError("a large document was read again by the pure-Python reader")

    monkeypatch.setattr(yamlio, "_FAST_MESSAGES_FROM", 0)
    monkeypatch.setattr(yamlio._Loader, "get_single_node", slow_reader)
    with pytest.raises(DocumentError) as refused:
        yamlio.parse_yaml("a: 1\nb: [1,\n c: 2")
    problem = refused.value.problems[0]
    assert problem.line is not None and problem.line >= 2
    assert problem.message.startswith("malformed YAML")


def test_a_json_document_near_the_size_limit_loads_with_the_lines_of_its_problems():
    notes = ["a note long enough to take some room"] * 2
    actions = [
        {"id": f"a{i}", "effect": "read", "colour": "red", "notes": notes} for i in range(9_000)
    ]
    text = json.dumps({"id": "big", "actions": actions}, indent=1)
    assert len(text) > MAX_BYTES // 2
    result = load(text, filename="big.json")
    assert len(result.chains[0].actions) == 9_000
    extra = next(p for p in result.problems if p.path == "actions[a8999].colour")
    assert extra.line == text[: text.rindex('"colour"')].count("\n") + 1


def test_a_document_without_a_hash_has_no_comments_and_is_not_scanned():
    assert comments("a: 1\nb: [x, y]\n") == []
