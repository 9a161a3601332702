"""Every form the workspace posts an edit from, and which one a post came from.

The element forms (an action, a handle, a gate, a verdict row) live in
``element_forms``; here are the adders, the new verdict row with its verdict
builder, the policy's budgets, a new per-action entry, the variants, and the
three YAML editors. Each is a :class:`~chains.views.element_forms.DocumentForm`
over the part of the head's ChainSpec it edits, named by its hidden ``form``
field. :func:`posted_form` binds the form a post came from; a post that names
none (a quick fix, a row's buttons, a script, the page's JavaScript) is an
:class:`EditForm`: ``op``, ``base`` and ``args`` as one JSON object, the
API's ``EditIn``. :func:`page_forms` gives the page its unbound forms.
"""

from __future__ import annotations

from typing import Any, ClassVar

import yaml
from django import forms
from django.http import HttpRequest, QueryDict

from chains.core import edit, formats
from chains.core.edit import EditError
from chains.core.model import COMMIT_CLASS_EFFECTS, EFFECTS, EVIDENCE_TAGS, ChainSpec, rows_by_ref
from chains.core.model.policy import EscalationStep
from chains.core.paths import SECTIONS
from chains.services.editing import parse_args
from chains.views.doc_fields import (
    Chosen,
    Csv,
    Duration,
    IdChoice,
    Ids,
    Number,
    Signals,
    Text,
    Tick,
    Whole,
    Yaml,
)
from chains.views.element_forms import (
    FORMS,
    AddGateForm,
    DocumentForm,
    ListRow,
    StepRow,
    VerdictBuilder,
    literal,
    rows_of,
)
from chains.views.forms import posted_data

__all__ = [
    "CHAIN_SECTIONS",
    "SECTIONS",
    "EditForm",
    "chain_data",
    "element_data",
    "page_forms",
    "posted_form",
]

# Parts of a chain document with edits of their own (the rest is "chain settings").
CHAIN_SECTIONS = {"id", *SECTIONS.values(), "policy"}


def element_model(spec: ChainSpec, kind: str, name: str) -> Any:
    """The element ``kind:name`` of ``spec``; a row is named by its id or ``#n``."""
    if kind == "row":
        return rows_by_ref(spec.verdict_table).get(name)
    return {"action": spec.action, "handle": spec.handle, "gate": spec.gate}[kind](name)


def element_data(spec: ChainSpec, kind: str, value: Any) -> dict[str, Any]:
    """The document form of the element ``value`` (a model of ``spec``'s ``kind``)."""
    section = SECTIONS[kind]
    position = next(i for i, item in enumerate(getattr(spec, section)) if item is value)
    found: dict[str, Any] = formats.to_document(spec)[section][position]
    return found  # the document lists them in the model's order


def chain_data(spec: ChainSpec) -> dict[str, Any]:
    """The chain's own fields (title, variants, ...): what ``update_chain`` edits."""
    return {k: v for k, v in formats.to_document(spec).items() if k not in CHAIN_SECTIONS}


# --- adders -----------------------------------------------------------------------------


class AddActionForm(DocumentForm):
    form_id, op, shape, kind = "add-action", "add_action", "flat", "action"

    id = Text(required=True)
    effect = Chosen(EFFECTS, required=True)


class AddHandleForm(DocumentForm):
    form_id, op, shape, kind = "add-handle", "add_handle", "flat", "handle"

    id = Text(required=True)
    minted_by = IdChoice("actions")
    single_use = Tick()

    def value_of(self, name: str) -> Any:
        value = super().value_of(name)
        return value or None if name == "single_use" else value


