"""The workspace's element forms: Django forms whose cleaned data become an edit's ``args``.

Each form edits one element of the head's ChainSpec (an action, a handle, a
verdict row) as the document stores it (``stored``). A field's name is its
place in the element's document with ``__`` between the parts
(``idempotency__mode`` is ``idempotency.mode``); lists of rows (an action's
preconditions, its compensation ladder) are formsets whose prefix is the
list's place written the same way (``compensation__ladder-0-when``). A form
sends every top-level key it shows (``fields`` of ``update_<kind>``): a
section (``idempotency``) starts from what is stored, so the keys the form
does not show survive, takes the typed values over it (an empty box removes
its key), and is removed when nothing is left in it. A row left empty is
dropped; a list with no rows is removed.

A refusal is the framework's: a value a field cannot read is its error, and
a refusal of the edit itself (``EditError``, naming a document path) is put
beside the field at that path by :meth:`ElementForm.refuse`. The workspace
re-renders the bound form, so the person's input stays in every box.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar, get_args

from django import forms
from django.forms import BaseFormSet, formset_factory

from chains.core.edit import EditError
from chains.core.errors import VerdictSyntaxError
from chains.core.glossary import field_help
from chains.core.model import EFFECTS, ChainSpec, Gate
from chains.core.model.actions import AsyncFinality, HttpBinding, Idempotency
from chains.core.model.handles import Rematch
from chains.core.paths import ElementPath, PathError, ref_position
from chains.core.verdicts import VERDICT_TYPES, build_verdict, parse_verdict
from chains.core.verdicts import Verdict as VerdictModel
from chains.views.doc_fields import (
    Chosen,
    Csv,
    Duration,
    FieldErrors,
    Helped,
    IdChoice,
    Ids,
    Signals,
    Text,
    Tick,
    Verdict,
    Yaml,
)

__all__ = [
    "FORMS",
    "ActionForm",
    "AddGateForm",
    "DocumentForm",
    "ElementForm",
    "GateForm",
    "HandleForm",
    "BUILDER_PARTS",
    "VerdictBuilder",
    "VerdictRowForm",
    "ListRow",
    "StepRow",
    "form_for",
    "literal",
    "rows_of",
]


def literal(model: Any, name: str) -> tuple[str, ...]:
    """The values a model's ``Literal`` field allows: the core's list, not a copy of it."""
    annotation = model.model_fields[name].annotation
    found: list[str] = []
    for arg in (annotation, *get_args(annotation)):
        found += [a for a in get_args(arg) if isinstance(a, str)]
    return tuple(found)


def path_of(name: str) -> list[str]:
    """The document place a field or formset prefix names: ``a__b`` is ``["a", "b"]``."""
    return name.split("__")


def _at(data: Any, parts: list[str]) -> Any:
    for part in parts:
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _put(data: dict[str, Any], parts: list[str], value: Any, keep_none: bool = False) -> None:
    """Set ``value`` at ``parts``; None removes it (``keep_none``: is set, a merge's removal)."""
    for part in parts[:-1]:
        if not isinstance(data.get(part), dict):
            data[part] = {}
        data = data[part]
    if value is None and not keep_none:
        data.pop(parts[-1], None)
    else:
        data[parts[-1]] = value


def _blank(value: Any) -> bool:
    """Nothing worth keeping: no value, or only unticked boxes and empty lists."""
    if isinstance(value, dict):
        return all(_blank(v) for v in value.values())
    return value is None or value is False or value in ("", [])


def _offer(form: forms.Form, spec: ChainSpec, own: str = "") -> None:
    """Fill the id pickers with the chain's ids, the stored choice first (even a dangling one)."""
    for name, field in form.fields.items():
        if not isinstance(field, (IdChoice, Ids)):
            continue
        if field.of == "variants":
            ids = list(spec.variants.values) if spec.variants else []
        else:
            ids = [e.id for e in getattr(spec, field.of)]
        current = form.initial.get(name)
        kept = [current] if isinstance(current, str) else list(current or [])
        options = [i for i in dict.fromkeys([*kept, *field.extra, *ids]) if i]
        if field.others:
            options = [i for i in options if i != own or i in kept]
        blank = [("", "—")] if isinstance(field, IdChoice) else []
        field.choices = blank + [(i, i) for i in options]


def _give_help(form: Any, kind: str, base: list[str], helped_as: dict[str, str]) -> None:
    """Each shown field's help text and glossary entry (``form.terms``), from the core.

    A field's place is ``base`` and its name as a path; ``helped_as`` gives a
    box that is no field of the document the place (``kind:place``, or just
    ``place``) whose help it shares.
    """
    form.terms = {}
    for name, field in form.fields.items():
        if field.widget.is_hidden:
            continue
        place = helped_as.get(name, name)
        about, _, place = place.rpartition(":")
        found = field_help(about or kind, [*base, *(path_of(place) if place else [])])
        if found is not None:
            field.help_text = found.text
            form.terms[name] = found.term


# --- rows -------------------------------------------------------------------------------


class ListRow(forms.Form):
    """One row of a list: its stored value (``initial["stored"]``) with the typed fields over it."""

    bound_field_class = Helped
    helped_as: ClassVar[dict[str, str]] = {}

    def __init__(self, *args: Any, spec: ChainSpec, own: str = "", kind: str = "", **kw: Any):
        stored = (kw.get("initial") or {}).get("stored")
        if isinstance(stored, dict):
            kw["initial"] = {**stored, **kw["initial"]}
        kw["error_class"] = FieldErrors
        super().__init__(*args, **kw)
        _offer(self, spec, own)
        _give_help(self, kind, path_of((self.prefix or "").rsplit("-", 1)[0]), self.helped_as)

    def value(self) -> Any:
        """The row as stored, or None for a row left empty."""
        typed = {k: v for k, v in self.cleaned_data.items() if not isinstance(v, bool)}
        if not self.cleaned_data or _blank(typed):
            return None
        stored = self.initial.get("stored")
        row = copy.deepcopy(stored) if isinstance(stored, dict) else {}
        for name, value in self.cleaned_data.items():
            _put(row, [name], value)
        return row


class StepRow(ListRow):
    """A row that is one action id (a compensation chain's step)."""

    helped_as: ClassVar[dict[str, str]] = {"step": ""}  # the list explains its steps

    step = IdChoice("actions", others=True)

    def value(self) -> Any:
        return self.cleaned_data.get("step")


class IntentRow(ListRow):
    name = Text(size=12, placeholder="check_in")
    type = Text(size=8, placeholder="string")
    required = Tick(initial=True)

    def value(self) -> Any:
        row = super().value()
        return row if row and row.get("name") else None


class LadderRow(ListRow):
    when = Text(size=16, placeholder="instance.state == 'running'")
    action = IdChoice("actions", others=True)
    chain = Csv(size=14, placeholder="stop, terminate")


LadderRow.base_fields["else"] = Verdict(size=14, placeholder="escalate(operator)")


class PreconditionRow(ListRow):
    when = Text(size=18, placeholder="price changed since quote")
    verdict = Verdict(size=16)
    reason = Text(size=12)


class AutoRepairRow(ListRow):
    trigger = Text(size=16, placeholder="code:DATES_IN_PAST")
    fields = Text(size=16, placeholder="shift dates by a day")
    once = Tick(initial=True)


class OutcomeRow(ListRow):
    name = Text(size=10, placeholder="accept")
    verdict = Verdict(size=18, placeholder="ok")
    bind = Csv(size=12, placeholder="room_pick")
    params = Yaml(size=12, placeholder="{note: string}")
    set = Yaml(size=12, placeholder="{consent: true}")

    def value(self) -> Any:
        row = super().value()
        return row if row and row.get("name") else None


class Rows(BaseFormSet):
    """A list of rows and one blank row to add with; ``named``: a mapping by each row's name."""

    named = False
    least = 1  # rows shown when none is stored (a new gate's accept and decline)

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.extra = max(1, self.least - len(self.initial or []))

    def row_at(self, key: str) -> ListRow | None:
        """The row a path names: by its ``#n`` (from 1), or by its name in a mapping."""
        n = ref_position(key)
        if n is not None:
            return self.forms[n - 1] if 0 < n <= len(self.forms) else None
        named = [f for f in self.forms if f.is_bound and f.data.get(f.add_prefix("name")) == key]
        return named[0] if named else None

    def value(self) -> Any:
        rows = [row for form in self.forms if (row := form.value()) is not None]
        if self.named:
            return {row.pop("name"): row for row in rows} or None
        return rows or None


def rows_of(form: type[ListRow], named: bool = False, least: int = 1) -> type[Rows]:
    made = formset_factory(form, formset=Rows)
    made.named, made.least = named, least
    return made


def _stored_rows(value: Any, named: bool) -> list[dict[str, Any]]:
    if named and isinstance(value, dict):
        return [
            {"stored": {"name": k, **(v if isinstance(v, dict) else {})}} for k, v in value.items()
        ]
    if isinstance(value, list):
        return [{"stored": v} if isinstance(v, dict) else {"step": v} for v in value]
    return []


# --- element forms ------------------------------------------------------------------------


class DocumentForm(forms.Form):
    """A form over one part of a chain document (``stored``): its fields, its rows, its edit.

    ``form_id`` names the form on the page (a hidden ``form`` field) and in
    its HTML ids; ``op`` is the edit it makes. With ``targeted`` the form
    edits one element, named by the hidden ``target`` (an id, a row's ``#n``).
    ``shape`` says how the typed values become the edit's arguments:
    ``"replace"`` sends each top-level key it shows, whole (``update_action``);
    ``"merge"`` sends every place it shows, None where a box was emptied
    (``update_policy`` merges them in); ``"flat"`` sends the keys themselves
    as arguments, leaving out the empty ones (``add_action(id, effect)``).
    """

    form_id: ClassVar[str] = "element-form"
    op: str  # the edit, one per class but the YAML editor's (``update_<kind>``)
    kind: str = ""  # what its fields are fields of: a glossary.KINDS key
    bound_field_class = Helped
    helped_as: ClassVar[dict[str, str]] = {}  # see _give_help
    targeted: ClassVar[bool] = False
    shape: ClassVar[str] = "replace"
    rows: ClassVar[dict[str, type[Rows]]] = {}

    target = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(
        self,
        spec: ChainSpec,
        stored: dict[str, Any] | None = None,
        target: str = "",
        data: Any = None,
    ):
        self.spec, self.stored = spec, stored or {}
        initial: dict[str, Any] = {"target": target}
        for name in self.base_fields:
            value = _at(self.stored, path_of(name))
            if isinstance(self.base_fields[name], Tick):
                initial[name] = value not in (None, False)  # by_key_replay: {} is ticked
            elif name != "target" and value is not None:
                initial[name] = value
        auto_id = f"{self.form_id.removesuffix('-form')}-%s"
        super().__init__(data, initial=initial, auto_id=auto_id, error_class=FieldErrors)
        if not self.targeted:
            del self.fields["target"]
        if not spec.variants:
            self.fields.pop("only", None)
        _offer(self, spec, target)
        _give_help(self, self.kind, [], self.helped_as)
        self.formsets: dict[str, Rows] = {
            prefix: rows(
                data,
                prefix=prefix,
                initial=_stored_rows(_at(self.stored, path_of(prefix)), rows.named),
                form_kwargs={"spec": spec, "own": target, "kind": self.kind},
                error_class=FieldErrors,
                auto_id=auto_id,  # unique on a page with several forms
            )
            for prefix, rows in self.rows.items()
        }

    def is_valid(self) -> bool:
        valid = super().is_valid()
        return all([valid, *(rows.is_valid() for rows in self.formsets.values())])

    @property
    def has_row_errors(self) -> bool:
        return any(rows.total_error_count() for rows in self.formsets.values())

    def summary(self) -> str:
        """Every refusal as ``field: reason``, for the page's banner and the 400's text."""
        said = [
            f"{'form' if name == '__all__' else name.replace('__', '.')}: {' '.join(errors)}"
            for name, errors in self.errors.items()
        ]
        for prefix, rows in self.formsets.items():
            where = prefix.replace("__", ".")
            if rows.non_form_errors():
                said.append(f"{where}: {' '.join(rows.non_form_errors())}")
            for n, errors in enumerate(rows.errors):
                said += [f"{where}.{n}.{k}: {' '.join(v)}" for k, v in errors.items()]
        return "; ".join(said)

    def shown(self) -> list[str]:
        return [n for n in self.fields if n != "target"]

    def args(self) -> dict[str, Any]:
        """The edit's arguments, shaped by ``shape`` (see the class)."""
        places = [path_of(n) for n in [*self.shown(), *self.formsets]]
        values = [self.value_of(n) for n in self.shown()]
        values += [rows.value() for rows in self.formsets.values()]
        if self.shape == "merge":
            patch: dict[str, Any] = {}
            for parts, value in zip(places, values, strict=True):
                _put(patch, parts, value, keep_none=True)
            return {"fields": patch}
        document = copy.deepcopy(self.stored)
        for parts, value in zip(places, values, strict=True):
            _put(document, parts, value)
        sections = {tuple(p[:i]) for p in places for i in range(1, len(p))}
        for section in sorted(sections, key=len, reverse=True):
            if _blank(_at(document, list(section))):
                _put(document, list(section), None)
        fields = {k: document.get(k) for k in dict.fromkeys(p[0] for p in places)}
        if self.shape == "flat":
            return {k: v for k, v in fields.items() if v is not None}
        return (
            {"id": self.cleaned_data["target"], "fields": fields}
            if self.targeted
            else {"fields": fields}
        )

    def value_of(self, name: str) -> Any:
        return self.cleaned_data.get(name)

    def refuse(self, exc: EditError) -> None:
        """Put the core's refusal beside the field at its path, else above the form."""
        parts = _local_path(exc.path)
        for prefix, rows in self.formsets.items():
            head = path_of(prefix)
            if parts[: len(head)] != head or len(parts) <= len(head):
                continue
            row = rows.row_at(parts[len(head)])
            if row is not None:
                rest = parts[len(head) + 1 :]
                row.add_error(rest[0] if rest and rest[0] in row.fields else None, exc.message)
                return
        self.add_error(self._field_at(parts), exc.message)

    def _field_at(self, parts: list[str]) -> str | None:
        names = self.shown()
        for n in range(len(parts), 0, -1):
            exact = "__".join(parts[:n])
            if exact in names:
                return exact
            under = [name for name in names if name.startswith(exact + "__")]
            if under:
                return under[0]
        return None


class ElementForm(DocumentForm):
    """The form of one element the workspace selected (its panel's "Save")."""

    targeted = True


def _local_path(path: str) -> list[str]:
    """The place ``path`` names inside the part a form edits, as names.

    ``actions[book].compensation.ladder[#1].else`` is ``[compensation, ladder,
    #1, else]``; ``policy.per_chain.max_rewinds`` is ``[per_chain,
    max_rewinds]``; an argument's name (``fields.id``) is ``[id]``.
    """
    try:
        parsed = ElementPath.parse(path)
    except PathError:
        return []
    names = list(parsed.names)
    if parsed.ref is not None:
        names = names[2:]
    elif names[:1] in (["policy"], ["fields"]):
        names = names[1:]
    return names


_IDEMPOTENCY = {"natural": "natural (repeating is safe)", "none": "none (unkeyed)"}


class ActionForm(ElementForm):
    op, kind = "update_action", "action"
    rows: ClassVar[dict[str, type[Rows]]] = {
        "input__intent": rows_of(IntentRow, named=True),
        "compensation__chain": rows_of(StepRow),
        "compensation__ladder": rows_of(LadderRow),
        "preconditions": rows_of(PreconditionRow),
        "auto_repairs": rows_of(AutoRepairRow),
    }

    id = Text(required=True)
    effect = Chosen(EFFECTS, required=True)
    entry_gate = IdChoice("gates")
    timeout = Duration(size=8, placeholder="30s")
    latency_hint = Duration(size=8, placeholder="2s")
    probe_only = Tick()
    input__handles = Ids("handles")
    output__handles = Ids("handles")
    output__business_expiry__field = Text(size=14, placeholder="quote.expires_at")
    output__business_expiry__on_expiry = Verdict(size=18, placeholder="rewind(to: quote)")
    idempotency__mode = Chosen(literal(Idempotency, "mode"), _IDEMPOTENCY)
    idempotency__key_scope = Chosen(literal(Idempotency, "key_scope"))
    idempotency__key_retention = Duration(size=8, placeholder="24h")
    idempotency__replay_semantics = Chosen(literal(Idempotency, "replay_semantics"))
    confirmation__probe = IdChoice("actions", others=True)
    confirmation__signal = Text(size=20, placeholder="a reservation with our label")
    confirmation__by_key_replay = Tick()
    confirmation__async__channel = Chosen(literal(AsyncFinality, "channel"))
    confirmation__async__deadline = Duration(size=8, placeholder="24h")
    confirmation__sweep__interval = Duration(size=8, placeholder="5m")
    confirmation__sweep__escalate_after = Duration(size=8, placeholder="1h")
    compensation__action = IdChoice("actions", extra=("none",), others=True)
    compensation__window = Text(size=12, placeholder="until check-in")
    compensation__ordering_note = Text(size=20)
    revocation__watch = Csv(placeholder="webhook:refund.failed")
    revocation__window = Duration(size=8, placeholder="30d")
    revocation__route = Verdict(placeholder="escalate(operator)")
    request_invariants = Yaml(
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "e.g. {capture_method: manual}"})
    )
    http__method = Chosen(literal(HttpBinding, "method"))
    http__path = Text(size=24, placeholder="/air/orders/{order_id}")
    http__operation_id = Text(size=16, placeholder="createOrder")
    http__idempotency_header = Text(size=16, placeholder="Idempotency-Key")
    http__sends = Yaml(
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "e.g. {offer_id: body:/offer_id}"})
    )
    http__reads = Yaml(
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "e.g. {order_id: body:/data/id}"})
    )
    only = Ids("variants")
    description = Text(widget=forms.Textarea(attrs={"rows": 3}))

    def value_of(self, name: str) -> Any:
        value = super().value_of(name)
        if name == "confirmation__by_key_replay":
            # Ticked keeps what is stored (a note, or true); unticked removes it.
            kept = _at(self.stored, ["confirmation", "by_key_replay"])
            return (kept or True) if value else None
        return value


