"""Scenarios: reading them strictly, and replaying them against a run.

The dispatch and mismatch logic is tested against :class:`ScriptedRun`, a
stand-in that waits for a fixed list of things, so these tests say what
``simulate`` does whatever the runtime decides; the fixture scenarios at the
end run against the real runtime.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chains.core import formats
from chains.core.errors import DocumentError
from chains.core.formats import MAX_BYTES
from chains.core.formats.yamlio import MAX_ALIASES, MAX_DEPTH
from chains.core.sim import scenario as scenario_module
from chains.core.sim.runtime import SimulationError
from chains.core.sim.scenario import (
    MAX_EVENTS,
    AnswerEvent,
    CrashEvent,
    ObserveEvent,
    ProbeEvent,
    ProposeEvent,
    ScenarioMismatch,
    SelectEvent,
    WaitEvent,
    load_scenario,
    simulate,
)
from chains.core.sim.state import Event, Option, Snapshot, Waiting

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"

TINY = formats.load(
    """\
id: tiny
handles:
  - {id: pick, minted_by: choose}
actions:
  - {id: search, effect: read, idempotency: {mode: natural}}
  - {id: choose, effect: select, output: {handles: [pick]}}
  - {id: book, effect: commit, idempotency: {mode: keyed}}
""",
    format="yaml",
).chains[0]


def problems_of(text: str, filename: str | None = None) -> list[tuple[int | None, str | None]]:
    with pytest.raises(DocumentError) as caught:
        load_scenario(text, filename)
    return [(p.line, p.path) for p in caught.value.problems]


def message_of(text: str) -> str:
    with pytest.raises(DocumentError) as caught:
        load_scenario(text)
    return str(caught.value)


# --- reading ---------------------------------------------------------------


def test_a_scenario_reads_its_start_fields():
    s = load_scenario("chain: tiny\nintent: {origin: LHR}\nrun_key: r-1\nvariant: GDS\nseed: 7\n")
    assert (s.chain, s.intent, s.run_key, s.variant, s.seed) == (
        "tiny",
        {"origin": "LHR"},
        "r-1",
        "GDS",
        7,
    )
    assert s.events == [] and s.expect is None


@pytest.mark.parametrize(
    "item, kind, check",
    [
        (
            '{observe: {transport: "http:402", code: card_declined, predicates: [p], '
            "options: [{id: o1, key: {carrier: BA}}], payload: {price: 3}, events: [webhook:x]}}",
            ObserveEvent,
            lambda e: (
                (e.observe.code, e.observe.options[0].key, e.observe.events)
                == ("card_declined", {"carrier": "BA"}, ["webhook:x"])
            ),
        ),
        ("{select: off_1}", SelectEvent, lambda e: e.select == "off_1"),
        (
            "{answer: {outcome: choose, params: {option_id: opt_2}, gate: pick}}",
            AnswerEvent,
            lambda e: (
                (e.answer.outcome, e.answer.params, e.answer.gate)
                == ("choose", {"option_id": "opt_2"}, "pick")
            ),
        ),
        (
            '{probe: {result: not_landed, cause: {transport: "http:402", code: card_declined}}}',
            ProbeEvent,
            lambda e: (e.probe.result, e.probe.cause.code) == ("not_landed", "card_declined"),
        ),
        ("{wait: 30m}", WaitEvent, lambda e: e.wait == 1800),
        ("{crash: true}", CrashEvent, lambda e: e.crash is True),
        (
            "{propose: {kind: repair, fields: {dates: [1, 2]}}}",
            ProposeEvent,
            lambda e: (e.propose.kind, e.propose.fields) == ("repair", {"dates": [1, 2]}),
        ),
    ],
)
def test_every_event_kind_is_read_in_its_long_form(item, kind, check):
    (event,) = load_scenario(f"events:\n  - {item}\n").events
    assert isinstance(event, kind)
    assert check(event)


@pytest.mark.parametrize(
    "short, long",
    [
        ("observe: timeout", "observe: {transport: timeout}"),
        ("answer: accept", "answer: {outcome: accept}"),
        ("probe: landed", "probe: {result: landed}"),
        ("probe: unknown", "probe: {result: unknown}"),
        ("wait: 90", "wait: 90s"),
    ],
)
def test_a_shorthand_reads_like_its_long_form(short, long):
    assert (
        load_scenario(f"events: [{{{short}}}]").events
        == load_scenario(f"events: [{{{long}}}]").events
    )


@pytest.mark.parametrize("text, seconds", [("45s", 45), ("15m", 900), ("2h", 7200), ("0", 0)])
def test_a_wait_is_read_in_seconds(text, seconds):
    assert load_scenario(f"events: [{{wait: {text}}}]").events[0].wait == seconds


def test_an_empty_observation_is_a_plain_success():
    (event,) = load_scenario("events: [{observe: {}}]").events
    assert event.observe.transport == "http:200"


def test_each_event_remembers_the_line_it_is_written_on():
    s = load_scenario("events:\n  - observe: timeout\n\n  - select: a\n  - crash: true\n")
    assert [e.line for e in s.events] == [2, 4, 5]


def test_a_json_scenario_is_read_with_lines():
    text = '{"events": [\n  {"observe": {"transport": "timeout"}},\n  {"probe": "landed"}\n]}'
    s = load_scenario(text, "lost.json")
    assert [type(e) for e in s.events] == [ObserveEvent, ProbeEvent]
    assert s.events[1].line == 3


def test_an_unknown_event_is_refused_with_its_path_and_line():
    assert problems_of("events:\n  - observe: timeout\n  - teleport: x\n") == [(3, "events[1]")]
    assert "unknown event 'teleport'" in message_of("events: [{teleport: x}]")


def test_an_event_with_two_keys_is_refused_naming_them():
    message = message_of("events:\n  - {select: a, answer: b}\n")
    assert "exactly one key" in message and "this one has select, answer" in message


@pytest.mark.parametrize(
    "item, kind, step",
    [
        ("{step: search, observe: timeout}", ObserveEvent, "search"),
        ("{observe: timeout, step: search}", ObserveEvent, "search"),
        ("{step: choose, select: o1}", SelectEvent, "choose"),
        ("{step: book, probe: landed}", ProbeEvent, "book"),
    ],
)
def test_an_event_that_answers_a_step_may_name_it_beside_its_key(item, kind, step):
    (event,) = load_scenario(f"events:\n  - {item}\n").events
    assert isinstance(event, kind) and event.step == step


def test_a_named_step_is_written_before_the_event_it_is_for():
    (event,) = load_scenario("events: [{observe: timeout, step: search}]").events
    assert list(event.model_dump(mode="json", exclude_defaults=True)) == ["step", "observe"]


def test_an_event_without_a_step_reads_as_before():
    (event,) = load_scenario("events: [{observe: timeout}]").events
    assert event.step is None
    assert event.model_dump(mode="json", exclude_defaults=True) == {
        "observe": {"transport": "timeout"}
    }


@pytest.mark.parametrize("item", ["{step: book, wait: 5m}", "{step: book, crash: true}"])
def test_an_event_that_answers_no_step_may_not_name_one(item):
    assert problems_of(f"events:\n  - {item}\n") == [(2, "events[0].step")]
    assert "names no step: only observe, select and probe answer a step" in message_of(
        f"events: [{item}]"
    )


def test_a_step_alone_is_no_event():
    assert "this one has step" in message_of("events: [{step: book}]")


def test_a_bare_word_is_not_an_event():
    assert problems_of("events:\n  - crash\n") == [(2, "events[0]")]


def test_a_bad_value_inside_an_event_points_at_its_field():
    text = "events:\n  - select: a\n  - probe: {result: maybe}\n"
    assert problems_of(text) == [(3, "events[1].probe.result")]
    assert "expected landed | not_landed | unknown" in message_of(text)


def test_an_unknown_field_inside_an_event_is_refused():
    assert problems_of("events:\n  - observe: {transport: timeout, status: 5}\n") == [
        (2, "events[0].observe.status")
    ]


@pytest.mark.parametrize(
    "text, path",
    [
        ("seed: '7'\n", "seed"),
        ("intent: [a]\n", "intent"),
        ("events: {observe: timeout}\n", "events"),
        ("events: [{crash: false}]\n", "events[0].crash"),
        ("events: [{wait: soon}]\n", "events[0].wait"),
        ("events: [{propose: {kind: guess}}]\n", "events[0].propose.kind"),
        ("events: [{answer: {params: {}}}]\n", "events[0].answer.outcome"),
        ("expect: {state: finished}\n", "expect.state"),
        ("expect: {dispatches: {book: -1}}\n", "expect.dispatches.book"),
        ("expect: {verdicts: [ok, 'rewind(to']}\n", "expect.verdicts[#2]"),
        ("stages: []\n", "stages"),
    ],
)
def test_a_wrong_value_is_refused_with_its_path(text, path):
    assert [p for _, p in problems_of(text)] == [path]


def test_every_problem_is_reported_at_once_in_line_order():
    text = "seed: x\nevents:\n  - teleport: 1\n  - probe: maybe\nexpect: {state: nope}\n"
    assert problems_of(text) == [
        (1, "seed"),
        (3, "events[0]"),
        (4, "events[1].probe.result"),
        (5, "expect.state"),
    ]


def test_expected_verdicts_are_kept_in_canonical_spelling():
    s = load_scenario("expect: {verdicts: [ok, 'rewind(to:quote)', reconcile]}\n")
    assert s.expect.verdicts == ["ok", "rewind(to: quote)", "reconcile"]


@pytest.mark.parametrize("text", ["- observe: timeout\n", "", "just text\n"])
def test_a_scenario_is_a_mapping(text):
    assert "a scenario is a mapping" in message_of(text)


def test_markdown_is_not_a_scenario():
    assert "not Markdown" in str(pytest.raises(DocumentError, load_scenario, "# x\n", "s.md").value)


def test_malformed_yaml_is_refused_with_its_line():
    assert problems_of("events:\n  - observe: {transport: timeout\n")[0][0] is not None


def test_a_duplicate_key_is_refused():
    assert "duplicate key 'seed'" in message_of("seed: 1\nseed: 2\n")


def test_a_duplicate_json_key_is_refused():
    with pytest.raises(DocumentError, match="duplicate key 'seed'"):
        load_scenario('{"seed": 1, "seed": 2}', "s.json")


def test_a_scenario_over_the_size_limit_is_refused():
    with pytest.raises(DocumentError, match="the limit is"):
        load_scenario(b"#" * (MAX_BYTES + 1))


def test_bytes_that_are_not_utf8_are_refused():
    with pytest.raises(DocumentError, match="not UTF-8"):
        load_scenario(b"seed: 1\nchain: \xff\n")


def test_too_many_aliases_are_refused():
    text = "a: &a x\nintent: {" + ", ".join(f"k{i}: *a" for i in range(MAX_ALIASES + 1)) + "}\n"
    assert f"more than {MAX_ALIASES} aliases" in message_of(text)


def test_nesting_deeper_than_the_limit_is_refused():
    text = "intent: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n"
    assert "nesting deeper than" in message_of(text)


def test_more_events_than_the_limit_are_refused():
    text = "events:\n" + "  - crash: true\n" * (MAX_EVENTS + 1)
    assert problems_of(text) == [(1, "events")]


# --- replaying against a scripted run --------------------------------------


class ScriptedRun:
    """Waits for ``PLAN`` in order, records every call, and keeps its place in the snapshot.

    Progress lives in ``snapshot.seq`` only, so a run resumed from a copy of
    its snapshot and trace carries on where the old one stopped.
    """

    PLAN: list[Waiting] = []
    started: list[dict[str, Any]] = []
    resumed: list[tuple[Snapshot, list[Event]]] = []

    def __init__(self, chain, snapshot: Snapshot, trace: list[Event]):
        self.chain, self.snapshot, self.trace = chain, snapshot, trace
        self.calls: list[tuple] = []
        self.refuse: str | None = None
        self._show_next()

    @classmethod
    def start(cls, chain, *, intent=None, run_key=None, variant=None, seed=0, run_id=None):
        cls.started.append({"intent": intent, "run_key": run_key, "variant": variant, "seed": seed})
        if variant == "nope":
            raise SimulationError("unknown variant nope")
        return cls(chain, Snapshot(run_id=run_id or "r", chain_id=chain.id, intent=intent), [])

    @classmethod
    def resume(cls, chain, snapshot, trace):
        cls.resumed.append((snapshot, trace))
        return cls(chain, snapshot, trace)

    @property
    def finished(self) -> bool:
        return self.snapshot.state in ("done", "dead_end", "escalated")

    def waiting(self) -> Waiting:
        return self.snapshot.waiting

    def _show_next(self) -> None:
        done = self.snapshot.seq >= len(self.PLAN)
        self.snapshot.waiting = (
            Waiting(kind="nothing") if done else self.PLAN[self.snapshot.seq].model_copy()
        )
        if done:
            self.snapshot.state = "done"

    def _took(self, *call: Any, verdict: str = "ok") -> None:
        if self.refuse:
            raise SimulationError(self.refuse)
        self.calls.append(call)
        step = self.snapshot.waiting.step or self.snapshot.waiting.gate
        self.snapshot.seq += 1
        self.snapshot.dispatches[step] = self.snapshot.dispatches.get(step, 0) + 1
        self.trace.append(
            Event(seq=self.snapshot.seq, event_type="attempt", step_id=step, verdict=verdict)
        )
        self._show_next()

    def observe(self, obs):
        self._took(
            "observe", obs.transport, verdict="reconcile" if obs.transport == "timeout" else "ok"
        )

    def select(self, option_id):
        self._took("select", option_id)

    def answer(self, outcome, params=None):
        self._took("answer", outcome, params)

    def probe(self, result, cause=None):
        self._took("probe", result)

    def wait(self, seconds):
        self.calls.append(("wait", seconds))
        self.snapshot.clock += seconds

    def propose(self, proposal):
        self.calls.append(("propose", proposal.kind))
        return proposal.kind == "repair"


OBSERVE_SEARCH = Waiting(kind="observe", step="search")
SELECT = Waiting(kind="select", step="choose", options=[Option(id="o1"), Option(id="o2")])
ANSWER = Waiting(kind="answer", gate="consent", outcomes=["accept", "decline"])
OBSERVE_BOOK = Waiting(kind="observe", step="book")
PROBE = Waiting(kind="probe", step="book")
REPAIR = Waiting(kind="repair", step="book", fields=["instrument", "dates"])


@pytest.fixture
def scripted(monkeypatch):
    """Replace the runtime's Run with a ScriptedRun; set its PLAN per test."""
    monkeypatch.setattr(scenario_module, "Run", ScriptedRun)
    monkeypatch.setattr(ScriptedRun, "started", [])
    monkeypatch.setattr(ScriptedRun, "resumed", [])

    def plan(*waits: Waiting) -> None:
        monkeypatch.setattr(ScriptedRun, "PLAN", list(waits))

    return plan


