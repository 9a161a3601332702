"""The element base: evidence on any element, and unknown keys kept.

:class:`Element` is the base of every document element: its fields are strict,
but a key the grammar does not know is moved into ``extras`` rather than
rejected, so nothing written against another grammar version is lost; it is
frozen, because a parsed spec is shared by identity. :class:`Variant` adds
what top-level elements share (``only:`` variant scoping, SPEC §2.7, and the
authors' notes). Evidence (``source``, a :class:`Source`
with one of the :data:`EVIDENCE_TAGS`) may sit on any element and is read from
free text by :func:`source_from_text`.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .fields import StrList

EVIDENCE_TAGS = (
    "documented",
    "observed",
    "assumed",
    "spec-example",
    "documented-by-omission",
    "documented(search-snippet)",
)


# --- evidence --------------------------------------------------------------

_URL = re.compile(r"https?://[^\s)>\]`'\"]+")


class Source(BaseModel):
    """Evidence for a claim: a tag, the citations, and what was said."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    tag: str | None = None
    """What kind of evidence this is: documented, observed, assumed, documented-by-omission,
    documented(search-snippet), or spec-example (never real evidence)."""
    urls: list[str] = Field(default_factory=list)
    """Links that back the claim, e.g. the provider's error reference or a captured log."""
    note: str | None = None
    """What the evidence says, in a few words, e.g. `observed 410 after ~30m in sandbox`."""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return source_from_text(value)
        return value

    @field_validator("tag")
    @classmethod
    def _known_tag(cls, tag: str | None) -> str | None:
        if tag is not None and tag not in EVIDENCE_TAGS:
            raise ValueError(f"expected {' | '.join(EVIDENCE_TAGS)}")
        return tag


def source_from_text(text: str) -> dict[str, Any]:
    """Split free evidence text into its tag, URLs and the rest.

    >>> source_from_text("documented (https://example.com/a) TEST")["tag"]
    'documented'
    """
    text = text.strip()
    lowered = text.lower()
    tag = None
    for candidate in sorted(EVIDENCE_TAGS, key=len, reverse=True):
        if lowered.startswith(candidate):
            tag = candidate
            break
    urls = _URL.findall(text)
    note = text if tag is None or text.lower() != tag else None
    return {"tag": tag, "urls": [u.rstrip(".,;") for u in urls], "note": note}


# --- the element base ------------------------------------------------------


class Element(BaseModel):
    """Base of every document element: strict fields, unknown keys kept, frozen.

    Unknown keys are moved into ``extras`` instead of being rejected or
    dropped, so a document written against a newer or older grammar loses
    nothing; the import report lists them.

    Frozen: a parsed spec is shared by identity (the parse cache, the answers
    :mod:`chains.core.memo` keeps beside it), so assigning an attribute
    raises; a changed element is a new one (``model_copy(update=...)``, or an
    edit of :mod:`chains.core.edit`). The lists and mappings inside are plain
    ones, which pydantic does not freeze: a holder must not change them either.
    """

    # A docstring under a field is its description: the form help and the JSON Schema read it.
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, frozen=True, use_attribute_docstrings=True
    )

    source: Source | None = None
    """Where this element's claims come from: an evidence tag, links and a note. Free text
    works too, e.g. `documented https://docs.example.com/errors`."""
    extras: dict[str, Any] = Field(default_factory=dict)
    """Keys this grammar does not know, kept as written so nothing is lost. Key: the unknown
    key; value: what was written under it. The runtime ignores them."""

    @model_validator(mode="before")
    @classmethod
    def _keep_unknown_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = _known_keys(cls)
        if "extras" not in data and all(key in known for key in data):
            return data  # the common case: nothing to move
        given = data.get("extras")
        if given is not None and not isinstance(given, dict):
            return data  # let validation report ``extras`` as the wrong type
        extras = dict(given or {})
        kept = {}
        for key, value in data.items():
            if key in known:
                kept[key] = value
            else:
                extras[str(key)] = value
        if extras:
            kept["extras"] = extras
        return kept


_KNOWN: dict[type, frozenset[str]] = {}


def _known_keys(cls: type[BaseModel]) -> frozenset[str]:
    """Field names and aliases of ``cls``, computed once per class (validation is hot)."""
    known = _KNOWN.get(cls)
    if known is None:
        names = set()
        for name, field in cls.model_fields.items():
            names.add(name)
            if field.alias:
                names.add(field.alias)
        known = _KNOWN[cls] = frozenset(names)
    return known


class Variant(Element):
    """A top-level element: variant scoping (SPEC §2.7, ``only: [NDC]``) and notes.

    ``notes`` keeps the authors' remarks about the element, such as the YAML
    comments of an imported compile, which often carry the reasoning and the
    evidence a reviewer needs.
    """

    only: StrList = Field(default_factory=list)
    """The variant values this element belongs to, e.g. `[NDC]`; empty means every rail. A
    run binds one value at start and keeps it."""
    notes: StrList = Field(default_factory=list)
    """The authors' remarks on this element, kept as written (an imported compile's YAML
    comments land here). For reviewers; the runtime ignores them."""