class AddRowForm(VerdictBuilder, DocumentForm):
    """A new verdict row; its verdict is built from parts (type, step, gate, fields, reason)."""

    form_id, op, kind = "add-row", "add_row", "row"

    # Examples that fit any domain, not one fixture's next id (which read as a default).
    id = Text(required=True, placeholder="quote_expired")
    signal = Signals(placeholder="http:410, code:QUOTE_EXPIRED")
    scope__steps = Ids("actions", rows=4)
    scope__consumers_of = Ids("handles", rows=4)
    only = Ids("variants")
    no_side_effect = Tick()
    fragile = Tick()
    source__tag = Chosen(EVIDENCE_TAGS)
    source__urls = forms.URLField(
        required=False,
        assume_scheme="https",
        widget=forms.URLInput(attrs={"placeholder": "https://docs.example.com/errors#codes"}),
    )

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.fields["verdict_fields"].widget.attrs["list"] = "intent-names"

    def value_of(self, name: str) -> Any:
        value = super().value_of(name)
        if name == "fragile":
            return "prose-match" if value else None
        if name == "no_side_effect":
            return value or None
        if name == "source__urls":
            return [value] if value else None
        return value or None

    def args(self) -> dict[str, Any]:
        fields = super().args()["fields"]
        fields["verdict"] = self.cleaned_data["verdict"]
        return {"fields": {k: v for k, v in fields.items() if v is not None}}


# --- the policy and the chain's settings ----------------------------------------------


class EscalationRow(ListRow):
    audience = Chosen(literal(EscalationStep, "audience"))
    may = Csv(placeholder="approve a price change, choose a new card")

    def value(self) -> Any:
        row = super().value()
        return row if row and row.get("audience") else None  # no audience drops the rung


# The per-step policies the budgets form shows: each effect class, the commit-class
# ones keyed and unkeyed (SPEC §2.4), as (label, place under per_step).
STEPS = [
    (label, place)
    for effect in EFFECTS
    for label, place in (
        [(f"{effect}, keyed", f"{effect}__keyed"), (f"{effect}, unkeyed", f"{effect}__unkeyed")]
        if effect in COMMIT_CLASS_EFFECTS
        else [(effect, effect)]
    )
]
BACKOFF = ("base", "factor", "jitter", "max")
_ORDER = [
    ("", "the steps listed above (none: not set)"),
    ("reverse", "reverse (undo the latest commit first)"),
]


def _backoff(part: str) -> forms.Field:
    if part == "factor":
        return Number(placeholder="2")
    if part == "jitter":
        field = Text(size=5, placeholder="full")
        field.widget.attrs["list"] = "jitter-choices"
        return field
    return Duration(size=6, placeholder="500ms" if part == "base" else "8s")


class PolicyForm(DocumentForm):
    """The policy's budgets: per chain, per step, per action, and the escalation ladder."""

    form_id, op, shape, kind = "policy-form", "update_policy", "merge", "policy"
    helped_as: ClassVar[dict[str, str]] = {"order": "per_chain__compensation_order"}
    rows: ClassVar[dict[str, Any]] = {
        "per_chain__compensation_order": rows_of(StepRow),
        "escalation": rows_of(EscalationRow),
    }

    per_chain__max_rewinds = Whole(size=4)
    per_chain__max_repairs = Whole(size=4)
    per_chain__wall_clock = Duration(size=8, placeholder="30m")
    per_chain__gate_timeout = Duration(size=8, placeholder="24h")
    order = forms.ChoiceField(choices=_ORDER, required=False)

    def __init__(
        self, spec: ChainSpec, stored: dict[str, Any] | None = None, *args: Any, **kw: Any
    ):
        stored = stored or {}
        # Entries keyed by an action id override its effect class for that one step.
        self.entries = [k for k in stored.get("per_step") or {} if k not in EFFECTS]
        fields = dict(PolicyForm.declared_fields)  # this form's own copy: the entries vary
        for place in [p for _, p in STEPS] + self.entries:
            fields[f"per_step__{place}__attempts"] = Whole()
            if place in self.entries:
                fields[f"per_step__{place}__timeout"] = Duration(size=6, placeholder="30s")
            for part in BACKOFF:
                fields[f"per_step__{place}__backoff__{part}"] = _backoff(part)
        self.base_fields = fields
        super().__init__(spec, stored, *args, **kw)
        if _at_order(stored) == "reverse":
            self.initial["order"] = "reverse"

    def shown(self) -> list[str]:
        return [n for n in super().shown() if n != "order"]

    def args(self) -> dict[str, Any]:
        args = super().args()
        if self.cleaned_data.get("order") == "reverse":
            args["fields"]["per_chain"]["compensation_order"] = "reverse"
        return args

    def steps(self) -> list[tuple[str, Any, list[Any]]]:
        """Each effect class's row: its label, attempts box and backoff boxes."""
        return [(label, *self._step(place)) for label, place in STEPS]

    def per_action(self) -> list[tuple[str, Any, Any, list[Any]]]:
        """Each per-action entry's row: its action id, attempts, timeout and backoff boxes."""
        rows = []
        for key in self.entries:
            attempts, backoff = self._step(key)
            rows.append((key, attempts, self[f"per_step__{key}__timeout"], backoff))
        return rows

    def _step(self, place: str) -> tuple[Any, list[Any]]:
        at = f"per_step__{place}__"
        return self[f"{at}attempts"], [self[f"{at}backoff__{part}"] for part in BACKOFF]