def run(text: str):
    return simulate(TINY, load_scenario(text))


def mismatch(text: str) -> ScenarioMismatch:
    with pytest.raises(ScenarioMismatch) as caught:
        run(text)
    return caught.value


HAPPY = """\
chain: tiny
intent: {origin: LHR}
run_key: k
variant: GDS
seed: 7
events:
  - observe: {options: [{id: o1}, {id: o2}]}
  - select: o2
  - answer: {outcome: accept, params: {note: x}}
  - observe: timeout
  - probe: landed
"""


def test_the_run_starts_from_the_scenarios_intent_key_variant_and_seed(scripted):
    scripted(OBSERVE_SEARCH)
    run("intent: {origin: LHR}\nrun_key: k\nvariant: GDS\nseed: 7\nevents: [{observe: {}}]\n")
    assert ScriptedRun.started == [
        {"intent": {"origin": "LHR"}, "run_key": "k", "variant": "GDS", "seed": 7}
    ]


def test_events_are_applied_to_the_run_in_order(scripted):
    scripted(OBSERVE_SEARCH, SELECT, ANSWER, OBSERVE_BOOK, PROBE)
    result = run(HAPPY)
    assert result.run.calls == [
        ("observe", "http:200"),
        ("select", "o2"),
        ("answer", "accept", {"note": "x"}),
        ("observe", "timeout"),
        ("probe", "landed"),
    ]
    assert result.run.finished


