"""The simulator page: a run of one revision, stepped through by hand.

A simulation is a scenario (:mod:`chains.core.sim.session`) carried in the
page's address as a token (``?r=<revision>&s=<token>``), so a reload, the back
button or a shared link shows the same run. Every input is one POST that adds
an event after the first ``at`` events (a checkpoint; all of them by default)
and answers with the new run: a redirect for a plain form, the ``sim``
partial plus ``HX-Push-Url`` for htmx. Nothing is stored until the user saves
the simulation as a scenario (``services.scenarios.save_scenario``, as the API
and the command line do). An input the run does not wait for is a 400
naming it, and the run before it is shown unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from pydantic import BaseModel, Field

from chains.core import formats
from chains.core.dot import RenderError
from chains.core.errors import ChainError, DocumentError
from chains.core.model import ChainSpec, generic_row_ref
from chains.core.render import handle_graph_svg
from chains.core.sim.classifier import row_label
from chains.core.sim.invariants import Monitor
from chains.core.sim.palette import choices, default_intent
from chains.core.sim.regression import check_scenario, events_to_verdict
from chains.core.sim.scenario import Scenario, ScenarioMismatch
from chains.core.sim.session import (
    Session,
    SessionError,
    checkpoint_tokens,
    decode,
    encode,
    gauges,
    play,
    play_branch,
    run_marks,
)
from chains.core.verdicts import GENERIC_ROWS, format_verdict
from chains.models import (
    Chain,
    DuplicateScenario,
    Revision,
    RevisionLayout,
    Role,
    saved_scenarios,
)
from chains.services import scenarios
from chains.services.access import ChainAccess, get_head, get_revision, spec_of
from chains.services.scenarios import NamedScenario
from chains.views.common import get_access
from chains.views.forms import FormError, Prefixed, plain_number, read_form, read_post
from chains.views.limits import rate_limited

MAX_FIELD = 100_000  # characters of one posted JSON value
GROUPS = {
    "success": "success",
    "expiry": "business expiry",
    "empty": "valid empty",
    "row": "domain rows",
    "stale": "staleness",
    "auto_repair": "auto-repair triggers",
    "fault": "generic faults",
    "precondition": "preconditions",
    "revocation": "revocation watches",
}


class RunAddress(BaseModel):
    """Which run a simulator request is about: the revision (``r``) and the run's token (``s``)."""

    r: str = ""
    s: str = ""


class InputForm(RunAddress):
    """One input to the run, as the page's forms post it (see :func:`_event`)."""

    kind: str = ""
    event: str = Field("", description="a palette button's event, as JSON")
    at: str = Field("", description="the checkpoint: the input goes after this many events")
    intent: str = Field("", description="a restart's intent, as a JSON object")
    outcome: str = ""
    params: Annotated[dict[str, str], Prefixed("param.")] = {}
    duration: str = ""
    proposal: str = ""


class BadInput(ChainError):
    """The posted input is malformed or not what the run waits for."""


class Unrunnable(ChainError):
    """The revision asked for no longer validates, so nothing can run on it."""


