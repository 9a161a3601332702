"""Chains of a given size, made up for tests that care about the size of a drawing.

The fixtures are real chains of 10 to 21 nodes; the canvas must also read at
first sight for the 40-node chains some real compiles reach (about as many
handles as steps, each step consuming one or two earlier handles).
"""

from __future__ import annotations

from chains.core.model import ChainSpec

EFFECTS = ("read", "select", "mint", "read", "commit")


def long_chain(steps: int = 20) -> ChainSpec:
    """``steps`` actions, each minting a handle from the one or two before: 2 x ``steps`` nodes."""
    actions, handles = [], []
    for i in range(steps):
        action, handle = f"step_{i:02d}_call", f"token_{i:02d}_ref"
        inputs = [f"token_{j:02d}_ref" for j in (i - 1, i - 3) if j >= 0]
        effect = EFFECTS[i % len(EFFECTS)]
        actions.append(
            {
                "id": action,
                "effect": effect,
                "input": {"handles": inputs},
                "output": {"handles": [handle]},
            }
        )
        handles.append({"id": handle, "minted_by": action, "derived_from": inputs})
    return ChainSpec.model_validate({"id": "long_chain", "handles": handles, "actions": actions})
