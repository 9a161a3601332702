"""Root URLconf: each app mounts its own urls module."""

from django.urls import include, path

urlpatterns = [
    path("", include("chains.urls")),
]
