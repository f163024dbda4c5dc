"""The Firebase Admin SDK's create_custom_token -> signInWithCustomToken against a live accountd
(federation-and-limits.md §C.7 C1, C5): the unsigned emulator-mode token a demo project accepts
behind ACCOUNTD_ACCEPT_UNSIGNED_CUSTOM_TOKENS, and a token the SDK signs with a service-account key
whose public key an operator registered (customTokenSigners on the admin listener).
"""
import base64
import json
import os
import uuid

import firebase_admin
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from firebase_admin import auth, credentials

ADMIN = f"http://{os.environ['FIREBASE_AUTH_EMULATOR_HOST']}"
CLIENT = f"http://{os.environ.get('ACCOUNTD_INTEROP_CLIENT_HOST', os.environ['FIREBASE_AUTH_EMULATOR_HOST'])}"
PROJECT = os.environ.get("ACCOUNTD_INTEROP_PROJECT", "demo-interop")
KEY = "interop-key"


def exchange(token):
    token = token.decode() if isinstance(token, bytes) else token
    reply = requests.post(f"{CLIENT}/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken?key={KEY}",
                          json={"token": token, "returnSecureToken": True}, timeout=30)
    return reply.status_code, reply.json()


def claims(id_token):
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def default_app():
    try:
        return firebase_admin.get_app()
    except ValueError:
        return firebase_admin.initialize_app(options={"projectId": PROJECT})


def test_emulator_mode_token_signs_in():
    default_app()
    uid = f"dev-{uuid.uuid4().hex[:8]}"
    token = auth.create_custom_token(uid, {"premium": True})  # unsigned: the SDK is in emulator mode
    status, body = exchange(token)
    assert status == 200, body
    assert body["isNewUser"] is True
    assert claims(body["idToken"])["premium"] is True
    assert claims(body["idToken"])["firebase"]["sign_in_provider"] == "custom"
    assert auth.get_user(uid).uid == uid


def test_signed_token_of_a_registered_service_account():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    email = "backend@acme-gcp.iam.gserviceaccount.com"
    info = {
        "type": "service_account", "project_id": PROJECT, "private_key_id": uuid.uuid4().hex,
        "private_key": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode(),
        "client_email": email, "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token",
    }
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    registered = requests.post(f"{ADMIN}/v1/projects/{PROJECT}/customTokenSigners",
                               json={"serviceAccountEmail": email, "publicKeyPem": public_pem, "keyId": info["private_key_id"]},
                               headers={"Authorization": "Bearer owner"}, timeout=30)
    assert registered.status_code == 200, registered.text
    signer = firebase_admin.initialize_app(credentials.Certificate(info), {"projectId": PROJECT}, name=f"signer-{uuid.uuid4().hex}")
    # Outside emulator mode the SDK signs with the service account's key, as in production.
    emulator = os.environ.pop("FIREBASE_AUTH_EMULATOR_HOST")
    try:
        token = auth.create_custom_token("signed-user", {"tier": "gold"}, app=signer)
    finally:
        os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = emulator
    header = json.loads(base64.urlsafe_b64decode(token.split(b".")[0] + b"=="))
    assert header["alg"] == "RS256" and header["kid"] == info["private_key_id"]
    status, body = exchange(token)
    assert status == 200, body
    assert claims(body["idToken"])["tier"] == "gold"
    status, body = exchange(token)
    assert status == 400 and body["error"]["message"] == "INVALID_CUSTOM_TOKEN : Custom token has already been used."