def test_an_event_the_run_does_not_wait_for_is_a_mismatch_naming_both(scripted):
    scripted(OBSERVE_SEARCH, OBSERVE_BOOK)
    error = mismatch("events:\n  - observe: {}\n  - answer: {gate: consent, outcome: accept}\n")
    assert str(error) == (
        "event 2 (line 3) answers gate consent with accept, "
        "but the run waits for an observation of book"
    )
    assert (error.index, error.line) == (2, 3)


@pytest.mark.parametrize(
    "waiting, event, described",
    [
        (SELECT, "observe: timeout", "a selection at choose (options o1, o2)"),
        (ANSWER, "select: o1", "an answer to gate consent (accept | decline)"),
        (PROBE, "answer: accept", "a probe result for book"),
        (OBSERVE_SEARCH, "probe: landed", "an observation of search"),
        (REPAIR, "observe: timeout", "a repair proposal for book (fields instrument, dates)"),
    ],
)
def test_the_mismatch_says_what_the_run_waits_for(scripted, waiting, event, described):
    scripted(waiting)
    assert str(mismatch(f"events:\n  - {event}\n")).endswith(f"but the run waits for {described}")


def test_an_answer_naming_another_gate_is_a_mismatch(scripted):
    scripted(ANSWER)
    error = mismatch("events: [{answer: {gate: price, outcome: accept}}]")
    assert "answers gate price with accept, but the run waits for an answer to gate consent" in str(
        error
    )


