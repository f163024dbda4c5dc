"""The Firebase Admin SDK's OIDC provider-config calls against a live accountd's admin listener
(federation-and-limits.md §B.6 B1, B2, B5): create, get, update, list, delete.
"""
import os
import uuid

import firebase_admin
import pytest
from firebase_admin import auth, exceptions

PROJECT = os.environ.get("ACCOUNTD_INTEROP_PROJECT", "demo-interop")
# Google names configs by the project's number (the server's ACCOUNTD_PROJECT_NUMBER).
PROJECT_NUMBER = os.environ.get("ACCOUNTD_INTEROP_PROJECT_NUMBER", PROJECT)


def default_app():
    try:
        return firebase_admin.get_app()
    except ValueError:
        return firebase_admin.initialize_app(options={"projectId": PROJECT})


def test_oidc_provider_config_lifecycle():
    default_app()
    provider_id = f"oidc.corp{uuid.uuid4().hex[:6]}"
    created = auth.create_oidc_provider_config(provider_id, client_id="client-1", issuer="https://issuer.example.com",
                                               display_name="Corp")
    assert created.provider_id == provider_id
    assert created.enabled is False
    assert created.id_token_response_type is True and created.code_response_type is False
    assert created.client_id == "client-1" and created.issuer == "https://issuer.example.com"
    assert created._data["name"] == f"projects/{PROJECT_NUMBER}/oauthIdpConfigs/{provider_id}"

    with pytest.raises(exceptions.ConflictError, match="CONFIGURATION_EXISTS"):  # production: 409 ALREADY_EXISTS
        auth.create_oidc_provider_config(provider_id, client_id="client-1", issuer="https://issuer.example.com")

    updated = auth.update_oidc_provider_config(provider_id, enabled=True, display_name="Corp SSO",
                                               code_response_type=True, client_secret="s3cret-value")
    assert updated.enabled is True and updated.display_name == "Corp SSO"
    assert updated.code_response_type is True and updated.id_token_response_type is False
    assert updated.client_secret is None, "the secret is never returned"
    assert auth.get_oidc_provider_config(provider_id).enabled is True

    listed = [config.provider_id for config in auth.list_oidc_provider_configs().iterate_all()]
    assert provider_id in listed

    auth.delete_oidc_provider_config(provider_id)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_oidc_provider_config(provider_id)


def test_provider_links_through_the_admin_sdk():
    default_app()
    user = auth.create_user(email=f"linked-{uuid.uuid4().hex[:8]}@example.com")
    raw_id = f"partner-{uuid.uuid4().hex[:8]}"
    # The Node Admin SDK's providerToLink (the Python SDK has no link call): the same admin RPC.
    import requests
    linked = requests.post(
        f"http://{os.environ['FIREBASE_AUTH_EMULATOR_HOST']}/identitytoolkit.googleapis.com/v1/projects/{PROJECT}/accounts:update",
        json={"localId": user.uid, "linkProviderUserInfo": {"providerId": "saml.partner", "rawId": raw_id,
                                                             "email": "p@partner.example", "displayName": "Partner"}},
        headers={"Authorization": "Bearer owner"}, timeout=30)
    assert linked.status_code == 200, linked.text
    updated = auth.get_user(user.uid)
    assert any(info.provider_id == "saml.partner" and info.uid == raw_id for info in updated.provider_data)
    # get_users with a ProviderIdentifier sends lookup {federatedUserId: [...]}, as the Node SDK's
    # getUserByProviderUid does.
    found = auth.get_users([auth.ProviderIdentifier("saml.partner", raw_id), auth.UidIdentifier("nobody-here")])
    assert [u.uid for u in found.users] == [user.uid]
    assert len(found.not_found) == 1
    unlinked = auth.update_user(user.uid, providers_to_delete=["saml.partner"])
    assert not any(info.provider_id == "saml.partner" for info in unlinked.provider_data)
    assert auth.get_users([auth.ProviderIdentifier("saml.partner", raw_id)]).users == []
