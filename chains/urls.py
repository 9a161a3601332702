from django.urls import path, re_path

from chains.views import (
    campaigns,
    chain,
    home,
    imports,
    people,
    review,
    simulator,
    wizard,
    workspace,
)

app_name = "chains"

urlpatterns = [
    path("", home.home, name="home"),
    path("account/tokens/", people.tokens, name="tokens"),
    path("account/tokens/<int:pk>/revoke", people.revoke_token, name="revoke_token"),
    path("teams/", people.teams, name="teams"),
    path("teams/<slug:slug>/", people.team, name="team"),
    path("chains/new/", wizard.new_chain, name="new"),
    path("chains/import/", imports.import_chain, name="import"),
    path("chains/<str:key>/", workspace.workspace, name="chain"),
    path("chains/<str:key>/edit", workspace.edit_chain, name="edit"),
    path("chains/<str:key>/undo", workspace.undo_redo, {"action": "undo"}, name="undo"),
    path("chains/<str:key>/redo", workspace.undo_redo, {"action": "redo"}, name="redo"),
    path("chains/<str:key>/diff", chain.revision_diff, name="diff"),
    path("chains/<str:key>/people", people.chain_people, name="people"),
    path("chains/<str:key>/simulate", simulator.simulate, name="simulate"),
    path("chains/<str:key>/simulate/save", simulator.save_scenario, name="save_scenario"),
    path("chains/<str:key>/campaigns/", campaigns.campaigns, name="campaigns"),
    path("chains/<str:key>/campaigns/<int:pk>/", campaigns.campaign, name="campaign"),
    path("chains/<str:key>/campaigns/<int:pk>/cancel", campaigns.cancel, name="cancel_campaign"),
    path("chains/<str:key>/comments", review.comments, name="comments"),
    path(
        "chains/<str:key>/comments/<int:pk>/resolve",
        review.resolve_comment,
        name="resolve_comment",
    ),
    path("chains/<str:key>/reviews/", review.reviews, name="reviews"),
    path("chains/<str:key>/reviews/<int:pk>/", review.review, name="review"),
    path("chains/<str:key>/reviews/<int:pk>/vote", review.vote, name="vote"),
    path("chains/<str:key>/scenarios.json", chain.test_vectors_export, name="vectors"),
    re_path(
        r"^chains/(?P<key>[^/]+)/r(?P<number>[0-9]+)\.(?P<fmt>yaml|json|md)$",
        chain.revision_export,
        name="export",
    ),
]
