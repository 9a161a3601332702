"""HAR 1.2: the HTTP Archive a browser or a recording proxy saves.

Each of ``log.entries`` is one call: ``startedDateTime`` (ISO-8601) is when
it went out, ``request`` its method, URL, headers and ``postData.text``,
``response`` its status, headers and ``content.text`` (base64 when
``content.encoding`` says so). A status of 0 is a request that got no
response; the ``_error`` text browsers add (``net::ERR_TIMED_OUT``) says a
timeout, a reset or a drop. Bodies are there, so the handles a call
presented and minted are read through the binding. The archive is one run;
``--run PAGE`` keeps the entries of one of its pages (``pageref``).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..errors import DocumentError
from ..model import ChainSpec
from .common import Place, Reading, load_json, seconds
from .http import UNSEEN, Call, calls_reading, failure_of, headers

__all__ = ["read_har"]


def read_har(text: str, spec: ChainSpec, run: str | None = None) -> Reading:
    """The entries of a HAR archive as the chain's steps."""
    doc = load_json(text)
    log = doc.get("log") if isinstance(doc, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise DocumentError(
            [Place(None, "/log/entries").problem("expected a list (a HAR 1.2 archive)")]
        )
    calls = [_call(e, Place(None, f"/log/entries/{n}"), run) for n, e in enumerate(entries)]
    return calls_reading(spec, calls, "har", run)


def _call(entry: Any, place: Place, run: str | None) -> Call:
    if not isinstance(entry, dict):
        raise DocumentError([place.problem("an entry must be an object")])
    request, response = entry.get("request"), entry.get("response")
    if not isinstance(request, dict) or not isinstance(request.get("method"), str):
        raise DocumentError([place.problem("request.method: an entry needs its request's method")])
    if not isinstance(request.get("url"), str):
        raise DocumentError([place.problem("request.url: an entry needs its request's URL")])
    response = response if isinstance(response, dict) else {}
    call = Call(
        method=request["method"],
        url=request["url"],
        place=place,
        start=seconds(entry.get("startedDateTime"), "startedDateTime", place),
        run=entry.get("pageref") if run and isinstance(entry.get("pageref"), str) else None,
        request_headers=headers(_pairs(request.get("headers"))),
        request_body=_json(_post_text(request)),
    )
    status = response.get("status")
    if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599:
        call.status = status
        call.response_headers = headers(_pairs(response.get("headers")))
        call.response_body = _json(_content_text(response.get("content")))
    elif status in (0, None, -1):
        error = entry.get("_error") or response.get("_error") or ""
        call.failure = failure_of(str(error))
    else:
        raise DocumentError(
            [place.problem(f"response.status: expected 0 or 100-599; got {status!r}")]
        )
    return call


def _pairs(items: Any) -> list[tuple[str, str]]:
    return [
        (h["name"], str(h.get("value", "")))
        for h in (items if isinstance(items, list) else [])
        if isinstance(h, dict) and isinstance(h.get("name"), str)
    ]


def _post_text(request: dict[str, Any]) -> str | None:
    post = request.get("postData")
    return (
        post.get("text") if isinstance(post, dict) and isinstance(post.get("text"), str) else None
    )


def _content_text(content: Any) -> str | None:
    if not isinstance(content, dict) or not isinstance(content.get("text"), str):
        return None
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(content["text"], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return str(content["text"])


def _json(text: str | None) -> Any:
    """A JSON body; one that is not JSON (or not there) is a body we cannot read."""
    if text is None or not text.strip():
        return UNSEEN
    try:
        return load_json(text)
    except DocumentError:
        return UNSEEN
