"""A verdict or a signal as typed, in plain words, with what it names that the chain lacks.

The designer checks a verdict box or a signal box while a person types
(``check?what=verdict``): :func:`explain_verdict` reads the text with the
verdict grammar and says what the run would do, and :func:`explain_signals`
reads a list of signal atoms and says what each matches.
Both name what is wrong the way a save would refuse it (a grammar error) or
lint would find it (a step, gate or intent field the chain does not have; an
entry no response can match), so the page can say it before the save.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import VerdictSyntaxError
from .lint.handles import reads_as_signal
from .model import ChainSpec
from .signals import conjuncts, normalize_atom
from .verdicts import Verdict, format_verdict, parse_verdict

__all__ = ["Explained", "explain_signals", "explain_verdict", "verdict_meaning"]


@dataclass(frozen=True)
class Explained:
    """What a typed value reads as (``text``, canonical), its meaning, and its problems."""

    text: str = ""
    meaning: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verdict_meaning(v: Verdict) -> str:
    """What the run does on ``v``, in a sentence.

    >>> verdict_meaning(parse_verdict("rewind(to: quote)"))
    'go back to quote and run it again; every handle derived from what it mints dies'
    """
    match v.type:
        case "ok":
            return (
                "a valid empty answer: the action's empty route decides what comes next"
                if v.empty
                else "it worked: go on to the next step"
            )
        case "retry":
            return "send the same call again after the backoff (never an unkeyed commit)"
        case "rewind":
            return (
                f"go back to {v.to} and run it again; every handle derived from what it mints dies"
            )
        case "repair":
            fields = ", ".join(v.fields) or "no fields yet"
            return f"go back to {v.to} with these intent fields changed: {fields}"
        case "reselect":
            return f"pick again at {v.to}, leaving out the option that is gone"
        case "gate":
            return f"pause at the gate {v.gate} until its audience answers"
        case "reconcile":
            return "ask the probe whether the commit landed; never send it again"
        case "dead_end":
            why = f" ({v.reason})" if v.reason else ""
            return f"stop the run{why}; commits that landed are compensated"
        case "escalate":
            return f"hand the run to {v.audience or 'an operator'}"
    return v.type


def explain_verdict(spec: ChainSpec | None, text: str) -> Explained:
    """``text`` read as a verdict of ``spec``: canonical text, meaning, problems.

    >>> explain_verdict(None, "rewind").problems
    ['rewind needs a target step: rewind(to: <step>)']
    """
    try:
        v = parse_verdict(text)
    except VerdictSyntaxError as exc:
        return Explained(problems=[str(exc)])
    problems = []
    if spec is not None:
        actions = {a.id for a in spec.actions}
        if v.to and v.to not in actions:
            problems.append(f"the chain has no step {v.to}")
        if v.gate and v.gate not in {g.id for g in spec.gates}:
            problems.append(f"the chain has no gate {v.gate}")
        intent = {name for a in spec.actions for name in a.input.intent}
        unknown = [f for f in v.fields if f not in intent]
        if unknown and intent:
            problems.append(f"no step takes the intent field {', '.join(unknown)}")
    return Explained(format_verdict(v), verdict_meaning(v), problems)


_TRANSPORT = {
    "timeout": "no answer in time: on a commit the outcome is unknown",
    "conn_reset": "the connection was reset",
    "conn_drop": "the connection dropped",
}


def _part_meaning(part: str) -> str:
    if part in _TRANSPORT:
        return _TRANSPORT[part]
    status = re.fullmatch(r"http:([1-5])xx", part)
    if status:
        return f"any HTTP {status[1]}xx status"
    if part.startswith("http:"):
        return f"HTTP status {part[5:]}"
    kind, _, value = part.partition(":")
    words = {"code": "the provider's error code", "webhook": "the webhook event"}
    if kind in words and value:
        return f"{words[kind]} {value}"
    if kind == "header" and value:
        return f"the response header {value}"
    return f"the response matches {part}"


def explain_signals(atoms: list[str]) -> Explained:
    """Signal atoms, each in words (any of them matches); those no response can match.

    >>> explain_signals(["http:410", "code:QUOTE_EXPIRED"]).meaning
    "HTTP status 410; or the provider's error code QUOTE_EXPIRED"
    >>> explain_signals(["quote went stale"]).problems[0].split(":")[0]
    "'quote went stale' is no signal code can match"
    """
    atoms = [a.strip() for a in atoms if a.strip()]
    said, problems = [], []
    for atom in atoms:
        if not reads_as_signal(atom):
            problems.append(
                f"{atom!r} is no signal code can match: write a status (http:410), an error "
                "code (code:QUOTE_EXPIRED), a transport fault (timeout) or a payload "
                "predicate (status == 'expired')"
            )
            continue
        said.append(" and ".join(_part_meaning(p) for p in conjuncts(atom)))
    canonical = ", ".join(normalize_atom(a) for a in atoms)
    return Explained(canonical, "; or ".join(said), problems)
