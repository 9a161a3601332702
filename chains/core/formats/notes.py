"""Authors' YAML comments kept as the ``notes`` of the element they sit in.

:func:`.yamlio.comment_notes` finds which comments belong to which element;
this module adds them to the element's data before it is validated, for a
whole YAML chain document (:func:`with_comment_notes`) or one element of a
compile document's block (:func:`with_notes`). Only the sections listed in
:data:`NOTED_SECTIONS` collect notes.
"""

from __future__ import annotations

from typing import Any

from .yamlio import comment_notes, comments

__all__ = ["NOTED_SECTIONS", "with_comment_notes", "with_notes"]

NOTED_SECTIONS = ("handles", "actions", "gates", "verdict_table")


def with_comment_notes(data: Any, where: dict, text: str) -> Any:
    """``data`` with the YAML comments inside each element added to its ``notes``."""
    found = comments(text)
    if not found or not isinstance(data, dict):
        return data
    data = dict(data)
    for section in NOTED_SECTIONS:
        body = data.get(section)
        if isinstance(body, dict):
            copied: Any = dict(body)
        elif isinstance(body, list):
            copied = list(body)
        else:
            continue
        keys = list(body) if isinstance(body, dict) else list(range(len(body)))
        notes = comment_notes(found, where, [(section, k) for k in keys], text.count("\n") + 1)
        for (_, key), extra in notes.items():
            empty = isinstance(body, dict) and copied[key] is None  # ``name:`` alone
            copied[key] = with_notes({} if empty else copied[key], extra)
        data[section] = copied
    return data


def with_notes(element: Any, notes: list[str]) -> Any:
    """A copy of an element's data with ``notes`` added after any it gives."""
    if not notes or not isinstance(element, dict):
        return element
    given = element.get("notes")
    if isinstance(given, str):
        given = [given]
    if given is not None and not isinstance(given, list):
        return element  # not notes we understand: validation reports it
    return {**element, "notes": [*(given or []), *notes]}