@pytest.mark.parametrize(
    "waiting, event",
    [
        (OBSERVE_SEARCH, "{step: search, observe: timeout}"),
        (SELECT, "{step: choose, select: o1}"),
        (PROBE, "{step: book, probe: landed}"),
    ],
)
def test_an_event_naming_the_step_the_run_waits_at_is_applied(scripted, waiting, event):
    scripted(waiting)
    assert len(run(f"events: [{event}]").run.calls) == 1


def test_an_event_without_a_step_answers_whatever_step_the_run_waits_at(scripted):
    scripted(OBSERVE_SEARCH, OBSERVE_BOOK)
    result = run("events: [{observe: {}}, {observe: timeout}]")
    assert [e.step_id for e in result.run.trace] == ["search", "book"]


@pytest.mark.parametrize(
    "waiting, event, said",
    [
        (
            OBSERVE_SEARCH,
            "{step: book, observe: timeout}",
            "observes timeout at book, but the run waits for an observation of search",
        ),
        (
            SELECT,
            "{step: search, select: o1}",
            "selects option o1 at search, but the run waits for a selection at choose",
        ),
        (
            PROBE,
            "{step: search, probe: landed}",
            "reports the probe result landed at search, but the run waits for a probe result "
            "for book",
        ),
    ],
)
def test_an_event_naming_another_step_is_a_mismatch_naming_the_step_waited_at(
    scripted, waiting, event, said
):
    scripted(waiting)
    assert said in str(mismatch(f"events:\n  - {event}\n"))


