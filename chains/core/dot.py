"""Graphviz ``dot`` laying out a drawing: inline SVG fit for the pages, PNG for downloads.

This module owns the one process the core starts. :func:`to_svg` returns
the ``<svg>`` element alone, with every ``style`` attribute turned into the
equivalent SVG presentation attribute (the pages' Content-Security-Policy
forbids inline styles) and each node and edge group carrying its graph key's
parts as ``data-*`` attributes. :func:`start_svg` lays out in the background
and remembers each layout by the hash of its DOT source, so a drawing is laid
out once and a selection only adds CSS classes (:func:`with_marks`). The DOT
itself comes from :mod:`chains.core.render`.
"""

from __future__ import annotations

import hashlib
import html
import re
import subprocess
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress

from .errors import ChainError
from .keys import GraphKey, GraphKeyError, key_attributes
from .recent import Recent

__all__ = [
    "DOT_EXECUTABLE",
    "FAILED_LAYOUT_SECONDS",
    "RenderError",
    "check_marks",
    "forget_layouts",
    "start_svg",
    "to_png",
    "to_svg",
    "with_marks",
]

# The Graphviz program :func:`to_svg` runs, looked up on PATH.
DOT_EXECUTABLE = "dot"

_CLASS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class RenderError(ChainError):
    """A drawing could not be made: Graphviz is missing, too slow or failed, or bad marks."""


def check_marks(marks: Mapping[str, str] | None) -> dict[str, str]:
    """``marks`` (graph key -> CSS classes) once every value is a list of class names."""
    if marks is None:
        return {}
    for key, value in marks.items():
        names = value.split()
        if not names or not all(_CLASS_NAME.fullmatch(n) for n in names):
            raise RenderError(f"mark for {key!r} is not a CSS class name: {value!r}")
    return dict(marks)


def to_png(dot_source: str, timeout: float = 10.0) -> bytes:
    """Lay out ``dot_source`` with Graphviz as a PNG image (for downloads, not the pages).

    Raises :class:`RenderError` like :func:`to_svg`.
    """
    if timeout <= 0:
        raise RenderError(f"timeout must be positive, got {timeout!r}")
    try:
        done = subprocess.run(
            [DOT_EXECUTABLE, "-Tpng"],
            input=dot_source.encode("utf-8", errors="replace"),
            capture_output=True,
            timeout=timeout,
        )
    except FileNotFoundError:
        raise RenderError(
            f"Graphviz is not installed: no {DOT_EXECUTABLE!r} program on PATH"
        ) from None
    except subprocess.TimeoutExpired:
        raise RenderError(f"Graphviz {DOT_EXECUTABLE!r} took longer than {timeout:g}s") from None
    if done.returncode != 0 or not done.stdout.startswith(b"\x89PNG"):
        message = done.stderr.decode("utf-8", errors="replace").strip()[:500] or "no image"
        raise RenderError(f"Graphviz {DOT_EXECUTABLE!r} failed (exit {done.returncode}): {message}")
    return done.stdout


def to_svg(dot_source: str, timeout: float = 10.0) -> str:
    """Lay out ``dot_source`` with Graphviz and return the ``<svg>…</svg>`` element alone.

    The XML prolog, DOCTYPE and generator comment are dropped so the result
    can be inlined in HTML, and ``style`` attributes become presentation
    attributes (:func:`_without_style_attributes`). Raises
    :class:`RenderError` when ``dot`` cannot be run, runs longer than
    ``timeout`` seconds, or fails.

    Starting ``dot`` costs about as much as laying out a small chain, so one
    started process is kept waiting for its input: each render takes it and
    starts the next one once it is done (:func:`_take_dot`).
    """
    if timeout <= 0:
        raise RenderError(f"timeout must be positive, got {timeout!r}")
    try:
        process = _take_dot()
        out, err = process.communicate(dot_source.encode("utf-8", errors="replace"), timeout)
    except FileNotFoundError:
        raise RenderError(
            f"Graphviz is not installed: no {DOT_EXECUTABLE!r} program on PATH"
        ) from None
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise RenderError(f"Graphviz {DOT_EXECUTABLE!r} took longer than {timeout:g}s") from None
    except OSError as exc:
        raise RenderError(f"Graphviz {DOT_EXECUTABLE!r} could not be run: {exc}") from None
    _leave_one_waiting()
    if process.returncode != 0:
        message = err.decode("utf-8", errors="replace").strip()[:500] or "no message"
        raise RenderError(
            f"Graphviz {DOT_EXECUTABLE!r} failed (exit {process.returncode}): {message}"
        )
    svg = out.decode("utf-8", errors="replace")
    start, end = svg.find("<svg"), svg.rfind("</svg>")
    if start < 0 or end < start:
        raise RenderError(f"Graphviz {DOT_EXECUTABLE!r} produced no SVG")
    return _with_key_attributes(_without_style_attributes(svg[start : end + len("</svg>")]))


