"""The runtime on the shapes the public provider compiles have, in our own words.

Each chain here is a small literal that reproduces one real shape the
simulator used to get wrong; each test names the SPEC clause it checks.
"""

from __future__ import annotations

from chains.core.sim.runtime import Run

from .builders import OK, OPTIONS, chain, events, obs

# A search that mints two handles at once: the request and, under it, the
# offers; the selection step picks among the offers (the second handle).
TWO_HANDLE_SEARCH = """
id: offer_search
handles:
  - {id: request_ref, minted_by: search_offers}
  - {id: offer_ref, minted_by: search_offers, derived_from: [request_ref]}
  - {id: picked_offer, minted_by: pick_offer, derived_from: [offer_ref]}
actions:
  - {id: search_offers, effect: mint, output: {handles: [request_ref, offer_ref]}}
  - {id: pick_offer, effect: select, input: {handles: [offer_ref]},
     output: {handles: [picked_offer]}}
  - {id: price_offer, effect: read, input: {handles: [picked_offer]}}
"""


def test_options_are_kept_for_the_handle_the_selection_step_consumes():
    """SPEC §4 I2/I3: a selection picks among the results of the read that minted its input.

    The search mints [request_ref, offer_ref]; pick_offer consumes offer_ref,
    so the options belong to offer_ref, not to the first handle minted.
    """
    run = Run.start(chain(TWO_HANDLE_SEARCH))
    run.observe(obs(options=OPTIONS))
    w = run.waiting()
    assert (w.kind, w.step) == ("select", "pick_offer")
    assert [o.id for o in w.options] == ["o1", "o2"]
    run.select("o2")
    run.observe(OK)
    assert run.snapshot.state == "done"
    assert not [e for e in events(run) if e.verdict and "no_options" in e.verdict]