def _at_order(stored: dict[str, Any]) -> Any:
    return (stored.get("per_chain") or {}).get("compensation_order")


class PerActionForm(DocumentForm):
    """A new per-action entry: its key is the action chosen (``update_policy`` merges it in)."""

    form_id, op, kind = "per-action-form", "update_policy", "policy"
    # The entry's key is an action id ("*" stands for it): its boxes are a step policy's.
    helped_as: ClassVar[dict[str, str]] = {
        "action": "per_step",
        "attempts": "per_step__*__attempts",
        "timeout": "per_step__*__timeout",
    }

    action = IdChoice("actions")
    attempts = Whole()
    timeout = Duration(size=6, placeholder="30s")

    def __init__(
        self, spec: ChainSpec, stored: dict[str, Any] | None = None, *args: Any, **kw: Any
    ):
        super().__init__(spec, None, *args, **kw)
        taken = (stored or {}).get("per_step") or {}
        field = self.fields["action"]
        field.choices = [c for c in field.choices if c[0] not in taken]

    def args(self) -> dict[str, Any]:
        data = self.cleaned_data
        entry = {k: data[k] for k in ("attempts", "timeout") if data.get(k) is not None}
        return {"fields": {"per_step": {data["action"]: entry}} if data.get("action") else {}}


class VariantsForm(DocumentForm):
    form_id, op, kind = "variants-form", "update_chain", "chain"

    variants__axis = Text(size=10, placeholder="rail")
    variants__values = Csv(placeholder="NDC, EDIFACT")


# --- the YAML editors -------------------------------------------------------------------


