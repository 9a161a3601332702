"""Template filters that write graph keys, so templates never spell ``kind:id`` themselves.

``{{ action.id|node_key:"action" }}`` is ``action:<id>``, the same text
:class:`chains.core.keys.GraphKey` writes for the SVG and the selection.
"""

from __future__ import annotations

from django import template

from chains.core.keys import node_key as _node_key

register = template.Library()


@register.filter
def node_key(name: str, kind: str) -> str:
    return _node_key(kind, str(name))
