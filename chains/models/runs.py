"""Runs kept by their caller's ``run_key``: one run per key and chain (SPEC §2.8, C4.5).

A row is the run a key started: its snapshot and its trace as last saved.
The unique constraint on (chain, run_key) is what makes two starts with one
key make one run, on PostgreSQL as on SQLite; ``chains.services.runs`` reads
it through the core's ``RunStore`` protocol. ``KeptRun`` names ``Chain`` by
string, so this module imports no other model module at run time.
"""

from __future__ import annotations

from django.db import models

MAX_RUN_KEY = 200


class KeptRun(models.Model):
    """The run a caller started with ``run_key`` on a chain, as it was last saved."""

    chain = models.ForeignKey("Chain", on_delete=models.CASCADE, related_name="runs")
    run_key = models.CharField(max_length=MAX_RUN_KEY)
    run_id = models.CharField(max_length=200)
    snapshot = models.JSONField()
    trace = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["chain", "run_key"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "run_key"], name="one_run_per_run_key")
        ]

    def __str__(self) -> str:
        return f"{self.chain.key}: {self.run_key}"
