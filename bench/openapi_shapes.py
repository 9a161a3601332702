"""OpenAPI documents shaped to cost a walk dear, read on the chain's page, timed.

Each shape is posted to the *actions from an OpenAPI document* page through
Django's test client on a throwaway SQLite database, signed in: the 807-byte
spec of issue 34 (one error schema whose twelve properties each ``$ref`` it
back: 12**6 paths to depth 6), the same with twelve schemas S1..S12 whose
properties error1..error12 ``$ref`` all of them, a schema that includes itself
through ``allOf``, forty schemas each including the next twice through
``allOf`` (2**40 paths), a chain of 3,000 ``$ref``s (deeper than Python's
stack), 3,000 operations each with its own error schema, 3,000 codes that
150 properties each lead to (past the step budget: refused), 5,000
operations (the most a document may have), and 24,000 operations (refused).
Target (issue 34): each under 2 s; the page's HTML stays small whatever the
count. With ``--validator`` it also times
``openapi_spec_validator.validate()`` on each shape (what the import ran
before), in a child process killed after ``--timeout`` seconds.

    .venv/bin/python bench/openapi_shapes.py [--validator] [--timeout 60]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("RATE_LIMITS", "import=1000/m")  # the bench posts more than a person

from _django import ROOT, test_database  # noqa: E402  (first: it sets Django up)

# Properties named as an error's are searched for codes (others are resources an error names).
_PROPERTIES = ", ".join(f"error{i}: {{$ref: '#/components/schemas/E'}}" for i in range(12))
RECURSIVE = f"""\
openapi: 3.0.3
info: {{title: Recursive, version: '1'}}
paths:
  /orders:
    post:
      operationId: createOrder
      responses:
        '409':
          description: Conflict
          content:
            application/json:
              schema: {{$ref: '#/components/schemas/E'}}
components:
  schemas:
    E:
      type: object
      properties: {{{_PROPERTIES}}}
"""


def _document(
    error_schema: object, schemas: dict, paths: dict | None = None, **components: dict
) -> str:
    response = {
        "description": "Conflict",
        "content": {"application/json": {"schema": error_schema}},
    }
    operation = {"operationId": "createOrder", "responses": {"409": response}}
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Shapes", "version": "1"},
        "paths": paths or {"/orders": {"post": operation}},
        "components": {"schemas": schemas, **components},
    }
    return json.dumps(document, separators=(",", ":"))


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def shapes() -> dict[str, str]:
    mesh = {
        f"S{i}": {
            "type": "object",
            "properties": {f"error{j}": _ref(f"S{j}") for j in range(1, 13)},
        }
        for i in range(1, 13)
    }
    diamond = {f"D{i}": {"allOf": [_ref(f"D{i + 1}")] * 2, "required": ["x"]} for i in range(40)}
    chain = {f"C{i}": {"properties": {"next": _ref(f"C{i + 1}")}} for i in range(3000)}
    conflict = {"description": "c", "content": {"application/json": {"schema": _ref("E")}}}
    error = {"E": {"properties": {"code": {"enum": ["TAKEN"]}}}}

    def many(count: int) -> str:
        taken = {"$ref": "#/components/responses/Taken"}
        paths = {f"/t{i}": {"put": {"responses": {"409": taken}}} for i in range(count)}
        return _document(_ref("E"), error, paths, responses={"Taken": conflict})

    return {
        "issue 34 recursive (807 B)": RECURSIVE,
        "S1..S12 mesh": _document(_ref("S1"), mesh),
        "allOf self-reference": _document(
            _ref("A"), {"A": {"allOf": [_ref("A")], "required": ["x"]}}
        ),
        "allOf diamond, 40 deep": _document(_ref("D0"), {**diamond, "D40": {"type": "object"}}),
        "chain of 3,000 $refs": _document(_ref("C0"), {**chain, "C3000": {"type": "string"}}),
        "3,000 inline error schemas": _document(
            _ref("E"),
            error,
            {
                f"/t{i}": {
                    "put": {
                        "responses": {
                            "409": {
                                "description": "c",
                                "content": {
                                    "application/json": {
                                        "schema": {
                                            "properties": {
                                                **{f"f{j}": {"type": "string"} for j in range(16)},
                                                "code": {"enum": [f"C{i}"]},
                                            }
                                        }
                                    }
                                },
                            }
                        }
                    }
                }
                for i in range(3000)
            },
        ),
        "3,000 codes in 150 places": _document(
            _ref("W"),
            {
                "E": {"properties": {"code": {"enum": [f"CODE_{i}" for i in range(3000)]}}},
                "W": {
                    "properties": {
                        f"error{i}": {"properties": {"error": _ref("E")}} for i in range(150)
                    }
                },
            },
        ),
        "5,000 operations": many(5000),
        "24,000 operations": many(24000),
    }


def _validator_seconds(text: str, timeout: float) -> str:
    """``openapi_spec_validator.validate`` on ``text``, in a child process; what it came to."""
    program = (
        "import json, sys, time, yaml\n"
        "from openapi_spec_validator import validate\n"
        "d = yaml.load(sys.stdin.read(), Loader=yaml.CSafeLoader)\n"
        "t = time.perf_counter()\n"
        "try:\n"
        "    validate(d); r = 'valid'\n"
        "except BaseException as e:\n"
        "    r = type(e).__name__\n"
        "print(f'{time.perf_counter() - t:.2f} s, {r}')\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", program],
            input=text,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return f"over {timeout:.0f} s (killed)"
    return done.stdout.strip() or done.stderr.strip()[-80:]


def main() -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from chains.core import formats
    from chains.models import Chain
    from tests.core.sim.builders import fixture

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validator", action="store_true", help="time validate() too")
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    with test_database():
        who = get_user_model().objects.create_superuser("bench")
        page = Client()
        page.force_login(who)
        chain = Chain.objects.store(
            formats.to_document(fixture("unsafe-retry-booking.yaml")), message="r1"
        ).chain
        print(f"{'shape':28} {'bytes':>9}  status  seconds  HTML bytes")
        warm = (ROOT / "fixtures" / "openapi" / "skyloom-air.yaml").read_text()
        for name, text in {"warm-up: skyloom-air.yaml": warm, **shapes()}.items():
            started = time.perf_counter()
            # a document read is kept, and the answer is its list (after the redirect)
            answer = page.post(chain.url("openapi"), {"text": text}, follow=True)
            elapsed = time.perf_counter() - started
            line = f"{name:28} {len(text):9,}  {answer.status_code:6}  {elapsed:7.2f}  "
            line += f"{len(answer.content):10,}"
            if args.validator:
                line += f"  validate(): {_validator_seconds(text, args.timeout)}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
