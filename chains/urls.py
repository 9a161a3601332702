from django.urls import path, re_path

from chains.views import chain, home

app_name = "chains"

urlpatterns = [
    path("", home.home, name="home"),
    path("chains/<str:key>/", chain.chain_detail, name="chain"),
    re_path(
        r"^chains/(?P<key>[^/]+)/r(?P<number>[0-9]+)\.(?P<fmt>yaml|json)$",
        chain.revision_export,
        name="export",
    ),
]
