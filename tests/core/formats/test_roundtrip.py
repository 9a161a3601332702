"""dump → load → dump is a fixpoint, for every chain the model can hold."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from chains.core.formats import dump, load

from ..strategies import chains


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@settings(
    max_examples=settings().max_examples * 2,  # 200 on CI (the ci profile), 20 locally
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(chain=chains)
def test_dump_then_load_is_a_fixpoint(fmt, chain):
    text = dump(chain, fmt)
    result = load(text, format=fmt)
    assert result.errors == [], text
    (reloaded,) = result.chains
    assert reloaded == chain
    assert dump(reloaded, fmt) == text
