"""Django project for Chain Designer; importing it loads the Celery app so tasks bind to it."""

from designer.celery import app as celery_app

__all__ = ["celery_app"]
