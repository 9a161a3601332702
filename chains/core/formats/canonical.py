"""Canonical YAML and JSON output of a chain document.

Canonical means: fields in model order, defaults left out, verdicts and
durations as their canonical text. Loading the output gives back an equal
chain, so dump → load → dump is a fixpoint.
"""

from __future__ import annotations

import json

import yaml

from ..model import Chain

__all__ = ["dump_json", "dump_yaml"]


class _Dumper(yaml.SafeDumper):
    """Block style, no aliases, lists indented under their key."""

    def ignore_aliases(self, data):  # noqa: ARG002 - PyYAML hook
        return True

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(chain: Chain) -> str:
    from . import to_document

    return yaml.dump(
        to_document(chain),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def dump_json(chain: Chain) -> str:
    from . import to_document

    return json.dumps(to_document(chain), indent=2, ensure_ascii=False) + "\n"
