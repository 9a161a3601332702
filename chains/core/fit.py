"""The fit test (SKILL Step 0): should this flow be a chain at all?

This module owns the short questionnaire the "new chain" wizard asks before
anyone designs a chain, and the rules that turn its answers into a verdict.
Each refusal rule names the simpler tool to reach for instead (a retry
wrapper, a poller, a UI workflow...); the wizard shows it and lets the user
carry on regardless, so a refusal is advice, never a block.

Assumptions: every question is answered ``yes``, ``no`` or ``unsure``; a rule
fires only when every answer it depends on is definite, so an ``unsure`` can
keep a rule from firing but never makes one fire. Step 0's other stop, a
commit whose double-call behaviour is unknown and whose landing cannot be
observed, is left out: it is a per-step question that only makes sense once
the steps exist, and the commit lint rules already block such a commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from .errors import ChainError

__all__ = [
    "QUESTIONS",
    "FitError",
    "FitResult",
    "Question",
    "Refusal",
    "as_dict",
    "assess",
]

Verdict = Literal["fit", "not_a_fit", "unsure"]

REF = "SKILL Step 0"

_YES_NO_UNSURE: tuple[tuple[str, str], ...] = (
    ("yes", "Yes"),
    ("no", "No"),
    ("unsure", "Not sure"),
)


class FitError(ChainError):
    """The answers name a question that does not exist or a value it does not take."""


@dataclass(frozen=True)
class Question:
    """One question of the fit test, as the wizard shows it."""

    id: str
    text: str
    help: str
    choices: tuple[tuple[str, str], ...] = _YES_NO_UNSURE


@dataclass(frozen=True)
class Refusal:
    """A fit-test condition that fired, and what to use instead of a chain."""

    id: str
    condition: str
    instead: str
    ref: str = REF


@dataclass(frozen=True)
class FitResult:
    """What the fit test concluded from one set of answers."""

    verdict: Verdict
    refusals: tuple[Refusal, ...]
    open_questions: tuple[str, ...]
    summary: str


QUESTIONS: tuple[Question, ...] = (
    Question(
        id="single_call",
        text="Is the whole job a single API call (one request, one response), even a slow one?",
        help="Answer yes when there is no later step at all: the response of one request is the "
        "result. A long-running call is still a single call.",
    ),
    Question(
        id="mints_handles",
        text="Does a step get back something the provider keeps (a session, token, quote, cart "
        "or hold) that a later step has to hand back?",
        help="That is a handle: state created on the provider's side and used downstream. Values "
        "you already know before the flow starts do not count.",
    ),
    Question(
        id="things_expire",
        text="Can anything a step returns expire or go stale before the flow is done (a quote, "
        "a price, a session, an inventory hold)?",
        help="Count it even when the lifetime is unknown or only seen in practice, not "
        "documented. Answer no only when nothing returned has a shelf life.",
    ),
    Question(
        id="commits",
        text="Does any step spend money, hold or take inventory, or create something durable "
        "a user can see (an order, a booking, a sent message)?",
        help="Picture the process dying after the request went out and before the response came "
        "back. If that could cost money, block stock or show up for someone, answer yes.",
    ),
    Question(
        id="all_repeatable",
        text="Is every step safe to repeat (it takes an idempotency key, or repeating it changes "
        "nothing), and could the steps run in any order?",
        help="Answer yes only if you know it for every step: a repeated call never makes a "
        "duplicate and no step waits on another's result. If you only suspect it, say unsure.",
    ),
    Question(
        id="provider_polls",
        text="Does the provider run the multi-step process itself, so you submit one request "
        "and then only poll a status field until it finishes?",
        help="Common with provisioning and batch APIs: the provider retries and recovers "
        "internally, and your side only waits and watches.",
    ),
    Question(
        id="human_paced",
        text="Does a person start every step by hand, minutes apart, with no expectation that "
        "failures are recovered automatically?",
        help="For example a back-office tool where an operator clicks through each stage and "
        "decides what to do when one goes wrong.",
    ),
    Question(
        id="atomic_across_providers",
        text="Must commits at two or more providers all succeed or all fail, with no way "
        "(refund, cancel, release) to undo one that landed alone?",
        help="Answer no if each commit can be compensated, or if a partial result may stand "
        "for a while until someone fixes it.",
    ),
)

_QUESTIONS_BY_ID = {q.id: q for q in QUESTIONS}

# Each rule fires when every listed question has exactly the listed answer.
# The order is the order refusals are reported in.
_RULES: tuple[tuple[Refusal, Mapping[str, str]], ...] = (
    (
        Refusal(
            id="single_call",
            condition="the whole job is one request and its response, however slow",
            instead="Wrap that call in a retry helper with exponential backoff, jitter and an "
            "overall deadline, and send an idempotency key if the call creates something.",
        ),
        {"single_call": "yes"},
    ),
    (
        Refusal(
            id="idempotent_crud",
            condition="every step is safe to repeat, nothing it returns goes stale, and the "
            "steps may run in any order",
            instead="Call the steps with plain per-call retries (backoff plus the idempotency "
            "keys you already have); a chain config would add paperwork without making it safer.",
        ),
        {"all_repeatable": "yes", "things_expire": "no"},
    ),
    (
        Refusal(
            id="nothing_to_rewind",
            condition="no step creates provider-side state that a later step uses, nothing "
            "expires and nothing is committed",
            instead="Write ordinary sequential calls, each with its own retry; with no handle "
            "that can go bad and no commit to guard, a chain would have no work to do.",
        ),
        {"mints_handles": "no", "things_expire": "no", "commits": "no"},
    ),
    (
        Refusal(
            id="provider_state_machine",
            condition="the provider runs the process and its recovery itself, and you only "
            "submit an intent and watch one status field",
            instead="Write a poller: submit once (with an idempotency key if offered), poll the "
            "status with backoff until a terminal state or a deadline, and alert on timeout.",
        ),
        {"provider_polls": "yes"},
    ),
    (
        Refusal(
            id="human_driven",
            condition="a person drives each step by hand, minutes apart, and nobody expects "
            "automatic recovery",
            instead="Build it as a guided workflow in the UI: save progress between screens and "
            "let the person retry or step back, since no automated recovery would ever run.",
        ),
        {"human_paced": "yes"},
    ),
    (
        Refusal(
            id="distributed_transaction",
            condition="commits at several providers must land together or not at all, and "
            "nothing can undo a partial result",
            instead="Flag it and settle atomicity at the business level first (escrow, or a "
            "hold-then-confirm two-phase agreement with every provider); a chain's compensation "
            "cannot make a partial state safe.",
        ),
        {"atomic_across_providers": "yes"},
    ),
)


def _check(answers: Mapping[str, str]) -> None:
    problems = []
    for key, value in answers.items():
        question = _QUESTIONS_BY_ID.get(key)
        if question is None:
            known = ", ".join(_QUESTIONS_BY_ID)
            problems.append(f"unknown fit question {key!r}; known questions: {known}")
            continue
        allowed = [choice for choice, _label in question.choices]
        if value not in allowed:
            problems.append(
                f"fit question {key!r} does not take {value!r}; allowed values: "
                + ", ".join(allowed)
            )
    if problems:
        raise FitError("; ".join(problems))


def _summary(refusals: tuple[Refusal, ...], open_questions: tuple[str, ...]) -> str:
    if len(refusals) == 1:
        (refusal,) = refusals
        return f"A chain is probably the wrong tool here because {refusal.condition}. " + (
            refusal.instead
        )
    if refusals:
        return (
            f"A chain is probably the wrong tool here: {len(refusals)} fit-test conditions "
            "fired. Each one below says what to use instead."
        )
    if open_questions:
        count = len(open_questions)
        noun = "question is" if count == 1 else "questions are"
        return (
            f"Nothing rules a chain out yet, but {count} of {len(QUESTIONS)} {noun} still open. "
            "Answer them to be sure, or go on and revisit them as the design takes shape."
        )
    return (
        "Nothing in the fit test argues against a chain, so a chain config is the right tool. "
        "Go on to list the steps and the handles they pass along."
    )


def assess(answers: Mapping[str, str]) -> FitResult:
    """Run the fit test on ``answers`` (question id -> ``yes``/``no``/``unsure``).

    Any fired refusal makes the verdict ``not_a_fit``; otherwise an open
    question (answered ``unsure`` or not answered) makes it ``unsure``;
    otherwise it is ``fit``. Open questions are listed whatever the verdict.

    Raises :class:`FitError` for an unknown question id or a value the
    question does not take.

    >>> result = assess({"single_call": "yes"})
    >>> result.verdict, [r.id for r in result.refusals]
    ('not_a_fit', ['single_call'])
    >>> len(result.open_questions)
    7
    >>> assess({q.id: "unsure" for q in QUESTIONS}).verdict
    'unsure'
    >>> assess({"single_call": "maybe"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    chains.core.fit.FitError: fit question 'single_call' does not take 'maybe'; allowed values: ...
    """
    _check(answers)
    refusals = tuple(
        refusal
        for refusal, needs in _RULES
        if all(answers.get(qid) == value for qid, value in needs.items())
    )
    open_questions = tuple(q.id for q in QUESTIONS if answers.get(q.id, "unsure") == "unsure")
    verdict: Verdict = "not_a_fit" if refusals else "unsure" if open_questions else "fit"
    return FitResult(verdict, refusals, open_questions, _summary(refusals, open_questions))


def as_dict(result: FitResult) -> dict[str, Any]:
    """``result`` as JSON-ready data: only dicts, lists and strings.

    >>> as_dict(assess({"human_paced": "yes"}))["refusals"][0]["ref"]
    'SKILL Step 0'
    """
    return {
        "verdict": result.verdict,
        "refusals": [asdict(refusal) for refusal in result.refusals],
        "open_questions": list(result.open_questions),
        "summary": result.summary,
    }
