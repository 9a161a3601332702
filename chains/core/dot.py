"""Graphviz laying out a drawing: inline SVG fit for the pages, PNG for downloads.

This module owns the processes the core starts (``dot``, and ``neato -n2``
for a drawing placed against a layout memory, :mod:`chains.core.layout`).
:func:`lay_out` gives a :class:`Picture`: the ``<svg>`` element alone, with
every ``style`` attribute turned into the equivalent SVG presentation
attribute (the pages' Content-Security-Policy forbids inline styles) and
each node and edge group carrying its graph key's parts as ``data-*``
attributes, and the layout that says where everything went.
:func:`start_picture` lays out in the background and remembers each picture
by the hash of its DOT source and memory, so a drawing is laid out once and
a selection only adds CSS classes (:func:`with_marks`). The DOT itself comes
from :mod:`chains.core.render`.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
import subprocess
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from typing import NamedTuple

from .errors import ChainError
from .keys import GraphKey, GraphKeyError, key_attributes
from .layout import Layout, LayoutError, Sketch, keep, place, read_graphviz_json, routed
from .recent import Recent

__all__ = [
    "DOT_EXECUTABLE",
    "FAILED_LAYOUT_SECONDS",
    "NEATO_EXECUTABLE",
    "Picture",
    "RenderError",
    "check_marks",
    "forget_layouts",
    "lay_out",
    "start_picture",
    "start_svg",
    "to_png",
    "to_svg",
    "with_marks",
]

# The Graphviz programs this module runs, looked up on PATH: ``dot`` lays a drawing
# out afresh, ``neato -n2`` draws one whose nodes are already placed.
DOT_EXECUTABLE = "dot"
NEATO_EXECUTABLE = "neato"

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


class Picture(NamedTuple):
    """A drawing laid out: the inline ``<svg>`` and where its nodes and edges went."""

    svg: str
    layout: Layout


def to_svg(dot_source: str, timeout: float = 10.0) -> str:
    """Lay out ``dot_source`` with Graphviz and return the ``<svg>…</svg>`` element alone.

    The XML prolog, DOCTYPE and generator comment are dropped so the result
    can be inlined in HTML, and ``style`` attributes become presentation
    attributes (:func:`_without_style_attributes`). Raises
    :class:`RenderError` when ``dot`` cannot be run, runs longer than
    ``timeout`` seconds, or fails.
    """
    return lay_out(dot_source, timeout).svg


def lay_out(
    dot_source: str,
    timeout: float = 10.0,
    memory: Layout | None = None,
    sketch: Sketch | None = None,
) -> Picture:
    """The picture of ``dot_source``, laid out by ``dot`` or placed against ``memory``.

    Without a memory (or a ``sketch`` of the drawing), ``dot`` lays it out
    afresh. With one, every node the memory knows stays where it was: when
    the drawing has no node the memory lacks, it is drawn where the memory
    says (:func:`chains.core.layout.keep`); else ``dot``'s fresh layout is
    placed against the memory (:func:`chains.core.layout.place`). Edges left
    without a curve get a simple one (:func:`chains.core.layout.routed`), and
    ``neato -n2`` draws it all as placed; should that fail, the fresh layout
    is drawn instead. A node whose size changed (a handle made single-use)
    has its edges drawn again to its new outline. ``timeout`` bounds the
    whole. Raises :class:`RenderError` like :func:`to_svg`.

    Starting Graphviz costs about as much as laying out a small chain, so one
    started process per command is kept waiting for its input: each layout
    takes it and starts the next one once it is done (:func:`_take`).
    """
    if timeout <= 0:
        raise RenderError(f"timeout must be positive, got {timeout!r}")
    deadline = time.monotonic() + timeout
    fresh = (DOT_EXECUTABLE, "-Tjson0", "-Tsvg")
    if memory is not None and sketch is not None:
        pinned = keep(sketch, memory)
        if pinned is None:
            try:
                natural = read_graphviz_json(_run(fresh[:2], dot_source, deadline, timeout))
            except LayoutError as exc:
                raise RenderError(str(exc)) from None
            pinned = place(natural, memory)
        if pinned is not None:
            with suppress(RenderError):
                return _placed(routed(pinned, sketch), sketch, deadline, timeout)
    return _picture(_run(fresh, dot_source, deadline, timeout))


def _placed(pinned: Layout, sketch: Sketch, deadline: float, timeout: float) -> Picture:
    """``neato -n2``'s picture of ``sketch`` at ``pinned``; again if a node's size changed."""
    placed = (NEATO_EXECUTABLE, "-n2", "-Tjson0", "-Tsvg")
    picture = _picture(_run(placed, sketch.pinned(pinned), deadline, timeout))
    drawn = picture.layout.sizes
    resized = {k for k, size in pinned.sizes.items() if math.dist(size, drawn.get(k, size)) > 0.5}
    if not resized:
        return picture
    edges = {k: e for k, e in pinned.edges.items() if not {e.tail, e.head} & resized}
    again = routed(Layout(pinned.nodes, {**pinned.sizes, **drawn}, edges), sketch)
    return _picture(_run(placed, sketch.pinned(again), deadline, timeout))


def _picture(out: bytes) -> Picture:
    """The picture in Graphviz's ``-Tjson0 -Tsvg`` output: the JSON, then the SVG."""
    text = out.decode("utf-8", errors="replace")
    start, end = text.find("<svg"), text.rfind("</svg>")
    if start < 0 or end < start:
        raise RenderError("Graphviz produced no SVG")
    prolog = text.find("<?xml", 0, start)
    try:
        layout = read_graphviz_json(text[: prolog if prolog >= 0 else start])
    except LayoutError as exc:
        raise RenderError(str(exc)) from None
    svg = _with_key_attributes(_without_style_attributes(text[start : end + len("</svg>")]))
    return Picture(svg, layout)