def test_an_event_after_the_run_finished_is_a_mismatch(scripted):
    scripted(OBSERVE_SEARCH)
    error = mismatch("events:\n  - observe: {}\n  - wait: 10s\n")
    assert str(error) == "event 2 (line 3) waits 10s, but the run has finished (state done)"


def test_a_runtime_refusal_becomes_a_mismatch_at_its_event(scripted, monkeypatch):
    scripted(SELECT)

    def refuse(self, option_id):
        raise SimulationError(f"option {option_id} was excluded")

    monkeypatch.setattr(ScriptedRun, "select", refuse)
    error = mismatch("events:\n  - select: o1\n")
    assert str(error) == "event 1 (line 2) selects option o1: option o1 was excluded"


def test_a_mismatch_carries_the_run_as_it_stood(scripted):
    scripted(OBSERVE_SEARCH, OBSERVE_BOOK)
    error = mismatch("events:\n  - observe: {}\n  - select: o1\n")
    assert [e.step_id for e in error.run.trace] == ["search"]


def test_a_run_that_cannot_start_is_a_mismatch(scripted):
    scripted(OBSERVE_SEARCH)
    assert str(mismatch("variant: nope\n")) == "the run could not start: unknown variant nope"


def test_a_scenario_for_another_chain_is_a_mismatch(scripted):
    scripted(OBSERVE_SEARCH)
    assert str(mismatch("chain: other\n")) == "the scenario is for chain other, not tiny"


