"""Lint rules: policy (to be written)."""

from __future__ import annotations

from .registry import rule  # noqa: F401
