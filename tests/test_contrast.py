"""Every text colour in our style sheets is readable: WCAG AA, 4.5:1 against what it sits on.

Twice: in the light scheme (static/css/*.css but dark.css) and in the dark one,
where dark.css is read after them: its ``:root`` variables replace theirs and
its rules add to, or replace, the declarations of the same selector.
The test reads the style sheets: each rule that sets a text ``color`` is
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

FOLDER = Path(settings.BASE_DIR) / "static" / "css"
DARK = FOLDER / "dark.css"
CSS = sorted(path for path in FOLDER.glob("*.css") if path != DARK)
RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
DECLARATION = re.compile(r"(?:^|;)\s*([a-z-]+)\s*:\s*([^;]+)")
HEX = re.compile(r"#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")
AA = 4.5


def read(paths: list[Path]) -> list[tuple[str, dict[str, str]]]:
    found = []
    for path in paths:
        text = re.sub(r"/\*.*?\*/", "", path.read_text(), flags=re.S)
        for selector, body in RULE.findall(text):
            declared = {name: value.strip() for name, value in DECLARATION.findall(body)}
            for one in selector.split("{")[-1].split(","):
                found.append((" ".join(one.split()), declared))
    return found


def in_the_dark(light: list[tuple[str, dict[str, str]]]) -> list[tuple[str, dict[str, str]]]:
    """The light rules with dark.css's over them: the same selector's declarations replaced."""
    dark = read([DARK])
    over: dict[str, dict[str, str]] = {}
    for selector, declared in dark:
        over.setdefault(selector, {}).update(declared)
    merged = [(selector, {**declared, **over.get(selector, {})}) for selector, declared in light]
    known = {selector for selector, _ in light}
    return merged + [(s, d) for s, d in dark if s not in known]


SCHEMES = {"light": read(CSS)}
SCHEMES["dark"] = in_the_dark(SCHEMES["light"])


def root_of(rules: list[tuple[str, dict[str, str]]]) -> dict[str, str]:
    return {
        name: value
        for selector, declared in rules
        if selector == ":root"
        for name, value in declared.items()
        if name.startswith("--")
    }


def colour(value: str, root: dict[str, str]) -> str | None:
    """The hex colour ``value`` names, through ``var(--name)``; None for anything else."""
    named = re.fullmatch(r"var\((--[a-z-]+)(?:,\s*([^)]*))?\)", value)
    if named:  # var(--name) or var(--name, fallback)
        value = root.get(named[1]) or named[2] or ""
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


class Scheme:
    """One colour scheme's rules and variables, and the text on backgrounds they make."""

    def __init__(self, name: str, rules: list[tuple[str, dict[str, str]]]):
        self.name, self.rules, self.root = name, rules, root_of(rules)
        self.page = [self.colour("var(--panel)"), self.colour("var(--bg)")]

    def colour(self, value: str) -> str | None:
        return colour(value, self.root)

    def background(self, declared: dict[str, str]) -> str | None:
        return self.colour(declared.get("background-color") or declared.get("background") or "")

    def modifier_backgrounds(self, selector: str) -> list[str]:
        """The backgrounds of ``selector``'s modifiers: ``.status-valid`` or
        ``.status.campaign-done`` for ``.status``, ``.severity-warning .sev-mark`` for
        ``.sev-mark``."""
        return [
            b
            for other, rest in self.rules
            if (
                other.startswith((f"{selector}-", f"{selector}.")) or other.endswith(f" {selector}")
            )
            and (b := self.background(rest))
        ]

    def ancestor_backgrounds(self, selector: str) -> list[str]:
        """An ancestor's (``.severity-filter a.active`` for ``.severity-filter a.active b``)."""
        parts = selector.split()
        for end in range(len(parts) - 1, 0, -1):
            ancestor = " ".join(parts[:end])
            found = [b for o, rest in self.rules if o == ancestor and (b := self.background(rest))]
            if found:
                return found
        return []

    def pairs(self) -> list[tuple[str, str, str, str]]:
        """(scheme, selector, text colour, background) for every text colour set."""
        found = []
        for selector, declared in self.rules:
            text = self.colour(declared.get("color", ""))
            if text is None:
                continue
            own = self.background(declared)
            badges = self.modifier_backgrounds(selector)
            if own is not None:
                behind = [own]
            elif badges:  # a badge: on each of its modifiers' colours
                behind = badges
            elif contrast(text, self.page[1] or "#ffffff") < 3:  # the page's shade: on a parent's
                behind = self.ancestor_backgrounds(selector)
                assert behind, f"{self.name} {selector}: text on no background we could find"
            else:
                behind = self.page
            found += [(self.name, selector, text, bg) for bg in behind if bg is not None]
        return found


PAIRS = [pair for name, rules in SCHEMES.items() for pair in Scheme(name, rules).pairs()]


def test_the_style_sheets_set_text_colours_to_measure_in_both_schemes():
    for scheme in SCHEMES:
        measured = [p for p in PAIRS if p[0] == scheme]
        assert len(measured) > 50
        badges = {behind for _, selector, _, behind in measured if selector == ".status"}
        assert len(badges) >= 4  # white on each lint status's colour, and on the campaigns'


def test_the_dark_scheme_changes_the_page_s_colours():
    light, dark = Scheme("light", SCHEMES["light"]), Scheme("dark", SCHEMES["dark"])
    assert luminance(dark.colour("var(--bg)")) < 0.05 < luminance(light.colour("var(--bg)"))


@pytest.mark.parametrize(
    "scheme, selector, text, behind", PAIRS, ids=[f"{s} {e} {t} on {b}" for s, e, t, b in PAIRS]
)
def test_text_has_aa_contrast_against_what_it_sits_on(scheme, selector, text, behind):
    assert contrast(text, behind) >= AA, f"{scheme} {selector}: {contrast(text, behind):.2f}:1"


def test_the_warning_amber_of_the_issue_measured_below_aa():
    """The measure itself: #b7791f on white is 3.64:1, as measured in the browser."""
    assert round(contrast("#b7791f", "#ffffff"), 2) == 3.64