def test_waits_and_proposals_need_nothing_in_particular_from_the_run(scripted):
    scripted(ANSWER)
    result = run("events:\n  - wait: 5m\n  - propose: {kind: retry}\n  - propose: {kind: repair}\n")
    assert result.run.calls == [("wait", 300.0), ("propose", "retry"), ("propose", "repair")]
    assert result.proposals == [(2, False), (3, True)]


def test_a_crash_replaces_the_run_with_one_resumed_from_its_snapshot_and_trace(scripted):
    scripted(OBSERVE_SEARCH, OBSERVE_BOOK)
    result = run("events:\n  - observe: {}\n  - crash: true\n  - observe: {}\n")
    ((snapshot, trace),) = ScriptedRun.resumed
    assert result.run.snapshot is snapshot and result.run.trace is trace
    assert result.run.calls == [("observe", "http:200")]  # the new run took the last event
    assert [e.step_id for e in result.run.trace] == ["search", "book"]


def test_a_crash_hands_over_no_object_of_the_old_run(scripted, monkeypatch):
    scripted(OBSERVE_SEARCH, OBSERVE_BOOK)
    runs: list[ScriptedRun] = []
    start = ScriptedRun.start.__func__

    def remembering_start(cls, chain, **kwargs):
        runs.append(start(cls, chain, **kwargs))
        return runs[-1]

    monkeypatch.setattr(ScriptedRun, "start", classmethod(remembering_start))
    run("events:\n  - observe: {}\n  - crash: true\n")
    ((snapshot, trace),) = ScriptedRun.resumed
    old = runs[0]
    assert snapshot == old.snapshot and snapshot is not old.snapshot
    assert snapshot.waiting is not old.snapshot.waiting
    assert trace == old.trace and all(a is not b for a, b in zip(trace, old.trace, strict=True))


# --- expectations ----------------------------------------------------------


def test_expectations_are_reported_one_check_each(scripted):
    scripted(OBSERVE_SEARCH, OBSERVE_BOOK)
    result = run(
        "events: [{observe: {}}, {observe: timeout}]\n"
        "expect: {state: done, dispatches: {search: 1, book: 2}, verdicts: [ok, reconcile]}\n"
    )
    assert [(e.check, e.held) for e in result.expectations] == [
        ("state", True),
        ("dispatches.search", True),
        ("dispatches.book", False),
        ("verdicts", True),
    ]
    assert not result.held
    assert [str(e) for e in result.failed] == ["dispatches.book: expected 2, got 1"]


