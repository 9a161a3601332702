"""Lint rules: an action's HTTP binding agrees with the action it binds.

The binding (``http``) is optional and validated on its own by the model:
each place reads, the path is a template. These rules read it against the
action: every path parameter is filled from something the step sends,
every name it sends or reads is one the step has, and a keyed call says
which header carries its key. None makes a chain invalid: a binding is
what ties real calls (an OpenAPI document, a trace) to the design, and a
wrong one misleads those tools rather than the run.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Action, ChainSpec, HttpBinding, is_keyed
from ..paths import ElementPath
from .context import LintContext
from .registry import Found, rule

__all__: list[str] = []


def _bound(spec: ChainSpec) -> Iterator[tuple[Action, HttpBinding, ElementPath]]:
    """Each bound action, its binding, and the binding's path."""
    for action in spec.actions:
        if action.http is not None:
            yield action, action.http, ElementPath.action(action.id).field("http")


@rule(
    "binding.path-parameter-unsent",
    "warning",
    "SPEC §2.1 input and output (the HTTP binding, docs/format.md)",
    hint="Name what fills it in http.sends: the handle or intent field whose value goes there, "
    "e.g. order_id: path:order_id.",
)
def path_parameter_unsent(spec: ChainSpec, ctx: LintContext) -> Found:
    """A parameter of the bound path is filled by nothing the step sends."""
    for action, http, at in _bound(spec):
        filled = {place.partition(":")[2] for place in http.sends.values() if place[:5] == "path:"}
        for name in http.parameters():
            if name not in filled:
                yield (
                    at.field("path"),
                    f"{ElementPath.action(action.id)} calls {http.method} {http.path}, but "
                    f"nothing it sends goes to the path parameter {{{name}}}.",
                )


@rule(
    "binding.unknown-name",
    "warning",
    "SPEC §2.1 input and output (the HTTP binding, docs/format.md)",
    hint="Send only the step's input handles, intent fields and request invariants, and read "
    "only the handles it mints; rename the entry, or add the name to the step.",
)
def unknown_name(spec: ChainSpec, ctx: LintContext) -> Found:
    """The binding sends or reads a name the step does not have."""
    for action, http, at in _bound(spec):
        has = {*action.input.handles, *action.input.intent, *action.request_invariants}
        for name in http.sends:
            if name not in has:
                yield (
                    at.field("sends", name),
                    f"{ElementPath.action(action.id)} sends {name!r}, which is none of its "
                    "input handles, intent fields or request invariants.",
                )
        for name in http.reads:
            if name not in action.output.handles:
                yield (
                    at.field("reads", name),
                    f"{ElementPath.action(action.id)} reads {name!r} from the answer, which "
                    "is no handle it mints.",
                )


@rule(
    "binding.key-header",
    "warning",
    "SPEC §2.1 idempotency (the HTTP binding, docs/format.md)",
    hint="Give a keyed call's binding its idempotency_header (the provider's, e.g. "
    "Idempotency-Key); take the header off a call that is not keyed, or key it.",
)
def key_header(spec: ChainSpec, ctx: LintContext) -> Found:
    """A keyed call's binding names no key header, or an unkeyed one names one."""
    for action, http, at in _bound(spec):
        if is_keyed(action) and not http.idempotency_header:
            yield (
                at,
                f"{ElementPath.action(action.id)} is keyed, but its binding names no header "
                "for the key, so a client built from it sends the call unkeyed.",
            )
        elif not is_keyed(action) and http.idempotency_header:
            yield (
                at.field("idempotency_header"),
                f"{ElementPath.action(action.id)} sends its key in "
                f"{http.idempotency_header}, but idempotency says the call is not keyed.",
            )
