"""A revision as a file to download: the document formats and the drawings.

The chain pages (``r<N>.<format>``), the API's export operation and the
menu's links answer with the same file, headers and name, built here once:
the document formats of :mod:`chains.core.export` (YAML, JSON, the design
document, OpenAPI with ``x-chain`` extensions, a Postman collection) named
by their suffix there (``<key>-r<N>.openapi.json``). Drawings lay the
revision's handle graph or flow graph out with Graphviz, bounded by its
timeout like every drawing.
"""

from __future__ import annotations

from typing import Literal, get_args

from django.http import HttpResponse

from chains.core.dot import to_png, to_svg
from chains.core.export import EXPORT_FORMATS, FILE_SUFFIXES, export
from chains.core.render import flow_dot, handle_graph_dot
from chains.models import Revision
from chains.services.access import spec_of

__all__ = ["CONTENT_TYPES", "DOWNLOADS", "DRAWINGS", "GRAPHS", "Download", "Graph", "download"]

CONTENT_TYPES = {
    "yaml": "application/yaml; charset=utf-8",
    "json": "application/json",
    "md": "text/markdown; charset=utf-8",
    "openapi": "application/vnd.oai.openapi+json",
    "postman": "application/json",
    "dot": "text/vnd.graphviz; charset=utf-8",
    "svg": "image/svg+xml",
    "png": "image/png",
}
DRAWINGS = ("dot", "svg", "png")
# Every file a revision downloads as (the exports, then the drawings), one list for the
# page's address and the API; spelled out for the API's schema, and a test checks it.
Download = Literal["yaml", "json", "md", "openapi", "postman", "dot", "svg", "png"]
DOWNLOADS: tuple[str, ...] = get_args(Download)
GRAPHS = ("handles", "flow")
Graph = Literal["handles", "flow"]


def download(revision: Revision, fmt: str, graph: Graph = "handles") -> HttpResponse:
    """``revision`` in format ``fmt`` as an attachment named ``<key>-r<N>[-<graph>].<suffix>``.

    Raises ``DocumentError`` when the revision no longer validates and
    ``RenderError`` when Graphviz cannot draw it; the callers say so in
    their own terms.
    """
    spec = spec_of(revision)
    content: str | bytes
    name, suffix = f"{revision.chain.key}-r{revision.number}", fmt
    if fmt in DRAWINGS:
        dot = (handle_graph_dot if graph == "handles" else flow_dot)(spec)
        content = dot if fmt == "dot" else to_svg(dot) if fmt == "svg" else to_png(dot)
        name += f"-{graph}"
    elif fmt in EXPORT_FORMATS:
        content = export(spec, fmt, drawn=True)  # md embeds the handle graph
        suffix = FILE_SUFFIXES[fmt]
    else:
        raise ValueError(f"no export format {fmt!r}; one of {', '.join(CONTENT_TYPES)}")
    response = HttpResponse(content, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{name}.{suffix}"'
    response["X-Revision"] = str(revision.number)
    response["X-Content-Hash"] = revision.content_hash
    if revision.tag:  # an approved revision says so, with the tag reviewers gave it
        response["X-Approved"] = revision.tag
    return response
