"""Root URLconf: sign-in and sign-up, then each app mounts its own urls module."""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from chains.views import people

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", people.signup, name="signup"),
    path("", include("chains.urls")),
]