def _run(args: tuple[str, ...], source: str, deadline: float, within: float) -> bytes:
    """What the Graphviz command ``args`` writes for ``source``, by ``deadline``.

    ``deadline`` is a ``time.monotonic()``; ``within`` the whole time allowed, for messages.
    """
    name = args[0]
    timeout = deadline - time.monotonic()
    if timeout <= 0:
        raise RenderError(f"Graphviz {name!r} took longer than {within:g}s")
    try:
        process = _take(args)
        out, err = process.communicate(source.encode("utf-8", errors="replace"), timeout)
    except FileNotFoundError:
        raise RenderError(f"Graphviz is not installed: no {name!r} program on PATH") from None
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise RenderError(f"Graphviz {name!r} took longer than {within:g}s") from None
    except OSError as exc:
        raise RenderError(f"Graphviz {name!r} could not be run: {exc}") from None
    _leave_one_waiting(args)
    if process.returncode != 0:
        message = err.decode("utf-8", errors="replace").strip()[:500] or "no message"
        raise RenderError(f"Graphviz {name!r} failed (exit {process.returncode}): {message}")
    return out


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


# Graphviz processes started before they were needed, waiting for their input: one
# per command line (a fresh layout, a placed one), each used by the next render.
_WAITING: dict[tuple[str, ...], subprocess.Popen] = {}
_WAITING_LOCK = threading.Lock()


def _start(args: tuple[str, ...]) -> subprocess.Popen:
    pipe = subprocess.PIPE
    return subprocess.Popen(list(args), stdin=pipe, stdout=pipe, stderr=pipe)


def _take(args: tuple[str, ...]) -> subprocess.Popen:
    """A Graphviz process running ``args`` that waits for its input, started earlier if possible."""
    with _WAITING_LOCK:
        waiting = _WAITING.pop(args, None)
    if waiting is not None and waiting.poll() is None:
        return waiting
    if waiting is not None:
        waiting.communicate()
    return _start(args)


def _leave_one_waiting(args: tuple[str, ...]) -> None:
    """Start the process the next render will take (after this one is done, not during it)."""
    try:
        spare = _start(args)
    except OSError:
        return
    with _WAITING_LOCK:
        extra, _WAITING[args] = _WAITING.get(args), spare
    if extra is not None:
        extra.kill()
        extra.communicate()


_LAYOUTS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphviz")


# Layouts by the hash of their DOT source and memory: the picture, or the RenderError of a
# layout that failed, when, and within what time limit. Marks only add CSS classes, so they are not
# part of the key.
_LAID_OUT = Recent(size=128, budget=64 * 1024 * 1024)
# How long a failed layout (most often one that ran out of time) is answered from memory
# before Graphviz is given another try.
FAILED_LAYOUT_SECONDS = 600.0


def start_svg(
    dot_source: str, timeout: float = 10.0, marks: Mapping[str, str] | None = None
) -> Future[str]:
    """:func:`to_svg` in the background (the SVG of :func:`start_picture`)."""
    picture = start_picture(dot_source, timeout, marks)
    done: Future[str] = Future()

    def finished(laid: Future[Picture]) -> None:
        error = laid.exception()
        if error is None:
            done.set_result(laid.result().svg)
        else:
            done.set_exception(error)

    picture.add_done_callback(finished)
    return done


def start_picture(
    dot_source: str,
    timeout: float = 10.0,
    marks: Mapping[str, str] | None = None,
    memory: Layout | None = None,
    sketch: Sketch | None = None,
) -> Future[Picture]:
    """:func:`lay_out` in the background: Graphviz lays out while the caller does other work.

    ``result()`` of the returned future gives the :class:`Picture` or raises
    :class:`RenderError`. Each drawing is laid out once: the picture is kept
    by the hash of ``dot_source`` and ``memory``, and a failure (a layout
    past ``timeout``, say) is answered at once for ``FAILED_LAYOUT_SECONDS``
    to any caller that allows no more time, so a chain Graphviz cannot draw
    in time costs the timeout once, not on every view. ``marks`` (graph key
    → CSS classes, as the drawings take them) are added to the laid-out
    groups, which is what Graphviz would have written, without a layout per
    selection.
    """
    marks = check_marks(marks)
    remembered = json.dumps(memory.as_json(), sort_keys=True) if memory and sketch else ""
    key = hashlib.sha256(f"{dot_source}\0{remembered}".encode("utf-8", "replace")).hexdigest()
    done: Future[Picture] = Future()
    known = _LAID_OUT.get(key)
    if isinstance(known, Picture):
        done.set_result(known._replace(svg=with_marks(known.svg, marks)))
        return done
    if known is not None:
        error, failed_at, within = known
        if timeout <= within and time.monotonic() - failed_at < FAILED_LAYOUT_SECONDS:
            done.set_exception(error)
            return done

    def finished(layout: Future[Picture]) -> None:
        error = layout.exception()
        if error is None:
            picture = layout.result()
            _LAID_OUT.put(key, picture, weight=2 * len(picture.svg))
            done.set_result(picture._replace(svg=with_marks(picture.svg, marks)))
            return
        if isinstance(error, RenderError):
            _LAID_OUT.put(key, (error, time.monotonic(), timeout), weight=len(str(error)))
        done.set_exception(error)

    _LAYOUTS.submit(lay_out, dot_source, timeout, memory, sketch).add_done_callback(finished)
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
