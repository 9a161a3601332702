"""Model fields of our own.

:class:`DocumentField` stores a chain document as JSON that keeps the order of
every mapping. On SQLite a JSONField is text and keeps it already; on
PostgreSQL Django's JSONField is ``jsonb``, which stores keys sorted (the
shorter first) and gives them back that way. The order of a chain's mappings
is the author's and carries meaning: the first of a gate's outcomes is the
answer the simulator and the explorer expect when none is ``ok``, and the
editor and every export list them as written.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

__all__ = ["DocumentField"]


class DocumentField(models.JSONField):
    """A JSONField kept as ``json`` (text as written) on PostgreSQL, not ``jsonb``."""

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if connection.vendor == "postgresql":
            return "json"
        return super().db_type(connection)

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        if connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        from psycopg.types.json import Json  # psycopg is there: this is PostgreSQL

        if not prepared:
            value = self.get_prep_value(value)
        # Sent as json: as jsonb (Django's way) the server would sort it before storing.
        return Json(value, dumps=partial(json.dumps, cls=self.encoder))

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        if isinstance(value, dict | list):  # psycopg reads a json column itself, in order
            return value
        return super().from_db_value(value, expression, connection)
