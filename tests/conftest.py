"""Shared fixtures. Named users (owner, editor, reviewer, outsider) arrive with permissions."""

from __future__ import annotations

import os

# Playwright's sync API runs an event loop in the test thread; Django would then
# refuse ORM calls from fixtures and tests as "async unsafe". They are not.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