@require_http_methods(["GET", "POST"])
@rate_limited("simulate", methods=("GET", "POST"))
def simulate(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    access = get_access(request, team, key)
    chain = access.chain
    post = request.method == "POST"
    given = read_post(request, InputForm) if post else read_form(InputForm, request.GET)
    try:
        revision, spec = _opened(chain, given.r)
    except Unrunnable as exc:
        return _conflict(exc)
    page = partial(_page, request, access, revision, spec)
    try:
        scenario = _scenario(spec, given.s)
    except SessionError as exc:
        return page(_fresh(spec), error=str(exc), status=400)
    if not post:
        if request.GET.get("format") == "json":
            return _json(spec, scenario)
        return page(scenario, violation=request.GET.get("violation"))
    try:
        session = _with_input(spec, scenario, given)
    except (BadInput, SessionError, ScenarioMismatch) as exc:
        return page(scenario, error=str(exc), status=400)
    return _answer(request, page, _url(chain, revision, session.scenario), session)


@require_GET
def open_scenario(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The saved scenario ``?name=`` run on the head, in the simulator (a redirect to its address).

    A scenario that no longer replays to its end opens after the last event
    that still applies, where the page shows what the run waits for instead;
    one whose verdicts changed opens at the first verdict that differs.

    The workspace links here rather than to the address itself, which holds the
    whole run and would make the page as long as every scenario it lists.
    """
    access = get_access(request, team, key)
    try:
        name = read_form(NamedScenario, request.GET).name
    except FormError as exc:
        return HttpResponse(f"{exc}\n", status=400, content_type="text/plain; charset=utf-8")
    scenario = saved_scenarios(access.chain).get(name)
    if scenario is None:
        raise Http404(f"no scenario {name!r} that loads is kept with this chain")
    head = get_head(access.chain)
    try:
        spec = spec_of(head)
    except DocumentError:
        return redirect(_url(access.chain, head, scenario))  # the simulator page says why
    # Opened where it stops replaying, or at its first verdict that differs: the page
    # then shows why.
    check = check_scenario(spec, name, scenario)
    stop = check.replays
    if stop is None and check.differs_at is not None:
        stop = events_to_verdict(spec, scenario, check.differs_at)
    if stop is not None:
        scenario = scenario.model_copy(update={"events": scenario.events[:stop]})
    return redirect(_url(access.chain, head, scenario))


class SaveForm(NamedScenario):
    """The save form's own field; the run it saves comes from the address (``r``, ``s``).

    The address is read as every simulator request reads it, so the run saved
    is the run the page shows.
    """


@require_POST
def save_scenario(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """Keep the current simulation with the chain, its outcome recorded as ``expect``."""
    access = get_access(request, team, key, Role.EDITOR)
    chain = access.chain
    address = read_post(request, RunAddress)
    try:
        revision, spec = _opened(chain, address.r)
    except Unrunnable as exc:
        return _conflict(exc)
    page = partial(_page, request, access, revision, spec)
    try:
        scenario = _scenario(spec, address.s)
    except SessionError as exc:
        return page(_fresh(spec), error=str(exc), status=400)
    try:
        name = _save(request, chain, revision, scenario)
    except (FormError, ScenarioMismatch, DuplicateScenario) as exc:
        return page(scenario, error=str(exc), status=400)
    return _answer(request, page, _url(chain, revision, scenario), scenario, saved=name)


def _save(request: HttpRequest, chain: Chain, revision: Revision, scenario: Scenario) -> str:
    """Keep ``scenario`` recorded on ``revision`` under the posted name; the name."""
    name = read_post(request, SaveForm).name
    # A person is refused a name already kept rather than overwrite it (replace=False).
    scenarios.save_scenario(
        chain,
        name,
        scenario,
        author=_author(request),
        record=True,
        revision=revision.number,
        replace=False,
    )
    return name


# --- reading the request --------------------------------------------------------------


def _opened(chain: Chain, raw: str) -> tuple[Revision, ChainSpec]:
    """The revision ``?r=`` names (the head by default) and its document.

    Raises :class:`Unrunnable` when that revision no longer validates.
    """
    revision = get_revision(chain, plain_number(raw))
    try:
        return revision, spec_of(revision)
    except DocumentError as exc:
        raise Unrunnable(f"revision {revision.number} no longer validates: {exc}") from None


def _fresh(spec: ChainSpec) -> Scenario:
    return Scenario(chain=spec.id, intent=default_intent(spec))


def _scenario(spec: ChainSpec, token: str) -> Scenario:
    if not token:
        return _fresh(spec)
    scenario = decode(token)
    if scenario.chain not in (None, spec.id):
        raise SessionError(f"simulation token: it is for chain {scenario.chain}, not {spec.id}")
    return scenario


def _with_input(spec: ChainSpec, scenario: Scenario, post: InputForm) -> Session:
    """The run of ``scenario`` with the posted input added after the first ``at`` events.

    ``kind=restart`` is the exception: a new run from the posted ``intent``.
    """
    if post.kind == "restart":
        return _restarted(spec, post.intent)
    at = post.at
    if at and plain_number(at) is None:
        raise BadInput(f"at: the checkpoint is a number of events, got {at!r}")
    event = _event(post)
    result = play_branch(spec, scenario, event, plain_number(at))  # one replay
    if result.refused:
        raise BadInput(result.refused)
    return result


def _restarted(spec: ChainSpec, text: str) -> Session:
    """A run with no input yet, from the intent typed as a JSON object."""
    intent = _json_field(text, "intent")
    if not isinstance(intent, dict):
        raise BadInput('intent: expected a JSON object such as {"origin": "LHR"}')
    try:
        return play(spec, Scenario(chain=spec.id, intent=intent))
    except ScenarioMismatch as exc:  # a run that cannot even start says why
        raise BadInput(f"intent: {exc}") from None


def _event(post: InputForm) -> dict[str, Any]:
    """One scenario event from the form: a palette button's JSON or a typed input."""
    kind = post.kind
    if post.event:
        event = _json_field(post.event, "event")
        if not isinstance(event, dict):
            raise BadInput('event: expected a JSON object such as {"observe": "timeout"}')
        return event
    if kind == "answer":
        params = {n: _value(v) for n, v in post.params.items()}
        return {"answer": {"outcome": post.outcome, "params": params or None}}
    if kind == "wait":
        return {"wait": post.duration.strip()}
    if kind == "crash":
        return {"crash": True}
    if kind == "propose":
        return {"propose": _json_field(post.proposal, "proposal")}
    raise BadInput(f"kind: expected answer | wait | crash | propose, or an event; got {kind!r}")


def _json_field(text: str, name: str) -> Any:
    if len(text) > MAX_FIELD:
        raise BadInput(f"{name}: more than {MAX_FIELD:,} characters")
    try:
        return formats.parse_json(text)[0]
    except DocumentError as exc:
        raise BadInput(f"{name}: not valid JSON: {exc}") from None


def _value(text: str) -> Any:
    """A gate parameter as typed: a JSON number, boolean, list or object, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _author(request: HttpRequest) -> Any:
    return request.user if request.user.is_authenticated else None


# --- answering ------------------------------------------------------------------------


def _conflict(exc: Unrunnable) -> HttpResponse:
    message = f"{exc}; a run needs a valid chain.\n"
    return HttpResponse(message, status=409, content_type="text/plain; charset=utf-8")


def _answer(
    request: HttpRequest,
    page: Callable[..., HttpResponse],
    url: str,
    run: Scenario | Session,
    **extra: Any,
) -> HttpResponse:
    """After an input: redirect a plain post to the run's address; re-render for htmx."""
    if not request.htmx:
        return redirect(url)
    response = page(run, **extra)
    response["HX-Push-Url"] = url
    return response


def _url(chain: Chain, revision: Revision, scenario: Scenario) -> str:
    query = urlencode({"r": revision.number, "s": encode(scenario)})
    return f"{chain.url('simulate')}?{query}"


def _json(spec: ChainSpec, scenario: Scenario) -> JsonResponse:
    run = play(spec, scenario).run
    data = {
        "snapshot": run.snapshot.model_dump(mode="json"),
        "trace": [e.model_dump(mode="json") for e in run.trace],
    }
    return JsonResponse(data, json_dumps_params={"indent": 2})


def _page(
    request: HttpRequest,
    access: ChainAccess,
    revision: Revision,
    spec: ChainSpec,
    run: Scenario | Session,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    """The page of ``run``: a scenario to replay, or a session replayed already."""
    try:
        session = run if isinstance(run, Session) else play(spec, run)
    except ScenarioMismatch as exc:  # e.g. a token for a variant this revision lacks
        session, status = play(spec, _fresh(spec)), 400
        extra["error"] = f"the simulation cannot start on this revision: {exc}"
    context = simulator_context(access.chain, revision, spec, session, **extra)
    context.update(access=access, can_save=access.may(Role.EDITOR))
    template = "chains/simulator.html#sim" if request.htmx else "chains/simulator.html"
    return render(request, template, context, status=status)


def simulator_context(
    chain: Chain, revision: Revision, spec: ChainSpec, session: Session, **extra: Any
) -> dict[str, Any]:
    """Everything the page shows about the run ``session`` replayed."""
    run = session.run
    s = run.snapshot
    last = session.steps[-1] if session.steps else None
    caused = run.trace[last.first : last.last] if last else run.trace
    rows = _rows(spec)
    decided = _decision(caused, rows)
    monitor = Monitor(spec)
    findings = monitor.feed(run.trace) + monitor.state_findings(s)
    context = {
        "chain": chain,
        "revision": revision,
        "head": chain.head(),
        "session": session,
        "run": run,
        "snap": s,
        "token": encode(session.scenario),
        "caused": caused,
        "decided": decided,
        "invalidated": sorted({h for e in caused for h in e.handles_invalidated}),
        "palette": _palette(spec, session),
        "answers": _answers(spec, session),
        "proposal_example": _proposal_example(spec, session),
        "gauges": gauges(spec, run),
        "findings": findings,
        "timeline": _timeline(chain, revision, session),
        "rows": [{**r, "matched": decided and r["id"] == decided["row"]} for r in rows],
        "intent_json": json.dumps(session.scenario.intent, indent=2),
        "snapshot_json": json.dumps(s.model_dump(mode="json"), indent=2),
        "trace_json": json.dumps([e.model_dump(mode="json") for e in run.trace], indent=2),
        "excluded": {k: v for k, v in s.excluded.items() if v},
        "live": sorted(s.handles.items()),
        **extra,
    }
    try:
        memory = RevisionLayout.objects.recall(revision, "handles")
        marks = run_marks(spec, run)
        context["svg"] = handle_graph_svg(spec, marks, settings.GRAPH_LAYOUT_SECONDS, memory)
    except RenderError as exc:
        context["render_error"] = str(exc)
    return context


def _palette(spec: ChainSpec, session: Session) -> list[dict[str, Any]]:
    """The choices grouped for the page, each with its event as JSON for its button.

    Gate outcomes are left to their own forms (:func:`_answers`), where params are typed.
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in choices(spec, session.run):
        if c.group == "outcome":
            continue
        title = GROUPS.get(c.group, c.group)
        groups.setdefault(title, []).append({"choice": c, "json": json.dumps(c.event)})
    return [{"title": t, "items": items} for t, items in groups.items()]


def _answers(spec: ChainSpec, session: Session) -> list[dict[str, Any]]:
    """One form per outcome of the gate the run waits at, params filled with a valid guess."""
    w = session.run.snapshot.waiting
    gate = spec.gate(w.gate) if w.kind == "answer" and w.gate else None
    if gate is None:
        return []
    guesses: dict[str, dict[str, Any]] = {}
    for c in choices(spec, session.run):
        if c.group == "outcome":
            answer = c.event["answer"]
            guesses.setdefault(answer["outcome"], answer.get("params") or {})
    return [
        {
            "name": name,
            "verdict": format_verdict(outcome.verdict),
            "params": [
                {"name": p, "kind": kind, "value": guesses.get(name, {}).get(p, "")}
                for p, kind in outcome.params.items()
            ],
        }
        for name, outcome in gate.outcomes.items()
    ]


def _proposal_example(spec: ChainSpec, session: Session) -> str:
    """A proposal that fits what the run waits for, to edit in the proposal box."""
    w = session.run.snapshot.waiting
    if w.kind == "answer" and w.outcomes:
        example: dict[str, Any] = {"kind": "answer", "value": w.outcomes[0]}
    elif w.kind == "repair":
        example = {"kind": "repair", "fields": {f: "" for f in w.fields}}
    elif w.kind == "select" and w.options:
        example = {"kind": "select", "value": w.options[0].id}
    else:
        example = {"kind": "classify", "verdict": "retry"}
    return json.dumps(example)


def _timeline(chain: Chain, revision: Revision, session: Session) -> list[dict[str, Any]]:
    """Trace events, each linked to the checkpoint just after the input that wrote it."""
    base = f"{chain.url('simulate')}?r={revision.number}&s="
    # Every checkpoint's address at once: encoding each prefix alone costs the square.
    urls = [base + token for token in checkpoint_tokens(session.scenario)]
    owners = session.owners()
    return [
        {"event": e, "owner": owners[i], "url": urls[owners[i]]}
        for i, e in enumerate(session.run.trace)
    ]


def _rows(spec: ChainSpec) -> list[dict[str, Any]]:
    """The verdict table as the run reads it: domain rows, then the generic ones."""
    rows = [
        {
            "id": row_label(spec, row),
            "signal": " | ".join(row.signal),
            "verdict": format_verdict(row.verdict),
        }
        for row in spec.verdict_table
    ]
    rows += [
        {"id": generic_row_ref(n), "signal": signal, "verdict": verdict}
        for n, signal, _, verdict in GENERIC_ROWS
    ]
    return rows


def _decision(caused: list[Any], rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What gave the last input its verdict, for the sentence "Row F3 decided ...".

    The trace's ``row`` also labels the runtime's own steps (``select``,
    ``P3:correlation``, ``entry_gate``), many without a verdict, so the last
    event with a ``row`` is not always a decision: the last one with a
    verdict is. ``kind`` says whether a domain row, a generic row (no domain
    row matched) or a rule of the runtime outside the table decided.
    """
    event = next((e for e in reversed(caused) if e.row and e.verdict), None)
    if event is None:
        return None
    generic = {generic_row_ref(n) for n, *_ in GENERIC_ROWS}
    domain = {r["id"] for r in rows} - generic
    kind = "domain" if event.row in domain else "generic" if event.row in generic else "rule"
    return {
        "kind": kind,
        "row": event.row,
        "verdict": event.verdict,
        "note": event.note,
        "event": event,
    }
