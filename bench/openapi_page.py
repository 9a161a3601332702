"""A real provider's whole document on the chain's OpenAPI page: upload, filter by tag,
tick some operations, add them as one revision; each step timed, the fields posted counted.

Through Django's test client on a throwaway SQLite database, signed in, as a
person would: the document is uploaded as a file (the answer is a redirect to
the upload's list), the list is filtered by ``--tag`` (a document that tags no
operation, as Stripe's, is tagged by the resource its paths name), the first
``--tick`` operations of the list are ticked, and *Add* is posted. Then the
chain's head must be one revision later, holding every ticked operation.

Target (issue 39): the page handles Stripe's ``spec3.yaml`` (4.16 MB, 468
operations; fetch ``github:stripe/openapi``, never committed here): upload,
filter by tag, tick 40, add them as one revision.

    .venv/bin/python bench/openapi_page.py PATH [--tag customers] [--tick 40]
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

os.environ.setdefault("RATE_LIMITS", "import=1000/m")

from _django import test_database  # noqa: E402  (first: it sets Django up)


def main() -> None:
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    from chains.core import formats
    from chains.models import Chain
    from chains.services.access import spec_of
    from tests.core.sim.builders import fixture

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--tag", default="customers")
    parser.add_argument("--tick", type=int, default=40)
    args = parser.parse_args()
    data = args.path.read_bytes()
    with test_database():
        page = Client()
        page.force_login(get_user_model().objects.create_superuser("bench"))
        chain = Chain.objects.store(
            formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
        ).chain
        started = time.perf_counter()
        upload = SimpleUploadedFile(args.path.name, data)
        answer = page.post(chain.url("openapi"), {"document": upload})
        uploaded = time.perf_counter() - started
        assert answer.status_code == 302, answer.content.decode()[:300]
        address = answer["Location"]
        started = time.perf_counter()
        listed = page.get(address, {"tag": args.tag})
        filtered = time.perf_counter() - started
        html = listed.content.decode()
        ids = re.findall(r'name="pick" value="([^"]+)"', html)
        menus = re.findall(r'<select name="(effect-[^"]+)"', html)
        chosen = ids[: args.tick]
        form = {"base": "1", "tag": args.tag, "pick": chosen}
        form.update({name: _selected(html, name) for name in menus})
        started = time.perf_counter()
        added = page.post(address + "add", form)
        adding = time.perf_counter() - started
        head = chain.head()
        have = {a.id for a in spec_of(head).actions}
        fields = len(chosen) + len(menus) + 2
        print(f"document: {args.path.name}, {len(data) / 1e6:.2f} MB")
        print(f"upload:   {answer.status_code} in {uploaded:.2f} s")
        print(f"filter:   tag {args.tag!r}: {len(ids)} operations listed in {filtered:.3f} s")
        print(f"add:      {added.status_code} in {adding:.2f} s, {fields} fields posted")
        print(f"head:     r{head.number}; {sum(1 for i in chosen if i in have)} of the "
              f"{len(chosen)} ticked are actions of it")  # fmt: skip


def _selected(html: str, name: str) -> str:
    """The option selected in the menu ``name`` (the guessed effect)."""
    menu = html.split(f'<select name="{name}"', 1)[1].split("</select>", 1)[0]
    found = re.search(r'<option value="([^"]+)" selected', menu)
    return found.group(1) if found else "read"


if __name__ == "__main__":
    main()
