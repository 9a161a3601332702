"""Canonical YAML and JSON output of a chain document.

Canonical means one spelling per chain: in every element ``id`` comes first,
then the element's own fields in model order, then the fields every element
inherits (``only``, ``source``, ``extras``); fields equal to their default
are left out; verdicts and durations are written as their canonical text.
Loading the output gives back an equal chain, and dumping that chain again
gives the same text (``dump → load → dump`` is a fixpoint).

YAML quoting is left to PyYAML's representer, which quotes every string the
loader would otherwise read as something else (``yes``, ``null``, ``12:30``,
``'>25m'``, a leading ``*``); this module only chooses the layout: block
style, literal blocks for multi-line text, and flow style for short lists of
plain values (``derived_from: [search_id, selected_itinerary]``).
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import yaml
from pydantic import BaseModel

from ..model import ChainSpec

__all__ = ["canonical_document", "dump_json", "dump_yaml"]

# Fields every element inherits; written after the element's own fields.
_TAIL = ("only", "notes", "source", "extras")
# A list is written in flow style only when it is this short.
_FLOW_WIDTH = 72
# Characters that keep a scalar out of flow style unquoted.
_FLOW_UNSAFE = re.compile(r"^[:?]|[,?\[\]{}#]|:[\s,\[\]{}]")


@cache
def _field_order(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """``(attribute, key)`` pairs of ``model`` in canonical order."""
    fields = model.model_fields
    names = list(fields)
    head = [n for n in names if n == "id"]
    tail = [n for n in _TAIL if n in fields]
    middle = [n for n in names if n not in head and n not in tail]
    return tuple((n, fields[n].alias or n) for n in head + middle + tail)


def _ordered(model: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, key in _field_order(type(model)):
        if key in data:
            out[key] = _reorder(getattr(model, name), data[key])
    return out


def _reorder(value: Any, data: Any) -> Any:
    # Walk the model and its dumped data side by side: only elements are
    # reordered, never the user's own mappings (payload, extras, params).
    if isinstance(value, BaseModel) and isinstance(data, dict):
        return _ordered(value, data)
    if isinstance(value, list) and isinstance(data, list) and len(value) == len(data):
        return [_reorder(v, d) for v, d in zip(value, data, strict=True)]
    if isinstance(value, dict) and isinstance(data, dict):
        return {k: _reorder(value.get(k), d) for k, d in data.items()}
    return data


def canonical_document(spec: ChainSpec) -> dict[str, Any]:
    """The JSON-ready document of ``chain`` in canonical key order.

    >>> chain = ChainSpec(id="c", handles=[{"id": "h", "source": "assumed", "minted_by": "a"}])
    >>> list(canonical_document(chain)["handles"][0])
    ['id', 'minted_by', 'source']
    """
    data = spec.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return _ordered(spec, data)


# --- YAML --------------------------------------------------------------------


class _FlowList(list[Any]):
    """A list written inline: ``[a, b]``."""


class _FlowDict(dict[str, Any]):
    """A mapping written inline: ``{mode: natural}``."""


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Dumper(yaml.SafeDumper):
    """Block style, no aliases, lists indented under their key."""

    def ignore_aliases(self, data: Any) -> bool:  # noqa: ARG002 - PyYAML hook
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:  # noqa: ARG002
        return super().increase_indent(flow, False)

    def analyze_scalar(self, scalar: str) -> Any:
        # PyYAML quotes every ':' inside a flow collection, but the loader
        # reads ``[http:410, code:X]`` as plain text; only a ':' before a
        # space or a flow indicator (or at the end) is a mapping indicator.
        analysis = super().analyze_scalar(scalar)
        if (
            not analysis.allow_flow_plain
            and analysis.allow_block_plain
            and not _FLOW_UNSAFE.search(scalar)
            and not scalar.endswith(":")
        ):
            analysis.allow_flow_plain = True
        return analysis


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # A literal block for multi-line text; PyYAML falls back to quoting when
    # the text cannot be a block (trailing spaces, special characters). The
    # other YAML line breaks (NEL, LS, PS) and CR would be read back as
    # plain newlines anywhere but in double quotes, where they are escaped.
    style: str | None = None
    if any(ch in value for ch in "\r\x85\u2028\u2029"):
        style = '"'
    elif "\n" in value:
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_flow_list(dumper: yaml.SafeDumper, value: _FlowList) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


_Dumper.add_representer(str, _represent_str)


def _represent_flow_dict(dumper: yaml.SafeDumper, value: _FlowDict) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=True)


_Dumper.add_representer(_FlowList, _represent_flow_list)
_Dumper.add_representer(_FlowDict, _represent_flow_dict)


def _is_flow_item(item: Any) -> bool:
    if isinstance(item, str):
        return "\n" not in item and "\r" not in item and len(item) <= 40
    return item is None or isinstance(item, (bool, int, float))


def _flow_lists(data: Any) -> Any:
    """Mark short lists and small flat mappings of one-line scalars for flow style."""
    if isinstance(data, dict):
        if (
            data
            and len(data) <= 4
            and all(_IDENT.fullmatch(k) for k in data)
            and all(_is_flow_item(v) for v in data.values())
            and sum(len(k) + len(str(v)) + 4 for k, v in data.items()) <= _FLOW_WIDTH - 16
        ):
            return _FlowDict(data)
        return {k: _flow_lists(v) for k, v in data.items()}
    if isinstance(data, list):
        if (
            data
            and all(_is_flow_item(item) for item in data)
            and sum(len(str(item)) + 2 for item in data) <= _FLOW_WIDTH
        ):
            return _FlowList(data)
        return [_flow_lists(item) for item in data]
    return data


def dump_yaml(spec: ChainSpec) -> str:
    """Canonical YAML of ``chain``."""
    document = {key: _flow_lists(value) for key, value in canonical_document(spec).items()}
    return yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


# --- JSON --------------------------------------------------------------------


def dump_json(spec: ChainSpec) -> str:
    """Canonical JSON of ``chain``: two-space indent, non-ASCII kept as is."""
    return json.dumps(canonical_document(spec), indent=2, ensure_ascii=False) + "\n"
