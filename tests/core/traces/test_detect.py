"""Telling a trace's shape from its content; naming it when it cannot be told."""

from __future__ import annotations

import doctest

import pytest

from chains.core import traces
from chains.core.errors import DocumentError
from chains.core.sim import audit as audit_module
from chains.core.traces import http, spec_events

from .traced import text


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("duffel-correct.har.json", "har"),
        ("duffel-correct.otlp.json", "otlp"),
        ("duffel-intent-log.jsonl", "intent-log"),
        ("flight-price-change.spec.jsonl", "spec"),
    ],
)
def test_each_fixture_shape_is_told_from_its_content(name, shape):
    assert traces.detect(text(name)) == shape


def test_the_simulators_own_lines_are_told_apart_from_the_spec_shape():
    assert traces.detect('{"seq": 1, "event_type": "attempt", "t": 3.5}\n') == "simulator"


def test_a_shape_it_cannot_tell_asks_for_the_format():
    with pytest.raises(DocumentError) as caught:
        traces.detect('{"hello": "world"}\n')
    assert "name it with --format" in str(caught.value)


def test_a_file_that_is_no_json_names_where_it_stops_being_json():
    with pytest.raises(DocumentError) as caught:
        traces.detect('{\n  "log": [\n')
    assert caught.value.problems[0].line is not None


def test_a_value_nested_too_deeply_is_refused_not_crashed_on():
    with pytest.raises(DocumentError) as caught:
        traces.detect("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in str(caught.value)


@pytest.mark.parametrize("module", [traces, spec_events, http, audit_module])
def test_the_module_doctests_pass(module):
    assert doctest.testmod(module).failed == 0
