"""Verdicts written as a bare name whose trailing comment gives the whole expression.

Compile documents sometimes write a verdict the short way and spell it out
in a comment: ``route: gate  # → gate(new_instrument); a decline is an
answer``. The bare ``gate`` names no gate, so on its own it cannot be read
and would be dropped, leaving the step with no route. :func:`read_arrow_verdicts`
takes the comment's expression instead, when it is the same kind of verdict
(``gate`` completed by ``gate(…)``, ``rewind`` by ``rewind(to: …)``), and says
so with an info. A value that reads on its own is never touched, whatever its
comment proposes (``dead_end  # → escalate(operator): …`` is a remark on the
choice), and neither is a comment naming another kind of verdict.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import Problem, VerdictSyntaxError
from ..verdicts import VERDICT_TYPES, parse_verdict
from .yamlio import Comment

__all__ = ["arrow_expression", "read_arrow_verdicts"]

_ARROW = re.compile(r"^\s*(?:→|->|=>)\s*")


def arrow_expression(bare: str, comment: str) -> str | None:
    """The verdict a comment gives for ``bare``, or None when it gives none.

    >>> arrow_expression("gate", "→ gate(new_instrument); decline is an answer")
    'gate(new_instrument)'
    >>> arrow_expression("rewind", "-> rewind(to: search) when stale")
    'rewind(to: search)'
    >>> arrow_expression("gate", "→ repair(to: confirm, fields: [card])") is None
    True
    >>> arrow_expression("dead_end", "→ escalate(operator): unwind stuck") is None
    True
    """
    name = bare.strip()
    if name not in VERDICT_TYPES or _reads(name):
        return None
    arrow = _ARROW.match(comment)
    if arrow is None:
        return None
    rest = comment[arrow.end() :]
    if not rest.startswith(f"{name}("):
        return None
    depth = 0
    for i, ch in enumerate(rest):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth == 0:
                expression = rest[: i + 1]
                return expression if _reads(expression) else None
    return None  # the expression goes on past this line: not ours to guess


def read_arrow_verdicts(
    data: Any, where: dict[tuple, tuple[int, int]], found: list[Comment]
) -> list[Problem]:
    """Complete, in place, each bare verdict of ``data`` whose trailing comment gives it.

    ``where`` maps each path of ``data`` to its (line, column); ``found`` are
    the comments of the same text, at the same lines. Returns an info for
    each value completed.
    """
    trailing = {c.line: c for c in found if c.trailing}
    problems: list[Problem] = []
    if not trailing:
        return problems
    for path, (line, column) in where.items():
        comment = trailing.get(line)
        if comment is None or not path:
            continue
        parent = _parent(data, path)
        if parent is None:
            continue
        value = parent[path[-1]]
        if not isinstance(value, str):
            continue
        expression = arrow_expression(value, comment.text)
        if expression is None:
            continue
        parent[path[-1]] = expression
        message = (
            f"read {value.strip()!r} as {expression!r}, the verdict its comment gives; "
            f"{value.strip()!r} alone cannot be read"
        )
        where_ = ".".join(map(str, path))
        problems.append(Problem(message, line, column, path=where_, severity="info"))
    return problems


def _reads(text: str) -> bool:
    try:
        parse_verdict(text)
    except VerdictSyntaxError:
        return False
    return True


def _parent(data: Any, path: tuple) -> Any:
    node = data
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    try:
        node[path[-1]]
    except (KeyError, IndexError, TypeError):
        return None
    return node
