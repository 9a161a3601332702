"""Revisions' content hashes computed again with every mapping in its own order.

The hash used to sort keys, so a document with a gate's outcomes reordered
counted as unchanged. Written out here, not imported: a migration keeps the
function it ran with.
"""

import hashlib
import json

from django.db import migrations


def _rehash(apps, schema_editor, sort_keys):
    Revision = apps.get_model("chains", "Revision")
    batch = []
    for revision in Revision.objects.only("pk", "document").iterator(chunk_size=500):
        text = json.dumps(revision.document, sort_keys=sort_keys, separators=(",", ":"))
        revision.content_hash = hashlib.sha256(text.encode()).hexdigest()
        batch.append(revision)
        if len(batch) == 500:
            Revision.objects.bulk_update(batch, ["content_hash"])
            batch = []
    Revision.objects.bulk_update(batch, ["content_hash"])


def forwards(apps, schema_editor):
    _rehash(apps, schema_editor, sort_keys=False)


def backwards(apps, schema_editor):
    _rehash(apps, schema_editor, sort_keys=True)


class Migration(migrations.Migration):
    dependencies = [
        ("chains", "0013_documents_keep_their_order"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
