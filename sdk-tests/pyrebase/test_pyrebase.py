"""pyrebase4, an older REST client, against a live accountd: it calls the legacy v3 relyingparty
names (federation-and-limits.md §D.7) on www.googleapis.com and the token route on
securetoken.googleapis.com, which a host rewrite (as a reverse proxy or DNS override would do)
sends to accountd's public listener. Checklist D5: sign-up, sign-in, account info, verification
mail, reset, refresh, delete all succeed. pyrebase4 pins urllib3 below 2, which Selenium refuses,
so it has a virtualenv of its own (.venv-pyrebase).
"""
import os
import uuid

import pyrebase
import requests

CLIENT = f"http://{os.environ['ACCOUNTD_INTEROP_CLIENT_HOST']}"
ADMIN = f"http://{os.environ['ACCOUNTD_INTEROP_ADMIN_HOST']}"
PROJECT = os.environ.get("ACCOUNTD_INTEROP_PROJECT", "demo-interop")
_send = requests.Session.send


def _rewritten(session, request, **kwargs):
    for host in ("https://www.googleapis.com/", "https://securetoken.googleapis.com/", "https://identitytoolkit.googleapis.com/"):
        if request.url.startswith(host):
            request.url = f"{CLIENT}/{request.url[len('https://'):]}"
    return _send(session, request, **kwargs)


requests.Session.send = _rewritten


firebase = pyrebase.initialize_app({
    "apiKey": "interop-key", "authDomain": "localhost", "databaseURL": "https://unused.example", "storageBucket": "",
})


def test_pyrebase_account_lifecycle():
    client = firebase.auth()
    email = f"py-{uuid.uuid4().hex[:8]}@example.com"
    created = client.create_user_with_email_and_password(email, "secret-pass")
    assert created["email"] == email and created["idToken"]
    signed_in = client.sign_in_with_email_and_password(email, "secret-pass")
    assert signed_in["localId"] == created["localId"]
    info = client.get_account_info(signed_in["idToken"])
    assert info["users"][0]["email"] == email
    assert client.send_email_verification(signed_in["idToken"])["email"] == email
    assert client.send_password_reset_email(email)["email"] == email
    # The reset code as the user would click it: an admin's link, as the mail would carry it.
    reply = _send(requests.Session(), requests.Request(
        "POST", f"{ADMIN}/v1/projects/{PROJECT}/accounts:sendOobCode",
        json={"requestType": "PASSWORD_RESET", "email": email, "returnOobLink": True},
        headers={"Authorization": "Bearer owner"}).prepare())
    assert reply.status_code == 200, reply.text
    code = reply.json()["oobCode"]
    client.verify_password_reset_code(code, "new-secret-pass")
    again = client.sign_in_with_email_and_password(email, "new-secret-pass")
    refreshed = client.refresh(again["refreshToken"])
    assert refreshed["userId"] == created["localId"] and refreshed["idToken"]
    client.delete_user_account(refreshed["idToken"])
    try:
        client.sign_in_with_email_and_password(email, "new-secret-pass")
        raise AssertionError("a deleted account signed in")
    except requests.exceptions.HTTPError as error:
        assert "EMAIL_NOT_FOUND" in str(error)
