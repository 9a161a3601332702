"""Grants end with membership: forget the grants of people no longer in the chain's team.

Before this, removing someone from a team left their grants on its chains,
and those kept working. ``Chain.role_of`` now ignores such a grant; this
deletes the ones already stored, so the People page lists only grants that count.
"""

from django.db import migrations
from django.db.models import Exists, OuterRef


def forget_grants_of_non_members(apps, schema_editor):
    ChainRole = apps.get_model("chains", "ChainRole")
    Membership = apps.get_model("chains", "Membership")
    member = Membership.objects.filter(team=OuterRef("chain__team"), user=OuterRef("user"))
    ChainRole.objects.filter(chain__team__isnull=False).exclude(Exists(member)).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("chains", "0008_review"),
    ]

    operations = [
        migrations.RunPython(forget_grants_of_non_members, migrations.RunPython.noop),
    ]