def test_a_scenario_without_expect_holds(scripted):
    scripted(OBSERVE_SEARCH)
    result = run("events: [{observe: {}}]\n")
    assert (result.expectations, result.held) == ([], True)


def test_a_bare_expected_verdict_matches_any_verdict_of_its_type(scripted):
    scripted()
    assert scenario_module._verdict_matches("rewind", "rewind(to: quote)")
    assert scenario_module._verdict_matches("ok", "ok(empty)")
    assert not scenario_module._verdict_matches("ok(empty)", "ok")
    assert not scenario_module._verdict_matches("rewind(to: hold)", "rewind(to: quote)")


def test_a_wrong_verdict_sequence_fails_showing_both(scripted):
    scripted(OBSERVE_SEARCH)
    result = run("events: [{observe: {}}]\nexpect: {verdicts: [ok, ok]}\n")
    assert [str(e) for e in result.failed] == ["verdicts: expected [ok, ok], got [ok]"]


def test_an_expected_dispatch_of_an_unknown_step_is_a_mismatch(scripted):
    scripted(OBSERVE_SEARCH)
    error = mismatch("expect: {dispatches: {serach: 1}}\n")
    assert str(error) == "expect.dispatches names steps that chain tiny does not have: serach"


def test_the_result_as_a_dict_has_the_documented_shape(scripted):
    scripted(OBSERVE_SEARCH, SELECT, ANSWER, OBSERVE_BOOK, PROBE)
    out = run(HAPPY + "expect: {state: done}\n").as_dict()
    assert list(out) == [
        "state",
        "cursor",
        "dispatches",
        "commits_landed",
        "trace",
        "snapshot",
        "expectations",
        "proposals",
    ]
    assert out["state"] == "done" and out["dispatches"]["book"] == 2
    assert out["expectations"] == [
        {"check": "state", "expected": "done", "actual": "done", "held": True}
    ]
    assert json.loads(json.dumps(out)) == out


# --- the fixture scenarios, against the real runtime ------------------------

SCENARIOS = sorted((FIXTURES / "scenarios").glob("*.yaml"))


def fixture_chains() -> dict[str, Any]:
    found = {}
    for path in sorted(FIXTURES.glob("*.*")):
        if path.suffix in (".yaml", ".md"):
            for chain in formats.load(path.read_bytes(), filename=path.name).chains:
                found[chain.id] = chain
    return found


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_fixture_scenario_runs_and_its_expectations_hold(path):
    s = load_scenario(path.read_bytes(), path.name)
    result = simulate(fixture_chains()[s.chain], s)
    assert s.expect is not None
    assert result.held, [str(e) for e in result.failed]


def test_a_crash_changes_nothing_about_how_the_run_ends():
    path = FIXTURES / "scenarios" / "flight-happy-path.yaml"
    s = load_scenario(path.read_bytes(), path.name)
    chain = fixture_chains()[s.chain]
    # A crash before every event but the last: that one answers the unkeyed
    # booking, whose dispatch is out, so a crash there is a lost response (P3).
    crashing = [e for event in s.events[:-1] for e in (CrashEvent(crash=True), event)]
    with_crashes = s.model_copy(update={"events": [*crashing, s.events[-1]]})
    plain = simulate(chain, s).run
    crashed = simulate(chain, with_crashes).run
    assert crashed.snapshot == plain.snapshot
    assert crashed.trace == plain.trace


def test_a_crash_while_an_unkeyed_commit_is_out_leaves_the_run_reconciling():
    path = FIXTURES / "scenarios" / "flight-happy-path.yaml"
    s = load_scenario(path.read_bytes(), path.name)
    events = [*s.events[:-1], CrashEvent(crash=True)]
    result = simulate(fixture_chains()[s.chain], s.model_copy(update={"events": events}))
    waiting = result.run.waiting()
    assert (result.run.snapshot.state, waiting.kind, waiting.step) == (
        "reconciling",
        "probe",
        "book_trip",
    )
