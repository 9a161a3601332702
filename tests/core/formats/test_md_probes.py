"""Compile import: a read the source calls a commit's probe becomes probe_only (SPEC §2.1)."""

from chains.core.formats.markdown import load_markdown
from chains.core.model import main_steps


def compile_doc(reads: str) -> str:
    """A one-chain compile: pick a room, book it, then ``reads`` (YAML action items)."""
    return (
        "# Room booking\n\n"
        "```yaml\n"
        "actions:\n"
        "  - id: find_rooms\n"
        "    effect: read\n"
        "    output: {handles: [room_id]}\n"
        "  - id: book_room\n"
        "    effect: commit\n"
        "    input: {handles: [room_id]}\n"
        "    output: {handles: [stay_id]}\n"
        "    idempotency: {mode: none}\n"
        '    confirmation: {probe: lookup_stay, signal: "a stay with our label"}\n'
        f"{reads}"
        "```\n"
    )


LABELLED_PROBE = (
    "  - id: lookup_stay                       # probe (read-only)\n"
    "    effect: read\n"
    "    input: {handles: [room_id]}\n"
    "    output: {payload: stays[]}\n"
)


def chain_of(text):
    result = load_markdown(text)
    (chain,) = result.chains
    return chain, result.problems


def test_a_read_the_source_calls_the_commits_probe_is_imported_probe_only():
    chain, _ = chain_of(compile_doc(LABELLED_PROBE))
    assert chain.action("lookup_stay").probe_only is True
    assert main_steps(chain) == ["find_rooms", "book_room"]


def test_the_import_report_names_the_inferred_probe_at_its_line():
    text = compile_doc(LABELLED_PROBE)
    _, problems = chain_of(text)
    (info,) = [p for p in problems if "probe_only" in p.message]
    assert info.severity == "info"
    assert "lookup_stay is read as probe_only: book_room names it" in info.message
    assert info.line == text.split("\n").index(LABELLED_PROBE.split("\n")[0]) + 1


def test_a_description_calling_the_read_a_confirmation_probe_is_enough():
    described = "    description: Confirmation probe for book_room.\n    effect: read\n"
    reads = LABELLED_PROBE.replace("  # probe (read-only)", "").replace(
        "    effect: read\n", described
    )
    chain, _ = chain_of(compile_doc(reads))
    assert chain.action("lookup_stay").probe_only is True


def test_a_probe_whose_handle_a_later_step_consumes_stays_a_step():
    reads = (
        LABELLED_PROBE.replace("{payload: stays[]}", "{handles: [receipt_id]}")
        + "  - id: send_receipt\n"
        "    effect: mint\n"
        "    input: {handles: [receipt_id]}\n"
    )
    chain, problems = chain_of(compile_doc(reads))
    assert chain.action("lookup_stay").probe_only is False
    assert "lookup_stay" in main_steps(chain)
    assert not [p for p in problems if "probe_only" in p.message]


def test_a_probe_that_checks_a_precondition_stays_a_step():
    # The shape of a reservation read that also checks the payment deadline before ticketing.
    reads = LABELLED_PROBE + (
        "    preconditions:\n"
        '      - {when: "payment deadline passed", verdict: "dead_end(reason: expired)"}\n'
    )
    chain, _ = chain_of(compile_doc(reads))
    assert chain.action("lookup_stay").probe_only is False


def test_a_read_the_source_calls_also_the_probe_stays_a_step():
    reads = LABELLED_PROBE.replace(
        "# probe (read-only)", "# read the stay (also the probe for book_room)"
    )
    chain, _ = chain_of(compile_doc(reads))
    assert chain.action("lookup_stay").probe_only is False


def test_a_probe_the_source_does_not_call_a_probe_stays_a_step():
    # SPEC §2.1: probe_only says the read exists *only* to confirm; without the author's
    # word it may be a read-back the run needs. The lint reports it when it sits before
    # the commit it confirms (commit.probe-before-commit).
    reads = LABELLED_PROBE.replace("  # probe (read-only)", "")
    chain, problems = chain_of(compile_doc(reads))
    assert chain.action("lookup_stay").probe_only is False
    assert not [p for p in problems if "probe_only" in p.message]


def test_a_read_named_probe_by_no_commit_stays_a_step():
    reads = LABELLED_PROBE.replace("lookup_stay", "browse_stays")
    chain, _ = chain_of(compile_doc(reads))
    assert chain.action("browse_stays").probe_only is False


def test_a_probe_of_the_compensation_that_reads_what_only_it_makes_is_probe_only():
    # The refund lookup by the refund's id, where the refund undoes the booking: on the
    # way forward no refund exists, so the read can only confirm the refund.
    text = compile_doc(
        "    compensation: {action: refund_stay}\n"
        "  - id: refund_stay\n"
        "    effect: compensate\n"
        "    input: {handles: [stay_id]}\n"
        "    output: {handles: [refund_id]}\n"
        "    idempotency: {mode: keyed}\n"
        "    confirmation: {probe: get_refund}\n"
        "  - id: get_refund\n"
        "    effect: read\n"
        "    input: {handles: [refund_id]}\n" + LABELLED_PROBE
    )
    chain, problems = chain_of(text)
    assert chain.action("get_refund").probe_only is True
    assert main_steps(chain) == ["find_rooms", "book_room"]
    assert [p for p in problems if "needs refund_id, which only that compensation" in p.message]


UNLABELLED_PROBE = LABELLED_PROBE.replace("  # probe (read-only)", "")


def test_a_read_under_a_ruled_comment_heading_shared_probes_is_imported_probe_only():
    heading = "  # ──────── shared read probes (named by confirmations) ────────\n"
    chain, problems = chain_of(compile_doc(heading + UNLABELLED_PROBE))
    assert chain.action("lookup_stay").probe_only is True
    (info,) = [p for p in problems if "probe_only" in p.message]
    assert "its section of the source is headed as probes" in info.message


def test_a_heading_of_probes_ends_at_the_next_ruled_comment():
    headed = (
        "  # ──────── shared read probes ────────\n"
        "  - id: read_policy\n"
        "    effect: read\n"
        "  # ──────── lookups ────────\n"
    )
    chain, _ = chain_of(compile_doc(headed + UNLABELLED_PROBE))
    assert chain.action("lookup_stay").probe_only is False
