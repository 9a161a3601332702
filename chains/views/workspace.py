"""The workspace of one chain: the graph, the side panel, the lint panel and every edit.

Every edit is one POST naming a core edit operation (``chains.core.edit``)
and the revision it was based on, from one of the workspace's Django forms
(``workspace_forms``: the form turns its cleaned data into the edit's
arguments) or, for a post naming no form, as ``op`` and JSON ``args``. The
``services.editing`` service applies it to the head and stores the result as
a new revision; the view renders the workspace again (the ``workspace``
partial for htmx, a redirect otherwise). An edit on a stale base is refused
with 409 and stores nothing; a refused edit (unknown element, bad value) is
a 400 naming what and where. What the workspace shows is computed by core
functions; this module only gathers it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, get_args
from urllib.parse import urlencode

import yaml
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from pydantic import BaseModel

from chains.core import edit, formats
from chains.core.coverage import coverage
from chains.core.dot import RenderError
from chains.core.drawing import Canvas, Drawing, start_drawing
from chains.core.edit import EditError
from chains.core.errors import ChainError, DocumentError
from chains.core.fixes import fixes_for, may_fix
from chains.core.keys import GraphKey, GraphKeyError, node_key
from chains.core.layout import Layout
from chains.core.lint import lint
from chains.core.lint.registry import Severity
from chains.core.model import (
    EFFECTS,
    EVIDENCE_TAGS,
    Action,
    ChainSpec,
    Gate,
    Handle,
    compensators,
    main_steps,
    row_ref,
)
from chains.core.paths import SECTIONS
from chains.core.rebase import ABSENT, Rebase, Written
from chains.core.recent import Recent
from chains.core.selection import finding_key, intent_fields
from chains.core.sim.regression import ScenarioCheck
from chains.core.verdicts import GENERIC_ROWS, VERDICT_TYPES
from chains.models import (
    Chain,
    Comment,
    NothingToUndo,
    Revision,
    RevisionLayout,
    Role,
    StaleRevision,
    scenario_checks,
)
from chains.services import editing, scenarios
from chains.services.access import ChainAccess, get_head, spec_of
from chains.services.editing import EditIn, UndoIn
from chains.services.scenarios import AcceptedScenario, NamedScenario
from chains.views.common import get_access
from chains.views.element_forms import DocumentForm
from chains.views.forms import FormError, bound, plain_number, read_post
from chains.views.workspace_forms import (
    NAMES,
    EditForm,
    chain_data,
    element_data,
    element_model,
    page_forms,
    posted_form,
)

AUDIENCES = get_args(Gate.model_fields["audience"].annotation)
ADDERS = ("action", "handle", "gate", "row")  # add forms kept open after an add
TABS = ("actions", "handles", "gates", "table", "coverage", "policy", "evidence", "history")
# Tabs wide enough to want the whole page width (``?wide=1``) instead of the side panel.
WIDE_TABS = ("table", "coverage")
SEVERITIES: tuple[str, ...] = get_args(Severity)
# Findings the lint summary beside the canvas names; the lint panel lists the rest.
SUMMARY_FINDINGS = 3


# The view state every workspace form posts back (templates/chains/_state.html).
# adding: the adder form kept open after an add.
class ViewState(BaseModel):
    """The workspace's view state a form carries along (selection, tab, view, layout, adder)."""

    select: str = ""
    tab: str = ""
    view: str = ""
    wide: str = ""
    sev: str = ""
    adding: str = ""

    def given(self) -> dict[str, str]:
        """The view state's fields that were given a value, by name."""
        return {k: v for k in ViewState.model_fields if (v := getattr(self, k))}