# Graphviz writes start tags with double-quoted attribute values in which it
# escapes every quote, < and >, so these patterns cannot start inside a value.
_START_TAG = re.compile(r"<([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+=\"[^\"]*\")*)\s*(/?)>")
_ATTRIBUTE = re.compile(r"\s+([\w:.-]+)=\"([^\"]*)\"")
_CSS_PROPERTY = re.compile(r"[a-z][a-z-]*")


def _without_style_attributes(svg: str) -> str:
    """``svg`` with each ``style="p: v"`` turned into ``p="v"``; other tags untouched.

    Every CSS property Graphviz writes into ``style`` (``stop-color``,
    ``stop-opacity``, ``font-weight``...) is also an SVG presentation
    attribute, which a Content-Security-Policy allows. A declaration
    overrides an attribute of the same name, as it would in CSS.

    >>> _without_style_attributes('<stop offset="0" style="stop-color:red;stop-opacity:1.;"/>')
    '<stop offset="0" stop-color="red" stop-opacity="1."/>'
    """

    def rewrite(tag: re.Match[str]) -> str:
        attributes = dict(_ATTRIBUTE.findall(tag[2]))
        if "style" not in attributes:
            return tag[0]
        for declaration in html.unescape(attributes.pop("style")).split(";"):
            name, colon, value = declaration.partition(":")
            name, value = name.strip().lower(), value.strip()
            if colon and value and _CSS_PROPERTY.fullmatch(name):
                attributes[name] = html.escape(value)
        written = "".join(f' {name}="{value}"' for name, value in attributes.items())
        return f"<{tag[1]}{written}{tag[3]}>"

    return _START_TAG.sub(rewrite, svg)


# A node or edge group as Graphviz writes it: its id (our graph key) comes first.
_KEYED_GROUP = re.compile(r'<g id="([^"]*)" class="((node|edge)\b[^"]*)"')


def _with_key_attributes(svg: str) -> str:
    """``svg`` with each node and edge group carrying its key's parts as ``data-*`` attributes.

    The page's JavaScript reads them instead of splitting ids; the drawing's
    own node names settle an edge whose ends contain ``:``, and a group whose
    id is no graph key (a drawing from elsewhere) is left as it is.

    >>> _with_key_attributes('<g id="handle:a" class="node handle">')
    '<g id="handle:a" class="node handle" data-key="handle:a" data-kind="handle" data-name="a">'
    """
    names = set()
    for group in _KEYED_GROUP.finditer(svg):
        if group[3] == "node":
            with suppress(GraphKeyError):
                names.add(GraphKey.parse(html.unescape(group[1])).name)

    def add(group: re.Match[str]) -> str:
        try:
            key = GraphKey.parse(html.unescape(group[1]), names)
        except GraphKeyError:
            return group[0]
        data = "".join(f' {n}="{html.escape(v)}"' for n, v in key_attributes(key).items())
        return f"{group[0]}{data}"

    return _KEYED_GROUP.sub(add, svg)


_WAITING: list[tuple[str, subprocess.Popen]] = []  # (executable, a dot reading its stdin)
_WAITING_LOCK = threading.Lock()


