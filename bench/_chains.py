"""Parts of the generated chains that bench scripts grow to a size (plain documents)."""

from __future__ import annotations


def confirm_gate(i: int, step: str) -> tuple[dict, dict]:
    """Gate ``g{i}``, where the user confirms or declines, and row ``G{i}`` that asks it.

    The row sends code ``CONFIRM_{i}`` at ``step`` to the gate; an unanswered gate
    ends the chain after 30 minutes.
    """
    gate = {
        "id": f"g{i}",
        "audience": "user",
        "outcomes": {"accept": "ok", "decline": "dead_end"},
        "timeout": {"after": "30m", "verdict": "dead_end"},
    }
    row = {
        "id": f"G{i}",
        "signal": [f"code:CONFIRM_{i}"],
        "scope": {"steps": [step]},
        "verdict": f"gate(g{i})",
    }
    return gate, row


def reject_row(i: int) -> dict:
    """Row ``R{i}``: code ``REJECT_{i}`` at step ``a{i}`` ends the chain for good."""
    return {
        "id": f"R{i}",
        "signal": [f"code:REJECT_{i}"],
        "scope": {"steps": [f"a{i}"]},
        "verdict": f"dead_end(reason: reject_{i}, permanent: true)",
    }