@require_GET
def workspace(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    access = get_access(request, team, key)
    context = workspace_context(access, get_head(access.chain), request.GET)
    return render_workspace(request, context)


@require_POST
def edit_chain(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    access = get_access(request, team, key, Role.EDITOR)
    chain = access.chain
    form = posted_form(request, _head_spec(chain))
    try:
        posted = _edit_of(request, form)
        saved = editing.save_edit(
            chain,
            posted.op,
            posted.args,
            base=posted.base,
            author=request.user,
            draw=_canvas(_state(request, posted), Comment.objects.open_counts(chain))
            if request.htmx
            else None,
        )
    except StaleRevision as exc:
        return _stale(request, access, exc, posted, form)
    except EditError as exc:
        if form is not None:
            form.refuse(exc)
        return _refused(request, access, str(exc), 400, exc, form)
    except ChainError as exc:
        return _refused(request, access, str(exc), 400, exc, form)
    known = {"spec": saved.spec, "report": saved.report, "drawing": saved.drawing}
    return _saved(request, access, saved.revision, posted, **known)


@require_POST
def undo_redo(request: HttpRequest, key: str, action: str, team: str | None = None) -> HttpResponse:
    access = get_access(request, team, key, Role.EDITOR)
    restore = editing.undo if action == "undo" else editing.redo
    try:
        base = read_post(request, UndoIn).base
        revision = restore(access.chain, base=base, author=request.user)
    except StaleRevision as exc:
        return _refused(request, access, str(exc), 409)
    except (NothingToUndo, ChainError) as exc:
        return _refused(request, access, str(exc), 400)
    return _saved(request, access, revision)


@require_POST
def tidy_layout(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """Lay the shown graph out afresh: every node where Graphviz puts it now."""
    access = get_access(request, team, key, Role.EDITOR)
    state = _state(request)
    head = get_head(access.chain)
    RevisionLayout.objects.tidy(head, "flow" if state.get("view") == "flow" else "handles")
    if not request.htmx:
        url = access.chain.url()
        return redirect(f"{url}?{urlencode(state)}", permanent=False)
    return render_workspace(request, workspace_context(access, head, state, refit=True))


@require_POST
def record_scenario(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """Accept a saved scenario's changed outcome, with a note: it now expects what the head does."""
    access = get_access(request, team, key, Role.EDITOR)
    try:
        accepted = read_post(request, AcceptedScenario)
        scenarios.record_again(access.chain, accepted.name, author=request.user, note=accepted.note)
    except ChainError as exc:
        return _refused(request, access, str(exc), 400)
    return _back_to_scenarios(request, access, recorded=accepted.name)


@require_POST
def delete_scenario(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """Stop keeping a saved scenario; the page asks first (it cannot be undone)."""
    access = get_access(request, team, key, Role.EDITOR)
    try:
        name = read_post(request, NamedScenario).name
        scenarios.forget_scenario(access.chain, name)
    except ChainError as exc:
        return _refused(request, access, str(exc), 400)
    return _back_to_scenarios(request, access, forgotten=name)


def _back_to_scenarios(request: HttpRequest, access: ChainAccess, **said: Any) -> HttpResponse:
    """The workspace at its scenario list, as a swap or (without htmx) a redirect."""
    state = _state(request)
    if not request.htmx:
        query = f"?{urlencode(state)}" if state else ""
        return redirect(f"{access.chain.url()}{query}#scenario-checks")
    head = get_head(access.chain)
    return render_workspace(request, workspace_context(access, head, state, **said))


def _head_spec(chain: Chain) -> ChainSpec | None:
    try:
        return spec_of(get_head(chain))
    except DocumentError:
        return None  # the edit is refused as the head no longer validates


def _edit_of(request: HttpRequest, form: DocumentForm | None) -> EditIn:
    """The edit a post asks for: from the workspace form it names, or ``op`` and JSON ``args``.

    A form that refuses a value raises ``FormError`` naming its fields; the
    bound form keeps them for the page to show again.
    """
    base = read_post(request, UndoIn).base
    if form is not None:
        if not form.is_valid():
            raise FormError(form.summary(), tuple(form.errors))
        return EditIn(op=form.op, base=base, args=form.args())
    plain = bound(request, EditForm)
    if not plain.is_valid():
        said = "; ".join(f"{k}: {' '.join(v)}" for k, v in plain.errors.items())
        raise FormError(said, tuple(plain.errors))
    return EditIn(op=plain.cleaned_data["op"], base=base, args=plain.cleaned_data["args"])


# --- what the workspace shows -----------------------------------------------------


def workspace_context(
    access: ChainAccess,
    head: Revision,
    params: Any,
    spec: ChainSpec | None = None,
    report: Any = None,
    drawing: Drawing | None = None,
    refused_form: DocumentForm | None = None,
    **extra: Any,
) -> dict:
    tab = params.get("tab") if params.get("tab") in TABS else "actions"
    view = "flow" if params.get("view") == "flow" else "handles"
    chain = access.chain
    context: dict[str, Any] = {
        "chain": chain,
        "access": access,
        # What the person's role lets the page offer.
        "can_edit": access.may(Role.EDITOR),
        "can_comment": access.may(Role.REVIEWER),
        "head": head,
        "tab": tab,
        "tabs": TABS,
        "wide_tabs": WIDE_TABS,
        **layout_state(params, tab),
        "effects": EFFECTS,
        "view": view,
        "history": chain.revisions.order_by("-number")[:30],
        "threads": Comment.objects.threads(chain)[:50],
        "approved": chain.approved(),
        "adding": params.get("adding") if params.get("adding") in ADDERS else "",
        "explore_on_save": settings.WORKSPACE_EXPLORE_ON_SAVE,
        **extra,
    }
    commented = Comment.objects.open_counts(chain)
    if spec is None:
        try:
            spec = spec_of(head)
        except DocumentError as exc:
            context.update(problems=exc.problems, raw=json.dumps(head.document, indent=2))
            return context
    if drawing is None:
        memory = RevisionLayout.objects.recall(head, view)
        drawing = start_drawing(spec, _canvas(params, commented, memory))
    selection, picture = drawing
    report = report or _linted(head, spec)
    steps, side_actions = _steps(spec)
    beside = Comment.objects.threads(chain).filter(anchor=selection.key) if selection.key else []
    context.update(
        spec=spec,
        report=report,
        selection=selection,
        element=_element(spec, selection.key),
        **_lint_lists(head, spec, report, params.get("fixes"), context["severity"]),
        rows=_rows(spec, report),
        steps=steps,
        side_actions=side_actions,
        # The actions' order, for a step dragged onto another in the flow (canvas.js).
        action_order=json.dumps([a.id for a in spec.actions]),
        element_threads=list(beside[:20]),
        generic_rows=GENERIC_ROWS,
        verdict_types=VERDICT_TYPES,
        intents=intent_fields(spec),
        evidence_tags=EVIDENCE_TAGS,
        audiences=AUDIENCES,
        **(_settings(spec) if tab == "policy" else {}),
    )
    for item in context["rows"]:
        item["comments"] = commented.get(item["key"], 0)
    context["forms"] = page_forms(spec, tab, context["element"])
    context["error_in_form"] = _shows(context["forms"], refused_form)
    for kind in ADDERS:  # the adder kept open, or refused, has the cursor in its id box
        adder = context["forms"].get(f"add_{kind}")
        if adder is not None and (context["adding"] == kind or adder.is_bound):
            adder.fields["id"].widget.attrs["autofocus"] = True
    context["scenario_checks"] = checks = scenario_checks(chain, spec)
    context["scenario_summary"] = scenario_summary(checks)
    notes = dict(chain.scenarios.exclude(note="").values_list("name", "note"))
    context["scenario_rows"] = [{"check": c, "note": notes.get(c.name, "")} for c in checks]
    context["scenario_failing"] = [row for row in context["scenario_rows"] if not row["check"].held]
    if tab == "coverage":
        m = _COVERAGE.get(head.content_hash)
        if m is None:
            m = coverage(spec)  # a cell (mostly None) costs about 150 bytes kept
            _COVERAGE.put(head.content_hash, m, weight=150 * len(m.cells))
        context["matrix"] = m
        context["matrix_rows"] = [
            (step, [m.cells.get((step, c.key)) for c in m.columns]) for step in m.steps
        ]
    try:
        context["svg"], layout = picture.result()
    except RenderError as exc:
        context["render_error"] = str(exc)
    else:
        RevisionLayout.objects.remember(head, view, layout)
    return context


def _canvas(params: Any, commented: Iterable[str] = (), memory: Layout | None = None) -> Canvas:
    """What the canvas shows for the view state ``params``, within the settings' limits.

    Elements with open comment threads (``commented`` keys) are marked ``has-comment``;
    ``memory`` is where the nodes were drawn before.
    """
    return Canvas(
        view="flow" if params.get("view") == "flow" else "handles",
        select=params.get("select") or None,
        commented=frozenset(commented),
        max_nodes=settings.WORKSPACE_GRAPH_MAX_NODES,
        layout_seconds=settings.GRAPH_LAYOUT_SECONDS,
        memory=memory,
    )


def layout_state(params: Any, tab: str) -> dict[str, Any]:
    """The layout a link or form carries along besides tab, view and selection.

    ``wide`` gives the Table or Coverage tab the page's whole width; ``severity``
    filters the lint summary and panel to one severity. ``keep`` is both as a
    query-string tail (``&wide=1&sev=error``) for links to add to their own.
    """
    wide = params.get("wide") == "1" and tab in WIDE_TABS
    severity = params.get("sev") if params.get("sev") in SEVERITIES else ""
    kept = {k: v for k, v in (("wide", "1" if wide else ""), ("sev", severity)) if v}
    return {"wide": wide, "severity": severity, "keep": f"&{urlencode(kept)}" if kept else ""}


def _lint_lists(
    head: Revision, spec: ChainSpec, report: Any, opened: Any, severity: str
) -> dict[str, Any]:
    """What the lint summary and panel show: counts by severity, then the findings of one."""
    counts = {s: 0 for s in SEVERITIES}
    for f in report.findings:
        counts[f.severity] += 1
    findings = _findings(head, spec, report, opened, severity)
    matching = counts[severity] if severity else len(report.findings)
    return {
        "severity_counts": counts,
        "matching": matching,
        "findings": findings,
        "summary_findings": findings[:SUMMARY_FINDINGS],
        "unlisted": max(matching - settings.WORKSPACE_FINDINGS_SHOWN, 0),
    }


def _findings(
    head: Revision, spec: ChainSpec, report: Any, opened: Any = None, severity: str = ""
) -> list[dict]:
    """Each finding with the element it points at and, for the first few, its quick fixes.

    Every fix is tried on the whole chain before it is offered, so the fixes
    of every finding would cost the square of the chain's size. The first
    ``WORKSPACE_EAGER_FIXES`` findings that may have fixes get them here (fewer
    on a large chain: ``WORKSPACE_FIX_BUDGET_BYTES`` bounds the bytes validated
    again), and the one the user opened (``opened``, its index); the others
    get a link that loads theirs (:func:`finding_fixes`). Only the first
    ``WORKSPACE_FINDINGS_SHOWN`` are listed; the API and the CLI list them all.
    With a ``severity``, only findings of that severity are listed; each keeps
    its index in the whole report, which is how its quick fixes are loaded.
    """
    size = len(json.dumps(head.document, separators=(",", ":")))
    eager = min(settings.WORKSPACE_EAGER_FIXES, settings.WORKSPACE_FIX_BUDGET_BYTES // size)
    items: list[dict] = []
    for index, f in enumerate(report.findings):
        if len(items) == settings.WORKSPACE_FINDINGS_SHOWN:
            break
        if severity and f.severity != severity:
            continue
        fixable = may_fix(f)
        shown = fixable and (eager > 0 or opened == str(index))
        eager -= fixable
        items.append(
            {
                "finding": f,
                "index": index,
                "key": finding_key(f.element),
                "fixable": fixable,
                "fixes": _fixes(head, spec, f, index) if shown else None,
            }
        )
    return items


def _shows(forms: dict[str, Any], refused: DocumentForm | None) -> bool:
    """Put the ``refused`` form, bound, in place of its unbound self; whether the page has it.

    The page has it when it shows that form for the same element (the
    selected one, on the tab the post came from).
    """
    if refused is None:
        return False
    name = NAMES[refused.form_id]
    shown = forms.get(name)
    same = (
        shown is not None
        and type(shown) is type(refused)
        and shown.initial.get("target") == refused.initial.get("target")
    )
    if same:
        forms[name] = refused
    return same


def _linted(head: Revision, spec: ChainSpec) -> Any:
    """The lint report of ``head``, kept per content: it is most of a large chain's render."""
    known = _REPORTS.get(head.content_hash)
    if known is None:
        known = lint(spec)  # a finding kept weighs about half a kilobyte
        _REPORTS.put(head.content_hash, known, weight=512 * (1 + len(known.findings)))
    return known


def _fixes(head: Revision, spec: ChainSpec, finding: Any, index: int) -> list[dict]:
    """The quick fixes of one finding, kept per content so a click around the page reuses them."""
    key = f"{head.content_hash}#{index}"
    known = _FIXES.get(key)
    if known is not None:
        return known
    fixes = [
        {"op": fix.op, "title": fix.title, "args_json": json.dumps(fix.args)}
        for fix in fixes_for(spec, finding)
    ]
    return _FIXES.put(key, fixes, weight=len(json.dumps(fixes)) * 2)  # str: ~2 bytes a char


@require_GET
def finding_fixes(request: HttpRequest, key: str, team: str | None = None) -> HttpResponse:
    """The quick fixes of one finding of one revision: what the lint panel loads on demand."""
    access = get_access(request, team, key)
    number = plain_number(request.GET.get("revision"))
    revision = access.chain.revisions.filter(number=number).first()
    index = plain_number(request.GET.get("finding"))
    try:
        spec = spec_of(revision) if revision is not None else None
    except DocumentError:
        spec = None
    findings = _linted(revision, spec).findings if spec is not None else []
    if index is None or not 0 <= index < len(findings):
        return HttpResponseBadRequest(
            f"finding: no finding {request.GET.get('finding')!r} on revision "
            f"{request.GET.get('revision')!r}; reload the workspace"
        )
    assert revision is not None and spec is not None
    item = {"index": index, "fixes": _fixes(revision, spec, findings[index], index)}
    state = {k: request.GET.get(k, "") for k in ("tab", "view", "select")}
    state.update(layout_state(request.GET, state["tab"]))
    context = {"chain": access.chain, "access": access, "head": revision, "item": item, **state}
    context["can_edit"] = access.may(Role.EDITOR)
    return render(request, "chains/workspace.html#fixes", context)


def _steps(spec: ChainSpec) -> tuple[list[dict], list[dict]]:
    """The Actions tab: the main steps in the order a run walks them, each with the place of
    the step before and after it (where ↑ and ↓ move it), then the actions that are no step
    (probes, compensators), each with what it serves."""
    place = {a.id: n for n, a in reversed(list(enumerate(spec.actions)))}
    order = main_steps(spec)
    steps = [
        {
            "action": spec.action(step),
            "index": place[step],
            "up": place[order[n - 1]] if n else None,
            "down": place[order[n + 1]] if n + 1 < len(order) else None,
        }
        for n, step in enumerate(order)
    ]
    serves: dict[str, list[str]] = {}
    for a in spec.actions:
        if a.confirmation and a.confirmation.probe:
            serves.setdefault(a.confirmation.probe, []).append(f"probe of {a.id}")
        for undo in compensators(a):
            serves.setdefault(undo, []).append(f"undoes {a.id}")
    others = [
        {"action": a, "role": ", ".join(serves.get(a.id, [])) or "no step of the run"}
        for a in spec.actions
        if a.id not in order
    ]
    return steps, others


def _rows(spec: ChainSpec, report: Any) -> list[dict]:
    """Domain rows with the findings about each, by :func:`~chains.core.model.row_ref`."""
    marks: dict[str, list[Any]] = {}
    for f in report.findings:
        key = finding_key(f.element)
        if key:
            marks.setdefault(key, []).append(f)
    rows = []
    for n, row in enumerate(spec.verdict_table, 1):
        ref = row_ref(row, n)
        key = node_key("row", ref)
        rows.append({"row": row, "ref": ref, "key": key, "findings": marks.get(key, [])})
    return rows


# The arrow alone does not say which end derives from which: a sentence does.
_EDGE_SAYS = {
    "derived_from": "{} derives from {}.",
    "consumes": "{} consumes {}.",
    "mints": "{} mints {}.",
}


def _element(spec: ChainSpec, text: str | None) -> dict | None:
    """The selected element and its document form, for the side panel's editor."""
    elements: list[Action | Handle | Gate] = [*spec.actions, *spec.handles, *spec.gates]
    names = {e.id for e in elements}
    try:
        key = GraphKey.parse(text or "", names)
    except GraphKeyError:
        return None
    kind, name, shown = key.kind, key.name, str(key)
    if key.is_edge:
        args = {"kind": key.name, "source": key.source, "target": key.target}
        return {
            "kind": f"{key.name} edge",
            "id": " → ".join(key.arrow),  # as drawn, and as quick fixes name it
            "says": _EDGE_SAYS.get(key.name, "").format(key.source, key.target),
            "key": shown,
            "edge": key.name in edit.EDGE_KINDS,
            "edge_args": json.dumps(args),
        }
    section = SECTIONS.get(kind)
    value = element_model(spec, kind, name) if section else None
    if section is None or value is None:
        return {"kind": kind, "id": name, "key": shown}
    found = element_data(spec, kind, value)
    dropped = edit.dropped_with_handle(spec, name) if kind == "handle" else []
    also = f" It is also taken out of {', '.join(dropped)}." if dropped else ""
    return {
        "kind": kind,
        "op": kind,
        "id": name,
        "key": shown,
        "yaml": _yaml(found),
        "delete_args": json.dumps({"id": name}),
        "confirm_delete": f"Delete {kind} {name}?{also} Undo brings it back.",
        "value": value,
        "data": found,
    }


def _settings(spec: ChainSpec) -> dict[str, str]:
    """The policy, and the chain's own fields, as YAML for the Policy tab's two editors."""
    data = formats.to_document(spec)
    own = chain_data(spec)
    return {
        "policy_yaml": _yaml(data.get("policy", {})),
        "settings_yaml": _yaml(own),
        "policy_data": data.get("policy", {}),
        "chain_data": own,
    }


def scenario_summary(checks: list[ScenarioCheck]) -> str:
    """The header's line on the saved scenarios replayed on this revision; "" without any.

    >>> scenario_summary([ScenarioCheck("a", True, ()), ScenarioCheck("b", False, ())])
    'scenarios: 1 passes, 1 fails'
    >>> scenario_summary([ScenarioCheck(n, True, ()) for n in "abc"])
    'scenarios: 3 pass'
    """
    if not checks:
        return ""
    failing = sum(not check.held for check in checks)
    passing = len(checks) - failing
    said = [f"{passing} pass{'es' if passing == 1 else ''}"] if passing else []
    said += [f"{failing} fail{'s' if failing == 1 else ''}"] if failing else []
    return "scenarios: " + ", ".join(said)


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=88)


_FIXES = Recent(1024, budget=settings.DERIVED_CACHE_BYTES)
_COVERAGE = Recent(16, budget=settings.DERIVED_CACHE_BYTES)
_REPORTS = Recent(64, budget=settings.DERIVED_CACHE_BYTES)


# --- answering ------------------------------------------------------------------------


def _state(request: HttpRequest, saved: EditIn | None = None) -> dict[str, str]:
    """The workspace's view state a form carries along (selection, tab, view, layout, adder).

    After a ``saved`` rename the selection follows the element to its new id.
    """
    state = read_post(request, ViewState).given()
    if saved is not None and state.get("select"):
        state["select"] = renamed_selection(saved, state["select"])
    return state


def renamed_selection(posted: EditIn, select: str) -> str:
    """The selection once ``posted`` is saved: a renamed selected element keeps its panel.

    An update with a new ``fields.id`` (the form's Id box, or the YAML editor)
    renames the element; the workspace's ``select`` still names the old id.
    """
    kind = posted.op.removeprefix("update_")
    old, fields = posted.args.get("id"), posted.args.get("fields")
    new = fields.get("id") if isinstance(fields, dict) else None
    if kind not in SECTIONS or not isinstance(new, str) or not new or select != f"{kind}:{old}":
        return select
    return f"{kind}:{new}"


def render_workspace(request: HttpRequest, context: dict, status: int = 200) -> HttpResponse:
    """The workspace page (a :func:`workspace_context`), or its partial for htmx."""
    template = "chains/workspace.html#workspace" if request.htmx else "chains/workspace.html"
    return render(request, template, context, status=status)


def _saved(
    request: HttpRequest,
    access: ChainAccess,
    revision: Revision,
    posted: EditIn | None = None,
    **known: Any,
) -> HttpResponse:
    """After a save: redirect a plain post, re-render the workspace for htmx.

    ``known`` may carry the saved ``spec`` and its lint ``report``, so
    the re-render neither validates nor lints it again.
    """
    state = _state(request, posted)
    if not request.htmx:
        url = access.chain.url()
        return redirect(f"{url}?{urlencode(state)}" if state else url, permanent=False)
    context = workspace_context(access, revision, state, saved=revision, **known)
    return render_workspace(request, context)


def _refused(
    request: HttpRequest,
    access: ChainAccess,
    message: str,
    status: int,
    exc: Exception | None = None,
    form: DocumentForm | None = None,
) -> HttpResponse:
    """The workspace again with the reason, and what the user typed kept in its form.

    The posting ``form`` is rendered bound, as posted, each refusal beside its
    field (a refusal it could not place, above it); the page's banner says it
    only when that form is not on the page (a script's post, another tab).
    """
    if form is not None and not form.errors and not form.has_row_errors:
        form.add_error(None, message)
    context = workspace_context(
        access, get_head(access.chain), _state(request), error=message, refused_form=form
    )
    context["stale"] = status == 409
    return render_workspace(request, context, status)


def _stale(
    request: HttpRequest,
    access: ChainAccess,
    exc: StaleRevision,
    posted: EditIn,
    form: DocumentForm | None = None,
) -> HttpResponse:
    """The head, with the refused edit beside its values and a form that posts it again on it.

    The re-apply form carries the same op and arguments with the head as base,
    so it is refused again (and measured again) if the head moves once more.
    A YAML editor that posted keeps what was typed in it.
    """
    check: Rebase | None = getattr(exc, "rebase", None)
    message = getattr(exc, "plain", str(exc))
    typed = form if form is not None and form.form_id.endswith("-yaml") else None
    context = workspace_context(
        access, exc.head, _state(request), error=message, stale=True, refused_form=typed
    )
    context["error_in_form"] = False
    context["stale_edit"] = {
        "base": posted.base,
        "op": posted.op,
        "args_json": json.dumps(check.reapply if check else posted.args),
        "check": check,
        "sides": [_side(w) for w in check.written] if check else [],
    }
    return render_workspace(request, context, 409)


def _side(written: Written) -> dict[str, Any]:
    """One row of the stale answer: where, and yours beside theirs as text a person reads."""
    return {
        "where": _where(written),
        "field": written.name or (written.id if written.element == "edge" else "the whole element"),
        "yours": _shown(written.yours, written.element),
        "theirs": _shown(written.theirs, written.element),
        "changed": written.changed_by_them,
        "clash": written.conflicts,
    }


def _where(written: Written) -> str:
    if written.element in ("edge", "policy"):
        return written.element
    return "chain settings" if written.element == "chain" else f"{written.element} {written.id}"


def _shown(value: Any, element: str) -> str:
    if element == "edge":
        return "there" if value else "not there"
    if value is ABSENT:
        return "(not set)"
    if isinstance(value, str):
        return value  # what was typed, as typed
    return _yaml(value).removesuffix("...\n").strip()