class HandleForm(ElementForm):
    op, kind = "update_handle", "handle"

    id = Text(required=True)
    minted_by = IdChoice("actions", extra=("external",))
    derived_from = Ids("handles", rows=4)
    single_use = Tick()
    staleness__detect = Csv(placeholder="http:410, code:QUOTE_EXPIRED")
    staleness__ttl_hint = Duration(size=8, placeholder="15m")
    staleness__refresh = IdChoice("actions")
    staleness__contractual = Tick()
    rematch__key = Csv(placeholder="room_type, board")
    rematch__on_ambiguous = Chosen(literal(Rematch, "on_ambiguous"))
    only = Ids("variants")
    description = Text(widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(
        self, spec: ChainSpec, stored: dict[str, Any] | None, target: str, data: Any = None
    ):
        super().__init__(spec, stored, target, data)
        self.fields["derived_from"].choices = [
            c for c in self.fields["derived_from"].choices if c[0] != target
        ]


# The parts of a verdict a builder shows, each a box ``verdict_<part>``.
BUILDER_PARTS = ("type", "to", "gate", "fields", "reason", "permanent", "retry_after_hint")
_PERMANENT = {"true": "yes: trying again cannot help", "false": "no: it may pass later"}


class VerdictBuilder(forms.Form):
    """A verdict built from parts, ``verdict_<part>``: the same boxes wherever a row is edited.

    ``clean`` puts the built verdict's text in ``cleaned_data["verdict"]``;
    the boxes themselves are no field of the document (``shown`` leaves
    them out). Editing a stored verdict starts from its parts, and the
    arguments the builder does not show stay while its type does.
    """

    helped_as: ClassVar[dict[str, str]] = {f"verdict_{p}": f"verdict:{p}" for p in BUILDER_PARTS}

    verdict_type = Chosen(VERDICT_TYPES, required=True)
    verdict_to = IdChoice("actions")
    verdict_gate = IdChoice("gates")
    verdict_fields = Text(placeholder="dates, cabin")
    verdict_reason = Text(placeholder="sold_out")
    verdict_permanent = Chosen(("true", "false"), _PERMANENT)
    verdict_retry_after_hint = Text(size=14, placeholder="1h")  # a hint: words may do

    stored_verdict: VerdictModel | None = None

    def start_from(self, text: Any) -> None:
        """Show the stored verdict ``text`` in the builder's boxes."""
        try:
            v = parse_verdict(text) if isinstance(text, str) else None
        except VerdictSyntaxError:
            v = None  # a stored verdict that no longer parses: the builder starts empty
        self.stored_verdict = v
        if v is not None:
            parts = {"type": v.type, "to": v.to, "gate": v.gate, "reason": v.reason}
            parts["fields"] = ", ".join(v.fields) or None
            parts["permanent"] = None if v.permanent is None else str(v.permanent).lower()
            parts["retry_after_hint"] = v.retry_after_hint
            self.initial.update({f"verdict_{k}": p for k, p in parts.items() if p})
            _offer(self, self.spec, "")  # a dangling target stays visible in its picker

    def shown(self) -> list[str]:
        return [n for n in super().shown() if not n.startswith("verdict_")]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        parts = {p: data.get(f"verdict_{p}") for p in BUILDER_PARTS}
        try:
            data["verdict"] = build_verdict(parts, keep=self.stored_verdict)
        except VerdictSyntaxError as exc:
            self.add_error("verdict_type", str(exc))
        return data


class VerdictRowForm(VerdictBuilder, ElementForm):
    op, kind = "update_row", "row"

    id = Text()
    signal = Signals()
    scope__steps = Ids("actions")
    scope__consumers_of = Ids("handles")
    no_side_effect = Tick()
    only = Ids("variants")
    description = Text(widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(
        self, spec: ChainSpec, stored: dict[str, Any] | None, target: str, data: Any = None
    ):
        super().__init__(spec, stored, target, data)
        self.start_from(self.stored.get("verdict"))

    def args(self) -> dict[str, Any]:
        made = super().args()
        made["fields"]["verdict"] = self.cleaned_data["verdict"]
        return made


class GateForm(ElementForm):
    op, kind = "update_gate", "gate"
    rows: ClassVar[dict[str, type[Rows]]] = {"outcomes": rows_of(OutcomeRow, named=True, least=2)}

    id = Text(required=True)
    audience = Chosen(literal(Gate, "audience"), required=True)
    timeout__after = Duration(size=8, placeholder="10m")
    timeout__outcome = Text(size=10, placeholder="decline")  # listed: ``<form>-outcomes``
    timeout__verdict = Verdict(size=18)
    payload_expiry__field = Text(size=14, placeholder="quote.expires_at")
    payload_expiry__verdict = Verdict(size=18)
    payload = Yaml(placeholder="{price: string, room: string}")
    only = Ids("variants")
    description = Text(widget=forms.Textarea(attrs={"rows": 2}))


class AddGateForm(GateForm):
    """A new gate: the gate form's fields as ``add_gate``'s arguments."""

    form_id, op, targeted, shape = "add-gate", "add_gate", False, "flat"


for _gate in (GateForm, AddGateForm):
    _gate.base_fields["timeout__outcome"] = outcome = copy.deepcopy(
        GateForm.base_fields["timeout__outcome"]
    )
    outcome.widget.attrs["list"] = f"{_gate.form_id}-outcomes"


FORMS: dict[str, type[ElementForm]] = {
    form.op: form for form in (ActionForm, HandleForm, VerdictRowForm, GateForm)
}


def form_for(
    kind: str, spec: ChainSpec, stored: dict[str, Any], target: str, data: Any = None
) -> ElementForm | None:
    """The form of the element ``target`` of ``kind``, bound to ``data`` when posted.

    None for a kind without a form here.
    """
    form = FORMS.get(f"update_{kind}")
    return form(spec, stored, target, data) if form is not None else None
