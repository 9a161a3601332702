"""The errors a provider documents for an operation, from every place providers put them.

Each error response becomes signals in the verdict table's own terms:
``http:409 && code:X`` for each code it names, the bare status for one that
names none. Codes are read from

- enumerations in the error schema, in a property named like a code
  (``code``, ``error_code``, ``errorCode``: ``code:X``; ``type``: ``type:X``,
  as Stripe's ``card_error`` is a type), in lists or nested in a property that
  holds the error (``error``, ``errors``, ``details`` ...), not in the
  resources an error mentions (Stripe's names the payment method, whose
  ``type`` is ``card``);
- a code table in the response's description (a Markdown table with a
  ``code`` column, as Amadeus lists ``37200 PRICE DISCREPANCY``);
- the examples written for that response itself. An example the operation
  takes from a component that other places use too (a ``$ref``: Adyen's
  generic error examples are on every operation) shows what an error looks
  like, not which ones this call returns, so it documents nothing.

The ``default`` response (where Stripe puts every error) has no status: its
codes are listed without one (``type:card_error``), and it adds nothing when
it names none. The search is memoised per schema and depth and spends from
the reader's step budget, so it is bounded whatever the document's shape.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ..errors import DocumentError, Problem

__all__ = ["MAX_STEPS", "Walker", "code_table"]

# Schema nodes and codes visited while searching error responses for codes, per document.
MAX_STEPS = 200_000
_CODE_KEYS = {"code": "code", "error_code": "code", "errorCode": "code", "type": "type"}
_DEPTH = 6  # how deep an error schema is searched for enumerated codes
_TABLE_HEADS = {"code", "error code", "error_code", "errorcode", "error"}
# Properties that hold the error itself; others (the payment method an error is about) are
# resources of their own, whose ``type`` names no error.
_CONTAINER = re.compile(r"error|fault|issue|problem|^details?$|^cause$|^reason$", re.I)
_CODE_TEXT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


class Walker:
    """A document whose references all lead inside it (``targets``: a ``$ref`` mapping's id
    to what it names), read as plain data within a step budget."""

    def __init__(self, document: dict[str, Any], targets: dict[int, Any]):
        self.document = document
        self.targets = targets
        self.steps = 0
        self.uses: Counter[int] = Counter(id(target) for target in targets.values())
        self.schema_codes: dict[tuple[int, int], tuple[str, ...]] = {}
        self.example_codes: dict[tuple[int, int], tuple[str, ...]] = {}

    def at(self, node: Any) -> Any:
        """``node``, or what it refers to."""
        return self.targets.get(id(node), node)

    def shared(self, node: Any) -> bool:
        """Whether ``node`` is a ``$ref`` to a component that other places use too."""
        return id(node) in self.targets and self.uses[id(self.targets[id(node)])] > 1

    def mapping(self, node: Any) -> dict[str, Any]:
        found = self.at(node)
        return found if isinstance(found, dict) else {}

    def listing(self, node: Any) -> list[Any]:
        found = self.at(node)
        return found if isinstance(found, list) else []

    def spend(self, steps: int) -> None:
        self.steps += steps
        if self.steps > MAX_STEPS:
            raise DocumentError(
                [
                    Problem(
                        f"the document is too complex: its error responses take more than "
                        f"{MAX_STEPS:,} steps through schema nodes and codes to search"
                    )
                ]
            )

    def errors(self, node: dict[str, Any]) -> list[str]:
        """Each error response of the operation ``node`` as signals (the module's docstring)."""
        found: list[str] = []
        for status, raw in self.mapping(node.get("responses")).items():
            text = str(status).upper()
            if re.fullmatch(r"[45]\d\d", text):
                signal = f"http:{text}"
            elif re.fullmatch(r"[45]XX", text):
                signal = f"http:{text[0]}xx"
            elif text == "DEFAULT":
                signal = ""
            else:
                continue
            response = self.mapping(raw)
            codes: list[str] = []
            for entry in self.mapping(response.get("content")).values():
                entry = self.mapping(entry)
                if "schema" in entry:
                    codes += self.codes(entry["schema"], _DEPTH)
                if not self.shared(raw):
                    codes += self.examples(entry)
            description = response.get("description")
            if isinstance(description, str) and "|" in description:
                codes += [f"code:{c}" for c in code_table(description)]
            named = [" && ".join(filter(None, (signal, c))) for c in dict.fromkeys(codes)]
            found += named or ([signal] if signal else [])
        return list(dict.fromkeys(found))

    def codes(self, schema: Any, depth: int) -> tuple[str, ...]:
        """Codes (``code:X``, ``type:X``) an error schema enumerates, in properties named like
        a code, nested or in lists.

        Memoised per schema and depth, so a schema reached along many paths (or
        round a cycle of references) is searched once at each depth.
        """
        node = self.at(schema)
        if depth == 0 or not isinstance(node, dict):
            return ()
        key = (id(node), depth)
        if key in self.schema_codes:
            return self.schema_codes[key]
        properties = self.mapping(node.get("properties"))
        parts = [p for c in ("allOf", "oneOf", "anyOf") for p in self.listing(node.get(c))]
        self.spend(1 + len(properties) + len(parts))
        codes: list[str] = []
        for name, child in properties.items():
            child = self.at(child)
            if name in _CODE_KEYS and isinstance(child, dict) and "enum" in child:
                values = self.listing(child["enum"])
                self.spend(len(values))
                codes += [
                    f"{_CODE_KEYS[name]}:{v}"
                    for v in values
                    if v is not None and not isinstance(v, dict | list)
                ]
            elif _CONTAINER.search(name):
                codes += self.codes(child, depth - 1)
        if "items" in node:
            codes += self.codes(node["items"], depth - 1)
        for part in parts:
            codes += self.codes(part, depth - 1)
        self.spend(len(codes))
        found = self.schema_codes[key] = tuple(dict.fromkeys(codes))
        return found

    def examples(self, entry: dict[str, Any]) -> list[str]:
        """Codes the response's own examples show (none from a shared example)."""
        values = [entry["example"]] if "example" in entry else []
        for one in self.mapping(entry.get("examples")).values():
            if self.shared(one):
                continue
            one = self.mapping(one)
            if "value" in one:
                values.append(one["value"])
        return [code for value in values for code in self.codes_in(value, _DEPTH)]

    def codes_in(self, value: Any, depth: int) -> tuple[str, ...]:
        """Codes an example value shows, memoised per value and depth like :meth:`codes`."""
        if depth == 0 or not isinstance(value, dict | list):
            return ()
        key = (id(value), depth)
        if key in self.example_codes:
            return self.example_codes[key]
        children = list(value.values()) if isinstance(value, dict) else value
        self.spend(1 + len(children))
        codes = (
            [
                f"{kind}:{value[k]}"
                for k, kind in _CODE_KEYS.items()
                if isinstance(value.get(k), str | int) and not isinstance(value.get(k), bool)
            ]
            if isinstance(value, dict)
            else []
        )
        for child in children:
            codes += self.codes_in(child, depth - 1)
        self.spend(len(codes))
        found = self.example_codes[key] = tuple(dict.fromkeys(codes))
        return found


def code_table(text: str) -> list[str]:
    """The codes in the ``code`` column of the Markdown tables in ``text``.

    >>> code_table("code | title\\n---- | -----\\n37200 | PRICE DISCREPANCY\\n34651 | SELL FAILED")
    ['37200', '34651']
    >>> code_table("| a | b |\\n|---|---|\\n| 1 | 2 |")
    []
    """
    codes: list[str] = []
    column: int | None = None
    lines = text.splitlines()
    separator = -1
    for number, line in enumerate(lines):
        if "|" not in line:
            column = None
            continue
        if number == separator:
            continue
        cells = [c.strip().strip("`*").strip() for c in line.strip().strip("|").split("|")]
        if column is not None:
            if column < len(cells) and _CODE_TEXT.match(cells[column]):
                codes.append(cells[column])
            continue
        below = lines[number + 1] if number + 1 < len(lines) else ""
        if re.fullmatch(r"\s*\|?\s*:?-{2,}.*", below):
            heads = [c.lower() for c in cells]
            column = next((i for i, h in enumerate(heads) if h in _TABLE_HEADS), None)
            separator = number + 1
    return list(dict.fromkeys(codes))
