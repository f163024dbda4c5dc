"""The Firebase Admin SDK's OIDC provider-config calls against a live accountd's admin listener
(federation-and-limits.md §B.6 B1, B2, B5): create, get, update, list, delete.
"""
import os
import uuid

import firebase_admin
import pytest
from firebase_admin import auth, exceptions

PROJECT = os.environ.get("ACCOUNTD_INTEROP_PROJECT", "demo-interop")


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
    assert created._data["name"] == f"projects/{PROJECT}/oauthIdpConfigs/{provider_id}"

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
