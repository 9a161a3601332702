"""Root URLconf: sign-in and sign-up, then each app mounts its own urls module."""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from chains.views import people, signin
from designer import api, health

urlpatterns = [
    path("accounts/login/", signin.SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", people.signup, name="signup"),
    path("api/", api.urls()),
    path("healthz", health.healthz, name="healthz"),
    path("", include("chains.urls")),
]

# A request too large or malformed to read gets a page saying which limit it hit.
handler400 = "designer.errors.bad_request"
# A chain one may not see, or a role too small: pages that say whom to ask.
handler403 = "chains.views.errors.forbidden"
handler404 = "chains.views.errors.not_found"
# A bug: Django logs it; the API answers JSON, a page Django's plain 500 page.
handler500 = "designer.errors.server_error"
