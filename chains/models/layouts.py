"""Where each revision's graphs were drawn: the layout memory that keeps the canvas still.

A revision's drawing is placed against the layout of the revision before it
(:mod:`chains.core.layout`), so an edit moves only what it changes. The
layout a revision was first drawn with is stored once, by view (the handle
graph, the flow), and read again by every later view of it; a revision with
none of its own is drawn against the latest earlier one that has. Tidying
a view stores an empty memory instead: the next drawing of that revision is
laid out afresh, and that layout is kept.

Layouts are not part of the chain document: they change no content hash,
and undo, diff and export know nothing of them. Imports ``chains``.
"""

from __future__ import annotations

from django.db import IntegrityError, models, transaction

from chains.core.layout import Layout, LayoutError
from chains.models.chains import Revision

VIEWS = ("handles", "flow")


class RevisionLayoutQuerySet(models.QuerySet):
    def recall(self, revision: Revision, view: str) -> Layout | None:
        """The memory ``revision``'s ``view`` is drawn against; None to lay it out afresh."""
        row = (
            self.filter(
                revision__chain_id=revision.chain_id,
                revision__number__lte=revision.number,
                view=view,
            )
            .order_by("-revision__number")
            .first()
        )
        if row is None or row.layout is None:
            return None
        try:
            return Layout.from_json(row.layout)
        except LayoutError:
            return None  # stored by an older version of the app: draw afresh

    def remember(self, revision: Revision, view: str, layout: Layout) -> None:
        """Keep ``layout`` as ``revision``'s drawing of ``view``, unless it has one already."""
        data = layout.as_json()
        try:
            with transaction.atomic():
                row, created = self.get_or_create(
                    revision=revision, view=view, defaults={"layout": data}
                )
        except IntegrityError:
            return  # drawn by another request at the same moment: that one is kept
        if not created and row.layout is None:
            self.filter(pk=row.pk, layout__isnull=True).update(layout=data)

    def tidy(self, revision: Revision, view: str) -> None:
        """Forget ``revision``'s drawing of ``view``: it is laid out afresh next time."""
        self.update_or_create(revision=revision, view=view, defaults={"layout": None})


class RevisionLayout(models.Model):
    revision = models.ForeignKey(Revision, on_delete=models.CASCADE, related_name="layouts")
    view = models.CharField(max_length=16, choices=[(v, v) for v in VIEWS])
    # chains.core.layout.Layout.as_json(); null once tidied, until drawn again.
    layout = models.JSONField(null=True)

    objects = RevisionLayoutQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["revision", "view"], name="unique_revision_layout")
        ]

    def __str__(self) -> str:
        return f"{self.revision} {self.view} layout"