def _start_dot() -> subprocess.Popen:
    pipe = subprocess.PIPE
    return subprocess.Popen([DOT_EXECUTABLE, "-Tsvg"], stdin=pipe, stdout=pipe, stderr=pipe)


def _take_dot() -> subprocess.Popen:
    """A ``dot`` waiting for its input, started earlier when possible."""
    process = None
    with _WAITING_LOCK:
        while _WAITING and process is None:
            executable, waiting = _WAITING.pop()
            if executable == DOT_EXECUTABLE and waiting.poll() is None:
                process = waiting
            else:
                waiting.kill()
                waiting.communicate()
    return process or _start_dot()


def _leave_one_waiting() -> None:
    """Start the ``dot`` the next render will take (after this one is done, not during it)."""
    try:
        spare = _start_dot()
    except OSError:
        return
    with _WAITING_LOCK:
        _WAITING.append((DOT_EXECUTABLE, spare))


_LAYOUTS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphviz")


# Layouts by the hash of their DOT source: the SVG, or the RenderError of a layout that
# failed, when, and within what time limit. Marks only add CSS classes, so they are not
# part of the key.
_LAID_OUT = Recent(size=128, budget=64 * 1024 * 1024)
# How long a failed layout (most often one that ran out of time) is answered from memory
# before Graphviz is given another try.
FAILED_LAYOUT_SECONDS = 600.0


def start_svg(
    dot_source: str, timeout: float = 10.0, marks: Mapping[str, str] | None = None
) -> Future[str]:
    """:func:`to_svg` in the background: Graphviz lays out while the caller does other work.

    ``result()`` of the returned future gives the SVG or raises :class:`RenderError`.
    Each drawing is laid out once: the SVG is kept by the hash of ``dot_source``,
    and a failure (a layout past ``timeout``, say) is answered at once for
    ``FAILED_LAYOUT_SECONDS`` to any caller that allows no more time, so a
    chain Graphviz cannot draw in time costs the timeout once, not on every
    view. ``marks`` (graph key → CSS classes,
    as the drawings take them) are added to the laid-out groups, which is
    what Graphviz would have written, without a layout per selection.
    """
    marks = check_marks(marks)
    key = hashlib.sha256(dot_source.encode("utf-8", errors="replace")).hexdigest()
    done: Future[str] = Future()
    known = _LAID_OUT.get(key)
    if isinstance(known, str):
        done.set_result(with_marks(known, marks))
        return done
    if known is not None:
        error, failed_at, within = known
        if timeout <= within and time.monotonic() - failed_at < FAILED_LAYOUT_SECONDS:
            done.set_exception(error)
            return done

    def finished(layout: Future[str]) -> None:
        error = layout.exception()
        if error is None:
            svg = _LAID_OUT.put(key, layout.result(), weight=len(layout.result()))
            done.set_result(with_marks(svg, marks))
            return
        if isinstance(error, RenderError):
            _LAID_OUT.put(key, (error, time.monotonic(), timeout), weight=len(str(error)))
        done.set_exception(error)

    _LAYOUTS.submit(to_svg, dot_source, timeout).add_done_callback(finished)
    return done


def forget_layouts() -> None:
    """Lay every drawing out again from now on (tests; after Graphviz itself changes)."""
    _LAID_OUT.clear()


def with_marks(svg: str, marks: Mapping[str, str]) -> str:
    """``svg`` with the classes ``marks`` gives each node or edge group's key added.

    >>> with_marks('<g id="handle:a" class="node handle">', {"handle:a": "selected"})
    '<g id="handle:a" class="node handle selected">'
    """
    if not marks:
        return svg

    def add(group: re.Match[str]) -> str:
        mark = marks.get(html.unescape(group[1]))
        if not mark:
            return group[0]
        # Written as Graphviz writes class names, with each '-' as a character reference.
        return f'<g id="{group[1]}" class="{group[2]} {mark.replace("-", "&#45;")}"'

    return _KEYED_GROUP.sub(add, svg)
