"""How the command line words an exploration's violations: the causal line, the message,
then the scenario with the step of every event.

The explorer's causal lines are built elsewhere (``chains.core.sim.causes``);
here :class:`Explained` stands in for a violation that carries one, in the
shape ``Violation.as_dict()`` writes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chains.commandline.files import write_counterexamples
from chains.commandline.text import exploration_lines, scenario_yaml, violation_lines
from chains.core.sim.explorer import Bounds, ExploreResult, scenario_dict
from chains.core.sim.scenario import Scenario, load_scenario

SCENARIO = Scenario.model_validate(
    {
        "chain": "stay",
        "intent": {"hotel": "h1"},
        "events": [
            {"step": "find_room", "observe": {}},
            {"step": "book_room", "observe": "timeout"},
            {"answer": {"outcome": "accept", "gate": "price_ok"}},
            {"wait": 60},
            {"step": "book_room", "probe": "landed"},
        ],
        "expect": {"state": "running"},
    }
)
RETRY = {
    "step": "book_room",
    "signal": "timeout",
    "rule": "row R2",
    "verdict": "retry",
    "element": "verdict_table[R2]",
    "text": "book_room on timeout: row R2 -> retry",
}
BUDGET = {
    "step": "book_room",
    "signal": "",
    "rule": "attempts spent",
    "verdict": "dead_end",
    "element": None,
    "text": "book_room: attempts spent -> dead_end",
}
MESSAGE = "row R2 (timeout -> retry) re-dispatched unkeyed commit book_room"


@dataclass
class Explained:
    """A violation with a causal line, as the explorer's ``Violation`` writes it."""

    invariant: str
    message: str
    scenario: Scenario
    cause: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant,
            "message": self.message,
            "cause": self.cause,
            "scenario": scenario_dict(self.scenario),
        }


def text(violation: Any) -> list[str]:
    return "\n".join(line for line, _ in violation_lines(1, violation)).splitlines()


def test_a_violation_shows_its_causal_line_then_its_message_then_its_scenario():
    lines = text(Explained("unkeyed_redispatch", MESSAGE, SCENARIO, [RETRY, BUDGET]))
    assert lines[1:6] == [
        "1. [unkeyed_redispatch]",
        "   cause:",
        "     1. book_room on timeout: row R2 -> retry  (verdict_table[R2])",
        "     2. book_room: attempts spent -> dead_end",
        f"   {MESSAGE}",
    ]
    assert lines[6] == "   scenario:"


def test_a_violation_found_before_causes_were_recorded_is_headed_by_its_message():
    lines = text(Explained("unkeyed_redispatch", MESSAGE, SCENARIO))
    assert lines[1] == f"1. [unkeyed_redispatch] {MESSAGE}"
    assert lines[2] == "   scenario:"


def test_every_event_of_the_scenario_is_one_line_that_names_its_step_first():
    lines = text(Explained("unkeyed_redispatch", MESSAGE, SCENARIO, [RETRY]))
    events = [line.strip() for line in lines if line.strip().startswith("- {")]
    assert events == [
        "- {step: find_room, observe: {}}",
        "- {step: book_room, observe: {transport: timeout}}",
        "- {answer: {outcome: accept, gate: price_ok}}",
        "- {wait: 60.0}",
        "- {step: book_room, probe: {result: landed}}",
    ]


def test_the_scenario_as_printed_reads_back_as_the_same_scenario():
    assert scenario_dict(load_scenario(scenario_yaml(SCENARIO))) == scenario_dict(SCENARIO)


def test_the_exploration_lists_each_violation_with_its_cause():
    result = ExploreResult(
        states=3,
        paths=2,
        terminals={"done": 1},
        violations=[Explained("unkeyed_redispatch", MESSAGE, SCENARIO, [RETRY])],
        seconds=0.1,
        truncated=False,
    )
    out = "\n".join(line for line, _ in exploration_lines("stay", Bounds(), result))
    assert (
        "violations: 1\n\n1. [unkeyed_redispatch]\n   cause:\n     1. book_room on timeout" in out
    )


def test_a_written_counterexample_carries_its_cause_in_comments_above_the_scenario(tmp_path):
    result = ExploreResult(
        3, 2, {}, [Explained("unkeyed_redispatch", MESSAGE, SCENARIO, [RETRY])], 0.1, False
    )
    (path,) = write_counterexamples(tmp_path, "stay", result)
    written = path.read_text()
    assert written.startswith(
        f"# unkeyed_redispatch: {MESSAGE}\n"
        "# cause:\n"
        "#   book_room on timeout: row R2 -> retry  (verdict_table[R2])\n"
        "chain: stay\n"
    )
    assert scenario_dict(load_scenario(written)) == scenario_dict(SCENARIO)
