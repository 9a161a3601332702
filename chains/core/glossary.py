"""What each field of a chain means, and the glossary entry that explains its word.

A field's explanation lives once, as the description of its model field
(an attribute docstring in :mod:`chains.core.model`); :func:`field_help`
finds it by the field's place in an element (``["idempotency",
"key_scope"]`` of an action) and pairs it with the glossary entry of the
word (:data:`TERMS`), so the designer's forms, the JSON Schema and the
glossary agree. The glossary is ``docs/glossary.md``: every paragraph or
list item that opens with a bold name is an entry, found by an anchor made
from that name (:func:`anchor`); :func:`glossary_html` renders it with
those anchors. It reads no file: the caller passes the text.
"""

from __future__ import annotations

import re
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from markdown_it import MarkdownIt
from pydantic import BaseModel

from .model import Action, ChainSpec, Gate, Handle, Policy, VerdictRow
from .model.elements import Source
from .model.fields import Duration
from .verdicts import Verdict

__all__ = ["KINDS", "TERMS", "Help", "anchor", "entries", "field_help", "glossary_html"]

# The model a form's fields belong to: an element kind, the policy, the chain's own
# fields ("chain"), an evidence source, or a verdict given by its parts.
KINDS: dict[str, type[BaseModel]] = {
    "action": Action,
    "handle": Handle,
    "row": VerdictRow,
    "gate": Gate,
    "policy": Policy,
    "chain": ChainSpec,
    "source": Source,
    "verdict": Verdict,
}

# The glossary entry of each model's fields ("Model"), or of one field
# ("Model.field"), which wins. Each value is an anchor of docs/glossary.md.
TERMS: dict[str, str] = {
    "Action": "action",
    "Action.effect": "effect-class",
    "Action.entry_gate": "entry-gate",
    "Action.timeout": "timeout-and-latency-hint",
    "Action.latency_hint": "timeout-and-latency-hint",
    "Action.probe_only": "probe",
    "Action.request_invariants": "request-invariants",
    "Action.preconditions": "preconditions-and-auto-repairs",
    "Action.auto_repairs": "preconditions-and-auto-repairs",
    "Action.mutates": "action",
    "Action.http": "http-binding",
    "HttpBinding": "http-binding",
    "ActionInput": "intent",
    "ActionInput.handles": "handle",
    "IntentField": "intent",
    "ActionOutput": "handle",
    "Empty": "empty",
    "BusinessExpiry": "business-expiry",
    "Idempotency": "idempotency",
    "Confirmation": "confirmation",
    "Confirmation.probe": "probe",
    "Confirmation.by_key_replay": "by-key-replay",
    "ByKeyReplay": "by-key-replay",
    "Confirmation.sweep": "sweep",
    "AsyncFinality": "async-finality",
    "Sweep": "sweep",
    "Compensation": "compensation",
    "LadderRung": "compensation",
    "Revocation": "revocation",
    "Precondition": "preconditions-and-auto-repairs",
    "AutoRepair": "preconditions-and-auto-repairs",
    "Handle": "handle",
    "Handle.derived_from": "derived-from",
    "Handle.single_use": "single-use",
    "Staleness": "staleness",
    "Staleness.contractual": "contractual-staleness",
    "Rematch": "rematch",
    "VerdictRow": "verdict-table",
    "VerdictRow.signal": "signal",
    "VerdictRow.verdict": "verdict-kinds",
    "VerdictRow.no_side_effect": "no-side-effect",
    "VerdictRow.fragile": "fragile-row",
    "KnownUnmatched": "verdict-table",
    "Independence": "derived-from",
    "Scope": "row-scope",
    "Gate": "gate",
    "Gate.audience": "audience",
    "Outcome": "gate-outcomes",
    "Gate.outcomes": "gate-outcomes",
    "GateTimeout": "gate-outcomes",
    "PayloadExpiry": "payload-expiry",
    "Policy": "policy",
    "StepPolicy": "attempts-and-backoff",
    "Backoff": "attempts-and-backoff",
    "PerChain": "per-chain-budgets",
    "EscalationStep": "escalation-ladder",
    "ChainSpec": "chain",
    "ChainSpec.variants": "variants",
    "ChainSpec.run_key": "run-key",
    "Variants": "variants",
    "Variant.only": "variants",
    "Element.source": "evidence-tags",
    "Source": "evidence-tags",
    "Verdict": "verdict-kinds",
}


@dataclass(frozen=True)
class Help:
    """A field's explanation and the glossary entry of its word."""

    text: str
    term: str