class YamlText(Yaml):
    """The YAML editor's whole mapping, shown as block YAML."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=88)
        return value

    def validate(self, value: Any) -> None:
        super().validate(value)
        if value is not None and not isinstance(value, dict):
            raise forms.ValidationError("expected a YAML mapping (key: value lines)")


class YamlForm(DocumentForm):
    """Every field of a part as YAML: what the editor shows is the whole part."""

    helped_as: ClassVar[dict[str, str]] = {"fields": ""}  # the part itself explains the box

    def __init__(
        self, spec: ChainSpec, stored: dict[str, Any] | None = None, *args: Any, **kw: Any
    ):
        super().__init__(spec, {"fields": stored or {}}, *args, **kw)

    def args(self) -> dict[str, Any]:
        fields = self.cleaned_data["fields"] or {}
        return {"fields": fields}

    def refuse(self, exc: Any) -> None:
        self.add_error("fields", str(exc))  # the editor is one box: its place is in the message


def _yaml_box(editor: str, rows: int) -> YamlText:
    return YamlText(
        widget=forms.Textarea(attrs={"rows": rows, "spellcheck": "false", "id": editor})
    )


class ElementYamlForm(YamlForm):
    form_id, targeted = "element-yaml", True

    def __init__(
        self,
        spec: ChainSpec,
        stored: dict[str, Any] | None,
        target: str = "",
        data: Any = None,
        kind: str = "action",
    ):
        self.op, self.kind = f"update_{kind}", kind
        super().__init__(spec, stored, target, data)

    def args(self) -> dict[str, Any]:
        # A key deleted in the editor is meant gone: the edit replaces the whole element.
        return {"id": self.cleaned_data["target"], **super().args(), "replace": True}


ElementYamlForm.base_fields["fields"] = _yaml_box("element-yaml", 14)


class PolicyYamlForm(YamlForm):
    form_id, op, kind = "policy-yaml", "update_policy", "policy"


PolicyYamlForm.base_fields["fields"] = _yaml_box("policy-yaml", 16)


class SettingsYamlForm(YamlForm):
    form_id, op, kind = "settings-yaml", "update_chain", "chain"


SettingsYamlForm.base_fields["fields"] = _yaml_box("settings-yaml", 12)


# --- a post naming no form --------------------------------------------------------------


class EditForm(forms.Form):
    """An edit as the API takes it: the operation and its arguments as one JSON object."""

    op = forms.ChoiceField(choices=[(op, op) for op in edit.OPS])
    args = forms.CharField(required=False, strip=False)

    def clean_args(self) -> dict[str, Any]:
        text = self.cleaned_data.get("args") or ""
        try:  # read with the importer's limits (size, depth), as the API's JSON is
            return parse_args(text, "args") if text else {}
        except EditError as exc:
            raise forms.ValidationError(exc.message) from None


BY_ID: dict[str, type[DocumentForm]] = {
    form.form_id: form
    for form in (
        AddActionForm,
        AddHandleForm,
        AddGateForm,
        AddRowForm,
        PolicyForm,
        PerActionForm,
        VariantsForm,
        PolicyYamlForm,
        SettingsYamlForm,
    )
}
# What each form edits: the policy, the chain's own fields, or nothing stored yet.
_POLICY = (PolicyForm, PerActionForm, PolicyYamlForm)
_CHAIN = (VariantsForm, SettingsYamlForm)


def _source(spec: ChainSpec, form: type[DocumentForm]) -> dict[str, Any] | None:
    if issubclass(form, _POLICY):
        policy: dict[str, Any] = formats.to_document(spec).get("policy") or {}
        return policy
    if issubclass(form, _CHAIN):
        return chain_data(spec)
    return None


def posted_form(request: HttpRequest, spec: ChainSpec | None) -> DocumentForm | None:
    """The workspace form the request's post came from, bound to it; None for a post naming none."""
    post = posted_data(request) or QueryDict()
    form_id, op = post.get("form", ""), post.get("op", "")
    if spec is None:
        return None  # the head no longer validates: the edit is refused as it stands
    if form_id in ("element-form", "element-yaml") and op.startswith("update_"):
        kind = op.removeprefix("update_")
        if kind not in SECTIONS:
            return None
        target = post.get("target", "")
        value = element_model(spec, kind, target) if target else None
        stored = element_data(spec, kind, value) if value is not None else {}
        if form_id == "element-yaml":
            return ElementYamlForm(spec, stored, target, post, kind=kind)
        return FORMS[op](spec, stored, target, post)
    form = BY_ID.get(form_id)
    if form is None or form.op != op:
        return None
    return form(spec, _source(spec, form), data=post)


def page_forms(spec: ChainSpec, tab: str, element: dict[str, Any] | None) -> dict[str, Any]:
    """The page's forms, unbound, by the name the templates use."""
    found: dict[str, Any] = {
        "add_action": AddActionForm(spec),
        "add_handle": AddHandleForm(spec),
        "add_gate": AddGateForm(spec),
    }
    if tab == "table":
        found["add_row"] = AddRowForm(spec)
    if tab == "policy":
        for name, form in (
            ("policy", PolicyForm),
            ("per_action", PerActionForm),
            ("variants", VariantsForm),
            ("policy_yaml", PolicyYamlForm),
            ("settings_yaml", SettingsYamlForm),
        ):
            found[name] = form(spec, _source(spec, form))
    if element and "data" in element:
        kind, data, target = element["kind"], element["data"], element["id"]
        found["element"] = FORMS[f"update_{kind}"](spec, data, target)
        found["element_yaml"] = ElementYamlForm(spec, data, target, kind=kind)
    return found


NAMES = {
    "element-form": "element",
    "element-yaml": "element_yaml",
    "policy-form": "policy",
    "per-action-form": "per_action",
    "variants-form": "variants",
    "policy-yaml": "policy_yaml",
    "settings-yaml": "settings_yaml",
    "add-action": "add_action",
    "add-handle": "add_handle",
    "add-gate": "add_gate",
    "add-row": "add_row",
}
