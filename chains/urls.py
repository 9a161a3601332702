from django.urls import include, path, re_path

from chains.services.exports import DOWNLOADS
from chains.views import (
    audit,
    campaigns,
    chain,
    checks,
    glossary,
    harness,
    home,
    imports,
    inbox,
    invitations,
    openapi,
    people,
    review,
    simulator,
    wizard,
    workspace,
)

app_name = "chains"

# Everything about one chain sits below its team and key. The short form
# /chains/<key>/ names the one chain of that key the person may see (older
# links and scripts); every link the app makes names the team.
chain_urls = [
    path("", workspace.workspace, name="chain"),
    path("edit", workspace.edit_chain, name="edit"),
    path("fixes", workspace.finding_fixes, name="fixes"),
    path("check", checks.check_value, name="check"),
    path("undo", workspace.undo_redo, {"action": "undo"}, name="undo"),
    path("redo", workspace.undo_redo, {"action": "redo"}, name="redo"),
    path("tidy", workspace.tidy_layout, name="tidy_layout"),
    path("diff", chain.revision_diff, name="diff"),
    path("people", people.chain_people, name="people"),
    path("simulate", simulator.simulate, name="simulate"),
    path("simulate/save", simulator.save_scenario, name="save_scenario"),
    path("scenarios/open", simulator.open_scenario, name="open_scenario"),
    path("audit", audit.audit_trace, name="audit"),
    path("harness/", harness.harness_runs, name="harness"),
    path("harness/<int:run>/", harness.harness_run, name="harness_run"),
    path("openapi", openapi.openapi, name="openapi"),
    path("openapi/<int:upload>/", openapi.operations, name="openapi_upload"),
    path("openapi/<int:upload>/add", openapi.add_operations, name="openapi_add"),
    path("save-check", campaigns.save_check, name="save_check"),
    path("campaigns/", campaigns.campaigns, name="campaigns"),
    path("campaigns/<int:pk>/", campaigns.campaign, name="campaign"),
    path("campaigns/<int:pk>/cancel", campaigns.cancel, name="cancel_campaign"),
    path("comments", review.comments, name="comments"),
    path("comments/<int:pk>/resolve", review.resolve_comment, name="resolve_comment"),
    path("reviews/", review.reviews, name="reviews"),
    path("reviews/<int:pk>/", review.review, name="review"),
    path("reviews/<int:pk>/vote", review.vote, name="vote"),
    path("scenarios.json", chain.test_vectors_export, name="vectors"),
    path("scenarios/record", workspace.record_scenario, name="record_scenario"),
    path("scenarios/delete", workspace.delete_scenario, name="delete_scenario"),
    re_path(
        rf"^r(?P<number>[0-9]+)\.(?P<fmt>{'|'.join(DOWNLOADS)})$",
        chain.revision_export,
        name="export",
    ),
]

urlpatterns = [
    path("", home.home, name="home"),
    path("inbox/", inbox.inbox, name="inbox"),
    path("inbox/<int:pk>/open", inbox.open_notification, name="open_notification"),
    path("inbox/read-all", inbox.read_all, name="read_all"),
    path("account/tokens/", people.tokens, name="tokens"),
    path("account/tokens/<int:pk>/revoke", people.revoke_token, name="revoke_token"),
    path("teams/", people.teams, name="teams"),
    path("teams/<slug:slug>/", people.team, name="team"),
    path("teams/<slug:slug>/members/<int:pk>/vouch", people.vouch, name="vouch"),
    path("teams/<slug:slug>/invitations/", invitations.invite, name="invite"),
    path(
        "teams/<slug:slug>/invitations/<int:pk>/revoke",
        invitations.revoke_invitation,
        name="revoke_invitation",
    ),
    path("invitations/<int:pk>/", invitations.answer_invitation, name="answer_invitation"),
    path("invite/<str:secret>/", invitations.invitation, name="invitation"),
    path("invite/<str:secret>/account", invitations.invitation_account, name="invitation_account"),
    path("glossary/", glossary.glossary, name="glossary"),
    path("glossary/rules/<str:rule_id>/", glossary.rule, name="rule"),
    path("chains/new/", wizard.new_chain, name="new"),
    path("chains/import/", imports.import_chain, name="import"),
    path("t/<slug:team>/chains/<str:key>/", include(chain_urls)),
    path("chains/<str:key>/", include(chain_urls)),
]
