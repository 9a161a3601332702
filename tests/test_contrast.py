"""Every text colour in our style sheets is readable: WCAG AA, 4.5:1 against what it sits on.

The test reads static/css/*.css: each rule that sets a text ``color`` is
measured against the background the same rule sets, or, for light text on a
badge (``.status`` with ``.status-valid`` and its siblings), against each
background its modifier rules set, or else against the page's backgrounds
(``--panel`` and ``--bg``). Colours given as ``var(--name)`` are read from
``:root``. Canvas strokes and fills are graphics, not text, and are not
measured here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

CSS = sorted((Path(settings.BASE_DIR) / "static" / "css").glob("*.css"))
RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
DECLARATION = re.compile(r"(?:^|;)\s*([a-z-]+)\s*:\s*([^;]+)")
HEX = re.compile(r"#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")
AA = 4.5


def rules() -> list[tuple[str, dict[str, str]]]:
    found = []
    for path in CSS:
        text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
        for selector, body in RULE.findall(text):
            declared = {name: value.strip() for name, value in DECLARATION.findall(body)}
            found.append((selector.split("{")[-1].strip(), declared))
    return found


RULES = rules()
ROOT = {
    name: value
    for selector, declared in RULES
    if selector == ":root"
    for name, value in declared.items()
    if name.startswith("--")
}


def colour(value: str) -> str | None:
    """The hex colour ``value`` names, through ``var(--name)``; None for anything else."""
    named = re.fullmatch(r"var\((--[a-z-]+)\)", value)
    if named:
        value = ROOT.get(named[1], "")
    found = HEX.search(value)
    if not found:
        return None
    hex_ = found[0].lstrip("#")
    return "#" + (hex_ if len(hex_) == 6 else "".join(c * 2 for c in hex_)).lower()


def luminance(hex_: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def background(declared: dict[str, str]) -> str | None:
    return colour(declared.get("background-color") or declared.get("background") or "")


def light_backgrounds(selector: str) -> list[str]:
    """The backgrounds light text of ``selector`` sits on, though its rule sets none.

    An ancestor's (``.severity-filter a.active`` for ``.severity-filter a.active b``),
    else each modifier's (``.status-valid``, ``.status-warnings``… for ``.status``).
    """
    parts = selector.split()
    for end in range(len(parts) - 1, 0, -1):
        ancestor = " ".join(parts[:end])
        found = [bg for other, rest in RULES if other == ancestor and (bg := background(rest))]
        if found:
            return found
    return [
        bg for other, rest in RULES if other.startswith(f"{selector}-") and (bg := background(rest))
    ]


def pairs() -> list[tuple[str, str, str]]:
    """(selector, text colour, background) for every text colour the style sheets set."""
    page = [colour("var(--panel)"), colour("var(--bg)")]
    found = []
    for selector, declared in RULES:
        text = colour(declared.get("color", ""))
        if text is None:
            continue
        own = background(declared)
        if own is not None:
            behind = [own]
        elif luminance(text) > 0.5:  # light text: on an ancestor's or its modifiers' colour
            behind = light_backgrounds(selector)
            assert behind, f"{selector}: light text on no background we could find"
        else:
            behind = page
        found += [(selector, text, bg) for bg in behind if bg is not None]
    return found


PAIRS = pairs()


def test_the_style_sheets_set_text_colours_to_measure():
    assert len(PAIRS) > 50
    badges = {behind for selector, _, behind in PAIRS if selector == ".status"}
    assert len(badges) == 4  # white on each lint status's colour


@pytest.mark.parametrize(
    "selector, text, behind", PAIRS, ids=[f"{s} {t} on {b}" for s, t, b in PAIRS]
)
def test_text_has_aa_contrast_against_what_it_sits_on(selector, text, behind):
    assert contrast(text, behind) >= AA, f"{selector}: {contrast(text, behind):.2f}:1"


def test_the_warning_amber_of_the_issue_measured_below_aa():
    """The measure itself: #b7791f on white is 3.64:1, as measured in the browser."""
    assert round(contrast("#b7791f", "#ffffff"), 2) == 3.64
