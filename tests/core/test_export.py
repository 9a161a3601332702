"""Export: a chain in the format a person asked for, the design document among them."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from chains.core import export as export_module
from chains.core import formats
from chains.core.design_doc import design_document
from chains.core.export import EXPORT_FORMATS, FILE_SUFFIXES, ROUND_TRIP_FORMATS, export

FLIGHT = Path(__file__).resolve().parents[2] / "fixtures" / "flight-roundtrip.yaml"


@pytest.fixture(scope="module")
def flight():
    return formats.load(FLIGHT.read_bytes(), filename=FLIGHT.name).chains[0]


def test_the_module_doctests_pass():
    assert doctest.testmod(export_module).failed == 0


def test_exporting_as_md_gives_the_design_document(flight):
    assert export(flight, "md") == design_document(flight)


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_exporting_as_yaml_or_json_gives_the_canonical_document(flight, fmt):
    assert export(flight, fmt) == formats.dump(flight, fmt)


@pytest.mark.parametrize("fmt", ROUND_TRIP_FORMATS)
def test_every_round_trip_format_imports_back_to_the_same_chain(flight, fmt):
    name = f"flight.{FILE_SUFFIXES[fmt]}"
    (again,) = formats.load(export(flight, fmt), filename=name).chains
    assert again == flight


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_every_export_format_has_a_file_suffix(fmt):
    assert FILE_SUFFIXES[fmt].endswith(("yaml", "json", "md"))


def test_the_formats_package_writes_no_design_document(flight):
    with pytest.raises(ValueError, match="expected yaml or json"):
        formats.dump(flight, "md")  # type: ignore[arg-type]
