"""Saved scenarios: scripted runs kept with a chain and replayed on every revision.

``SavedScenario`` names ``Chain`` by string, so this module imports no other
model module but ``errors`` at run time; ``chains.models.chains`` uses
:func:`scenario_checks` to decide whether a revision may be approved.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, models, transaction

from chains.core.errors import DocumentError
from chains.core.sim.explorer import scenario_dict
from chains.core.sim.regression import ScenarioCheck, check_all
from chains.core.sim.scenario import Scenario, load_scenario
from chains.models.errors import DuplicateScenario
from chains.models.fields import DocumentField

if TYPE_CHECKING:
    from chains.models.chains import Chain


class SavedScenarioQuerySet(models.QuerySet):
    def keep(
        self,
        chain: Chain,
        name: str,
        scenario: Scenario,
        *,
        author: Any = None,
        replace: bool = False,
    ) -> SavedScenario:
        """Keep ``scenario`` with ``chain`` under ``name`` (its seed and run key included).

        Raises :class:`DuplicateScenario` when the name is taken, unless ``replace``.
        """
        data = scenario_dict(scenario)
        data.update(
            {k: v for k, v in (("seed", scenario.seed), ("run_key", scenario.run_key)) if v}
        )
        if replace:
            saved, _ = self.update_or_create(
                chain=chain, name=name, defaults={"document": data, "author": author}
            )
            return saved
        try:
            with transaction.atomic():
                return self.create(chain=chain, name=name, document=data, author=author)
        except IntegrityError:
            message = f"a scenario named {name!r} is already kept with {chain.key}"
            raise DuplicateScenario(message) from None


class SavedScenario(models.Model):
    """A scripted run kept with a chain: replayed on every revision as a regression check.

    ``document`` is a scenario as ``chains.core.sim.scenario.load_scenario``
    reads it (events and, usually, the expected outcome).
    """

    chain = models.ForeignKey("Chain", on_delete=models.CASCADE, related_name="scenarios")
    name = models.CharField(max_length=200)
    document = DocumentField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Why its outcome was last accepted as expected (the workspace's accept form).
    note = models.TextField(blank=True, default="")

    objects = SavedScenarioQuerySet.as_manager()

    class Meta:
        ordering = ["chain", "name"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "name"], name="unique_scenario_name")
        ]

    def __str__(self) -> str:
        return f"{self.chain.key}: {self.name}"

    def scenario(self) -> Scenario:
        """The core scenario; raises ``DocumentError`` if it no longer loads."""
        return load_scenario(json.dumps(self.document), filename=f"{self.name}.json")


def saved_scenarios(chain: Chain) -> dict[str, Scenario]:
    """The chain's saved scenarios that still load, by name (:func:`scenario_checks` reports
    the others)."""
    return _load_saved(chain)[0]


def scenario_checks(chain: Chain, spec: Any) -> list[ScenarioCheck]:
    """Replay every saved scenario of ``chain`` against ``document`` (a revision's chain)."""
    loaded, broken = _load_saved(chain)
    checks = check_all(spec, loaded)
    checks += [ScenarioCheck(name, False, (), why) for name, why in broken.items()]
    return sorted(checks, key=lambda c: c.name)


def _load_saved(chain: Chain) -> tuple[dict[str, Scenario], dict[str, str]]:
    """Saved scenarios by name: those that load, and why each other one does not."""
    loaded, broken = {}, {}
    for saved in chain.scenarios.all():
        try:
            loaded[saved.name] = saved.scenario()
        except DocumentError as exc:
            broken[saved.name] = f"scenario {saved.name!r} no longer loads: {exc}"
    return loaded, broken


# --- review: comments on revisions, review requests and approval ----------------------
#
# A comment is written on one revision and anchored to the chain or to one of
# its elements by graph key (chains.core.comments); replies join their thread,
# whose first comment holds the anchor and the resolved state. A review asks
# named people to approve one revision; when every one of them has approved,
# the revision is approved (Revision.approve), which only a VALID or WARNINGS
