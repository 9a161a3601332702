"""``manage.py demo_account``: the account ``make run`` signs you in with, and its team.

Creates (once) the team ``demo`` and its owner ``demo`` with a random
password, kept in ``var/demo-password`` so later runs can print it again. The
demo chains are imported into that team (``chain import --team demo``).
Never run this on a server people use: it exists for a local first look.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from chains.models import Role, Team

NAME = "demo"


class Command(BaseCommand):
    help = "Create the local demo account and team (once) and print how to sign in."

    def handle(self, *args, **options) -> None:
        saved = Path(settings.VAR_DIR) / "demo-password"
        users = get_user_model().objects
        user = users.filter(username=NAME).first()
        if user is None or not saved.exists():
            password = secrets.token_urlsafe(12)
            user = user or users.create_user(NAME)
            user.set_password(password)
            user.save()
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(password + "\n")
            saved.chmod(0o600)
        team = Team.objects.filter(slug=NAME).first() or Team.objects.found(
            "Demo", owner=user, slug=NAME
        )
        team.add(user, Role.OWNER)
        password = saved.read_text().strip()
        self.stdout.write(f"Sign in as {NAME} with the password {password} (kept in {saved}).")
