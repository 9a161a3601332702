"""The Step scope cell of a compile's verdict table, read into a row scope.

A compile author writes which attempts a row applies to in words as often
as in step ids: ``read + mint steps``, ``those commits`` (the commits the
Signal cell just named), ``any (all commits keyed)``, ``any step, this
run``, ``create_refund confirmation``, ``confirm / capture`` (``confirm``
for ``confirm_payment_intent``), ``probes``. :func:`row_scope` maps each
such phrase to the steps or effect classes it names, using what the
document's own actions are (their ids, effects and confirmation probes),
and keeps the cell as written in the scope's ``text``. What it cannot map
is a warning at the row's line naming the words that matched nothing,
never a silent prose scope: a row whose scope resolves to no step matches
nothing (:func:`~chains.core.signals.scope_applies_to`), so its signals
fall to the generic rows. A phrase mapped by interpretation (a verb for
the one action it starts, a step's confirmation, the probes) is an info.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ..errors import Problem
from ..model import COMMIT_CLASS_EFFECTS, scope_from_text

__all__ = ["probes_of", "row_scope"]

# Effect words as authors write them, singular or plural, to the effect class.
_EFFECT_WORDS = {
    "read": "read",
    "reads": "read",
    "mint": "mint",
    "mints": "mint",
    "commit": "commit",
    "commits": "commit",
    "select": "select",
    "selects": "select",
    "selection": "select",
    "selections": "select",
    "compensate": "compensate",
    "compensations": "compensate",
    "compensators": "compensate",
    "keyed commit": "keyed_commit",
    "keyed commits": "keyed_commit",
    "unkeyed commit": "unkeyed_commit",
    "unkeyed commits": "unkeyed_commit",
}
_PARTS = re.compile(r"\s*[,;/+]\s*|\s+and\s+", re.I)
_REMARK = re.compile(r"\s*\([^)]*\)")
_ANY = re.compile(r"^(?:any|all|every)(?:\s+steps?)?(?=\s*(?:\(|,|$))", re.I)
_THOSE = re.compile(r"^(?:those|these|the same|them)(?:\s+(?P<what>[\w ]+?))?(?:\s+steps?)?$", re.I)
_CONFIRMATION = re.compile(
    r"^(?:(?P<a>\w+)(?:'s)?\s+confirmation|confirmation\s+(?:of|for)\s+(?P<b>\w+))$", re.I
)
_EXCEPT = re.compile(r"\b(?:except|but not|other than|excluding|besides)\b", re.I)
_PROBES = re.compile(r"^(?:confirmation\s+)?probes?$", re.I)


def row_scope(
    text: str,
    actions: Mapping[str, Any] | Collection[str],
    signal: str,
    where: tuple[str, int, int | None],
    problems: list[Problem],
    probes: Collection[str] | None = None,
) -> dict[str, Any]:
    """The scope a Step scope cell names, read against the document's ``actions``.

    ``actions`` maps each action id the document defines to its data as
    written (a plain collection of ids works too, without effects or
    probes); ``signal`` is the row's Signal cell, which ``those commits``
    refers back to; ``where`` is the row's label, line and the cell's
    column, for the problems. ``probes`` are the steps the word "probes"
    names (the probes of the table's own scope; default: every probe the
    document's actions name).

    >>> acts = {"find": {"effect": "read"}, "hold": {"effect": "commit"}}
    >>> row_scope("read + mint steps", acts, "", ("D1", 1, 1), [])
    {'effects': ['read', 'mint'], 'text': 'read + mint steps'}
    >>> row_scope("those commits", acts, "`4100` on `hold` itself", ("D2", 2, 1), [])
    {'steps': ['hold'], 'text': 'those commits'}
    """
    scope = scope_from_text(text)
    if scope.get("any") or scope.get("consumers_of") or scope.get("effects"):
        return scope
    if scope.get("steps") and all(s in actions for s in scope["steps"]):
        return scope
    if not actions:
        return scope
    if probes is None:
        probes = probes_of(actions)
    return _prose(text.strip(), actions, signal, where, problems, list(probes))


def _prose(text, actions, signal: str, where, problems: list[Problem], probes) -> dict[str, Any]:
    clean = text.replace("`", "").strip()
    if _ANY.match(clean) and not _EXCEPT.search(clean):
        _say(where, f"`{text}` read as any step; the cell is kept as the scope's text", problems)
        return {"any": True, "text": text}
    steps: list[str] = []
    effects: list[str] = []
    read: list[str] = []  # phrases mapped by interpretation, for the info
    unmatched: list[str] = []
    for part in _PARTS.split(_REMARK.sub("", clean)):
        bare = part.strip()
        if not bare:
            continue
        found = _part(bare, actions, signal, probes)
        if found is None:
            unmatched.append(part.strip())
            continue
        kind, names, how = found
        (effects if kind == "effects" else steps).extend(names)
        if how:
            read.append(how)
    out: dict[str, Any] = {}
    if steps:
        out["steps"] = list(dict.fromkeys(steps))
    if effects:
        out["effects"] = list(dict.fromkeys(effects))
    out["text"] = text
    label, line, column = where
    if unmatched:
        words = ", ".join(f"`{u}`" for u in unmatched)
        problems.append(
            Problem(
                f"{label}: {words} in the Step scope cell "
                f"{'names' if len(unmatched) == 1 else 'name'} no step of the document"
                + (
                    f"; the row applies only to {_listed(out)}"
                    if steps or effects
                    else "; the row applies to no step, so its signals fall to the generic rows"
                ),
                line,
                column,
                severity="warning",
                path="scope",
            )
        )
    elif read:
        _say(where, "; ".join(read), problems)
    return out


def _part(bare: str, actions, signal: str, probes) -> tuple[str, list[str], str] | None:
    """One phrase of the cell: ``("steps" | "effects", names, how it was read)``."""
    words = re.sub(r"\s+steps?$", "", bare, flags=re.I).strip()
    if words in actions:
        return "steps", [words], ""
    effect = _EFFECT_WORDS.get(re.sub(r"^(?:all|every|any)\s+", "", words.lower()))
    if effect:
        return "effects", [effect], ""
    those = _THOSE.match(words)
    if those:
        return _those(bare, those["what"], actions, signal)
    conf = _CONFIRMATION.match(words)
    if conf and (conf["a"] or conf["b"]) in actions:
        step = conf["a"] or conf["b"]
        return "steps", [step], f"`{bare}` read as step {step} (its confirmation's outcome)"
    if _PROBES.match(words):
        if probes:
            return "steps", probes, f"`{bare}` read as the confirmation probes: {', '.join(probes)}"
        return None
    if re.fullmatch(r"[a-z][a-z0-9]*", words):
        starts = [a for a in actions if a.split("_")[0] == words]
        if len(starts) == 1:
            return "steps", starts, f"`{bare}` read as step {starts[0]}"
    return None


def _those(bare: str, what: str | None, actions, signal: str):
    """``those commits``: the steps the Signal cell names, of that effect class."""
    named = [n for n in re.findall(r"`([^`\n]+)`", signal) if n.strip() in actions]
    effect = _EFFECT_WORDS.get((what or "").lower())
    if effect:
        named = [n for n in named if _effect_of(actions, n) in _class_of(effect)]
    elif what:
        return None
    if not named:
        return None
    named = list(dict.fromkeys(named))
    return "steps", named, f"`{bare}` read as the steps the Signal cell names: {', '.join(named)}"


def _class_of(effect: str) -> tuple[str, ...]:
    return COMMIT_CLASS_EFFECTS if effect == "commit" else (effect,)


def _effect_of(actions, name: str) -> str | None:
    data = actions.get(name) if isinstance(actions, Mapping) else None
    return data.get("effect") if isinstance(data, Mapping) else None


def probes_of(
    actions: Mapping[str, Any] | Collection[str], known: Collection[str] | None = None
) -> list[str]:
    """The steps of ``known`` (default: ``actions``) that the ``actions`` (id to
    data as written) name as a confirmation probe."""
    if not isinstance(actions, Mapping):
        return []
    known = actions if known is None else known
    found = []
    for data in actions.values():
        conf = data.get("confirmation") if isinstance(data, Mapping) else None
        probe = conf.get("probe") if isinstance(conf, Mapping) else None
        if isinstance(probe, str) and probe in known:
            found.append(probe)
    return list(dict.fromkeys(found))


def _listed(scope: dict[str, Any]) -> str:
    parts = [*scope.get("steps", []), *(f"{e} steps" for e in scope.get("effects", []))]
    return ", ".join(parts)


def _say(where, message: str, problems: list[Problem]) -> None:
    label, line, column = where
    problems.append(Problem(f"{label}: {message}", line, column, severity="info", path="scope"))
