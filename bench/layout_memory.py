"""What keeping the canvas still costs a save: a drawing placed against the one before it.

Issue 38 asks that an edit move no node it did not change. Without a memory
Graphviz's ``dot`` lays each revision out afresh (one process); with one,
``dot`` lays it out and ``neato -n2`` draws it with every kept node pinned
(two processes and the placement in Python). This times both, uncached, for
the edits a person makes most (add a handle, add a step, draw an edge) on the
flight chain and on generated chains of 20 and 40 nodes, in both views, and
gives the ratio measured in the same run (these machines are shared and
noisy). It also counts the kept nodes that moved relative to the others
(the promise: none).

    .venv/bin/python bench/layout_memory.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chains.core import dot, edit, formats  # noqa: E402
from chains.core.layout import Layout  # noqa: E402
from chains.core.model import ChainSpec  # noqa: E402
from chains.core.render import flow_sketch, handle_graph_sketch  # noqa: E402
from tests.shapes import long_chain  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VIEWS = {"handles": handle_graph_sketch, "flow": flow_sketch}


def chains() -> list[tuple[str, ChainSpec]]:
    flight = formats.load((ROOT / "fixtures/flight-roundtrip.yaml").read_text(), format="yaml")
    generated = [("20 nodes", long_chain(10)), ("40 nodes", long_chain(20))]
    return [("flight", flight.chains[0]), *generated]


def edits(spec: ChainSpec) -> list[tuple[str, str, dict]]:
    first, last = spec.actions[0].id, spec.actions[-1].id
    handles = [h.id for h in spec.handles]
    return [
        ("add a handle", "add_handle", {"id": "bench_ref"}),
        ("add a minted handle", "add_handle", {"id": "bench_ref", "minted_by": first}),
        ("add a step", "add_action", {"id": "bench_step", "effect": "read"}),
        ("draw an edge", "add_edge", {"kind": "consumes", "source": last, "target": handles[0]}),
    ]


def timed(call, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def moved(before: Layout, after: Layout) -> int:
    """Kept nodes that moved relative to the first kept node (Graphviz may shift all)."""
    kept = [k for k in before.nodes if k in after.nodes]
    (bx, by), (ax, ay) = before.nodes[kept[0]], after.nodes[kept[0]]
    return sum(
        1
        for k in kept
        if abs((after.nodes[k][0] - ax) - (before.nodes[k][0] - bx)) > 0.05
        or abs((after.nodes[k][1] - ay) - (before.nodes[k][1] - by)) > 0.05
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("| chain | view | edit | afresh ms | kept ms | kept / afresh | kept nodes moved |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for name, spec in chains():
        for view, sketch_of in VIEWS.items():
            memory = dot.lay_out(sketch_of(spec).source).layout
            for label, op, arguments in edits(spec):
                sketch = sketch_of(edit.apply(spec, op, arguments))
                afresh, _ = timed(lambda s=sketch: dot.lay_out(s.source), args.runs)
                kept, picture = timed(
                    lambda s=sketch, m=memory: dot.lay_out(s.source, 10.0, m, s), args.runs
                )
                ratios.append(kept / afresh)
                print(
                    f"| {name} | {view} | {label} | {afresh * 1000:.0f} | {kept * 1000:.0f} "
                    f"| {kept / afresh:.2f} | {moved(memory, picture.layout)} |",
                    flush=True,
                )
    print(f"\nmedian ratio {statistics.median(ratios):.2f}, worst {max(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
