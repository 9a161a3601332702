"""How the full lint scales with chain size.

Generates chains of 10, 100, 1,000 and 5,000 handles (one minting action per
handle, each consuming up to two earlier handles it derives from; a keyed
commit with its probe every tenth step; a gate per twenty handles; a verdict
row per two handles), times the full ``lint`` (median of several runs), and
prints each size's time, its ratio to the previous size (handles grow 10×,
then 5×, so linear growth shows as ≈10 and ≈5), and the ratio of lint to a
bare networkx topological sort of the same derivation graph, measured in the
same run. Target (issue 3): 1,000 handles in under 1 s, growth roughly linear.

    .venv/bin/python bench/lint_scale.py [--sizes 10 100 1000 5000] [--runs 3] [--segment 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

import networkx as nx
from _chains import confirm_gate, reject_row

from chains.core.graph import derivation_graph
from chains.core.lint import lint
from chains.core.model import ChainSpec


def generate(n: int, segment: int | None = None) -> ChainSpec:
    """A well-formed chain with ``n`` handles and actions, rows and gates in proportion.

    Without ``segment`` every handle derives from the one before it and from
    the one at half its index: one lineage ``n`` deep, the worst case for
    cascades (re-minting the first handle invalidates all the others). With
    ``segment``, lineages restart every ``segment`` handles, the shape of
    real chains (a few handles deep, many side branches).
    """
    handles, actions, gates, rows = [], [], [], []
    for i in range(n):
        base = i - i % segment if segment else 0
        parents = [f"h{j}" for j in (i - 1, base + (i - base) // 2) if base <= j < i]
        parents = sorted(set(parents))
        commit = i % 10 == 9
        handles.append(
            {
                "id": f"h{i}",
                "minted_by": f"a{i}",
                "derived_from": parents,
                "staleness": {"detect": [f"code:H{i}_EXPIRED"], "refresh": f"a{i}"},
            }
        )
        action = {
            "id": f"a{i}",
            "effect": "commit" if commit else ("read" if i % 3 == 0 else "mint"),
            "input": {"intent": {f"f{i % 7}": "string"}, "handles": parents},
            "output": {"handles": [f"h{i}"]},
            "idempotency": {"mode": "natural"},
        }
        if commit:
            action["idempotency"] = {
                "mode": "keyed",
                "key_scope": "run",
                "key_retention": "24h",
                "replay_semantics": "returns_cached",
            }
            action["confirmation"] = {"probe": f"p{i}", "signal": f"status of h{i} is done"}
            action["compensation"] = {"action": "none", "ordering_note": "generated"}
            actions.append(action)
            actions.append(
                {
                    "id": f"p{i}",
                    "effect": "read",
                    "probe_only": True,
                    "input": {"handles": parents},
                    "idempotency": {"mode": "natural"},
                }
            )
        else:
            actions.append(action)
        if i % 20 == 0:
            gate, row = confirm_gate(i, f"a{i}")
            gates.append(gate)
            rows.append(row)
        if i % 2 == 0:
            rows.append(reject_row(i))
    return ChainSpec.model_validate(
        {
            "id": f"scale-{n}",
            "handles": handles,
            "actions": actions,
            "gates": gates,
            "verdict_table": rows,
            "policy": {"per_chain": {"max_rewinds": 3, "max_repairs": 2, "wall_clock": "20m"}},
        }
    )


def median_seconds(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 5000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--segment", type=int, default=None, help="restart lineages every N handles"
    )
    args = parser.parse_args()
    shape = f"lineages {args.segment} deep" if args.segment else "one lineage as deep as the chain"
    print(f"shape: {shape}")
    print("handles  actions  rows  gates  lint s   ×prev  toposort s  lint/toposort  findings")
    previous = None
    for n in args.sizes:
        chain = generate(n, args.segment)
        graph = derivation_graph(chain)
        report = lint(chain)
        lint_s = median_seconds(args.runs, lambda c=chain: lint(c))
        topo_s = median_seconds(args.runs, lambda g=graph: list(nx.topological_sort(g)))
        growth = f"{lint_s / previous:5.1f}" if previous else "    -"
        print(
            f"{n:7}  {len(chain.actions):7}  {len(chain.verdict_table):4}  {len(chain.gates):5}"
            f"  {lint_s:6.3f}  {growth}  {topo_s:10.5f}  {lint_s / topo_s:13.0f}"
            f"  {len(report.findings)} ({report.status})"
        )
        previous = lint_s


if __name__ == "__main__":
    main()