def field_help(kind: str, place: Sequence[str]) -> Help | None:
    """The help of the field at ``place`` in an element of ``kind``; None if there is none.

    A part that names no field of a mapping's values is a key of it (a
    per-step policy's effect class, an outcome's name), so it is passed over;
    ``name`` of a mapping's row is the key, explained by the mapping itself.
    An empty ``place`` is the element as a whole (its YAML editor): its class
    docstring's first line.

    >>> field_help("action", ["idempotency", "mode"]).term
    'idempotency'
    >>> field_help("policy", ["per_step", "commit", "unkeyed", "attempts"]).term
    'attempts-and-backoff'
    >>> field_help("action", ["no_such_field"]) is None
    True
    """
    model: type[BaseModel] | None = KINDS.get(kind)
    if model is not None and not place:
        summary = (model.__doc__ or "").strip().split("\n")[0]
        term = TERMS.get(model.__name__)
        return Help(summary, term) if summary and term else None
    found: tuple[type[BaseModel], str] | None = None
    keyed = False  # the last field was a mapping whose keys are names
    for part in place:
        if model is None:
            return None
        name = _field_name(model, part)
        if name is None:
            if keyed and part == "name" and found:
                continue  # a mapping's row: its name is the key, the mapping explains it
            if keyed:
                keyed = False  # a key of the mapping: the values' model stays
                continue
            return None
        found = (model, name)
        annotation = model.model_fields[name].annotation
        keyed = _is_mapping(annotation)
        model = _model_in(annotation)
    if found is None:
        return None
    owner, name = found
    text = owner.model_fields[name].description
    term = _term(owner, name)
    return Help(text, term) if text and term else None


def _field_name(model: type[BaseModel], part: str) -> str | None:
    for name, info in model.model_fields.items():
        if part in (name, info.alias):
            return name
    return None


def _term(model: type[BaseModel], name: str) -> str | None:
    for cls in model.__mro__:
        term = TERMS.get(f"{cls.__name__}.{name}")
        if term:
            return term
    return TERMS.get(model.__name__)


def _inner(annotation: Any) -> list[Any]:
    """The types an annotation may hold, through optionals, lists, mappings and Annotated."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _inner(get_args(annotation)[0])
    if origin in (Union, types.UnionType, list, dict, tuple):
        return [t for arg in get_args(annotation) for t in _inner(arg)]
    return [annotation]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The part of a document a field holds; a duration is one value, not a part."""
    models = [
        t
        for t in _inner(annotation)
        if isinstance(t, type) and issubclass(t, BaseModel) and t is not Duration
    ]
    return models[0] if models else None


def _is_mapping(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_mapping(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_is_mapping(arg) for arg in get_args(annotation))
    return origin is dict


# --- the glossary page --------------------------------------------------------------------

_ENTRY = re.compile(r"^(?:- )?\*\*(?P<name>[^*]+)\*\*", re.MULTILINE)


def anchor(name: str) -> str:
    """The anchor of a glossary entry: its first name, lower case, words joined by ``-``.

    >>> anchor("Verdict table, domain rows")
    'verdict-table'
    >>> anchor("P3, an unknown outcome is its own case.")
    'p3'
    >>> anchor("Generic rows 1–12")
    'generic-rows-1-12'
    """
    first = re.split(r"[,.(]", name, maxsplit=1)[0]
    return "-".join(re.findall(r"[a-z0-9]+", first.lower()))


def entries(text: str) -> dict[str, str]:
    """Every entry of the glossary ``text``: its anchor and its name, in order."""
    found: dict[str, str] = {}
    for match in _ENTRY.finditer(text):
        name = match["name"].strip().rstrip(".")
        found.setdefault(anchor(name), name)
    return found


def glossary_html(text: str, link: Any = None) -> str:
    """The glossary as HTML: raw HTML in the text is escaped, each entry carries its anchor.

    ``link(href)`` may rewrite a link's address (a relative link to another
    document of ``docs/``, which the app does not serve); it returns the new
    address, or None to show the link's text alone.
    """
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for i, token in enumerate(tokens):
        if token.type == "inline" and token.children:
            _tag_entry(tokens, i)
            if link is not None:
                _relink(token.children, link)
    html: str = md.renderer.render(tokens, md.options, {})
    return html


def _tag_entry(tokens: list[Any], i: int) -> None:
    children = [c for c in tokens[i].children if c.type != "text" or c.content]
    if len(children) < 2 or children[0].type != "strong_open" or i < 1:
        return
    opener = tokens[i - 1]
    if opener.type != "paragraph_open":
        return
    # In a list the item carries the anchor, so the link lands on its bullet.
    target = tokens[i - 2] if i >= 2 and tokens[i - 2].type == "list_item_open" else opener
    if not target.attrGet("id"):
        target.attrSet("id", anchor(children[1].content))
        target.attrSet("class", "entry")


def _relink(children: list[Any], link: Any) -> None:
    dropped = False
    for child in children:
        if child.type == "link_open":
            href = link(child.attrGet("href") or "")
            if href is None:
                _drop(child)
                dropped = True
            else:
                child.attrSet("href", href)
        elif child.type == "link_close" and dropped:
            _drop(child)
            dropped = False


def _drop(token: Any) -> None:
    """Render nothing for ``token`` (a link's tags, keeping the text between them)."""
    token.type, token.tag, token.attrs, token.content, token.nesting = "text", "", {}, "", 0
