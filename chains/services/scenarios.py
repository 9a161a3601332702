"""Keeping a scenario with a chain: one path for the simulator page, the API and the CLI.

Each door reads the scenario its own way (the page from the run's address,
the API from a posted text or object, the command line from a file) and
hands it here with a name. :data:`ScenarioName` is the one definition of
what a name may be; the API body and the page's form use it, and
:func:`save_scenario` checks it again for callers without a schema (the
command line). Recording replays the scenario on a revision and keeps the
outcome as its ``expect``, so the scenario becomes a regression check.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, TypeAdapter, ValidationError

from chains.core.errors import ChainError, DocumentError
from chains.core.sim.regression import recorded
from chains.core.sim.scenario import Scenario
from chains.models import Chain, SavedScenario
from chains.services.access import get_revision, spec_of

__all__ = [
    "AcceptedScenario",
    "BadScenario",
    "NamedScenario",
    "ScenarioName",
    "forget_scenario",
    "record_again",
    "save_scenario",
]

MAX_NAME = SavedScenario._meta.get_field("name").max_length

ScenarioName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME),
    Field(description=f"what the scenario is kept as: 1 to {MAX_NAME} characters"),
]
_NAME: TypeAdapter[str] = TypeAdapter(ScenarioName)
MAX_NOTE = 1000


class NamedScenario(BaseModel):
    """A form or query that names one scenario: saving it, opening it, accepting its outcome."""

    name: ScenarioName


class AcceptedScenario(NamedScenario):
    """Accepting a scenario's changed outcome, with why (kept beside it)."""

    note: Annotated[
        str,
        StringConstraints(strip_whitespace=True, max_length=MAX_NOTE),
        Field(description=f"why the new outcome is right: up to {MAX_NOTE} characters"),
    ] = ""


class BadScenario(ChainError):
    """A scenario that cannot be kept as asked; the message names the input at fault."""


def save_scenario(
    chain: Chain,
    name: str,
    scenario: Scenario,
    *,
    author: Any,
    replace: bool,
    record: bool = False,
    revision: int | None = None,
) -> SavedScenario:
    """Keep ``scenario`` with ``chain`` under ``name``; the saved row.

    ``author`` is the person saving (None: the operator at the command line).
    ``record`` replays it on ``revision`` (the head when None) and keeps the
    outcome as its ``expect``; it raises ``ScenarioMismatch`` when it does not
    replay, and :class:`BadScenario` for a bad name or a revision that no
    longer validates. ``replace`` has no default because the doors differ on purpose:
    a person on the simulator page is refused a name already kept
    (``DuplicateScenario``) so a colleague's scenario is never overwritten by
    a name typed twice, while the API and the command line replace it, so a
    pipeline can run the same script again.
    """
    try:
        name = _NAME.validate_python(name)
    except ValidationError as exc:
        raise BadScenario(f"name: {exc.errors()[0]['msg']}") from None
    if record:
        kept_on = get_revision(chain, revision)
        try:
            document = spec_of(kept_on)
        except DocumentError as exc:
            why = f"revision: revision {kept_on.number} no longer validates: {exc}"
            raise BadScenario(why) from None
        scenario = recorded(document, scenario)
    return SavedScenario.objects.keep(chain, name, scenario, author=author, replace=replace)


def record_again(chain: Chain, name: str, *, author: Any, note: str = "") -> SavedScenario:
    """Replay the saved scenario ``name`` on the head and keep what it does now as ``expect``.

    How a person accepts a changed outcome: the scenario's inputs stay, its
    expectations become the head's, and ``note`` (why the new outcome is
    right) is kept with it, replacing an earlier one. Raises
    :class:`BadScenario` when no scenario of that name is kept or it no
    longer loads, and ``ScenarioMismatch`` when it no longer replays on the
    head.
    """
    saved = _kept(chain, name)
    try:
        scenario = saved.scenario()
    except DocumentError as exc:
        raise BadScenario(f"scenario {name!r} no longer loads: {exc}") from None
    kept = save_scenario(chain, name, scenario, author=author, replace=True, record=True)
    kept.note = note
    kept.save(update_fields=["note"])
    return kept


def forget_scenario(chain: Chain, name: str) -> None:
    """Stop keeping the scenario ``name``; :class:`BadScenario` when none is kept."""
    _kept(chain, name).delete()


def _kept(chain: Chain, name: str) -> SavedScenario:
    saved = chain.scenarios.filter(name=name).first()
    if saved is None:
        raise BadScenario(f"name: no scenario {name!r} is kept with this chain")
    return saved
