"""The real Firebase Admin SDK for Python against a running accountd.

scripts/test starts accountd with a fresh database and runs this with FIREBASE_AUTH_EMULATOR_HOST
pointing at it (the SDK's documented way to talk to another auth host).
"""
import base64
import hashlib
import hmac
import json
import os
import time
import urllib.parse

import firebase_admin
import pytest
import requests
from firebase_admin import auth

HOST = os.environ["FIREBASE_AUTH_EMULATOR_HOST"]  # the admin listener
PROJECT = os.environ.get("ACCOUNTD_INTEROP_PROJECT", "demo-interop")
# The app's calls go to the public listener, as an app's would.
BASE = f"http://{os.environ.get('ACCOUNTD_INTEROP_CLIENT_HOST', HOST)}"
KEY = "interop-key"

app = firebase_admin.initialize_app(options={"projectId": PROJECT})


def rest(rpc, body):
    reply = requests.post(f"{BASE}/identitytoolkit.googleapis.com/v1/accounts:{rpc}?key={KEY}", json=body, timeout=30)
    return reply.status_code, reply.json()


def sign_in(email, password):
    status, body = rest("signInWithPassword", {"email": email, "password": password, "returnSecureToken": True})
    assert status == 200, body
    return body


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def code_of(link):
    query = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)
    if "link" in query:
        return code_of(query["link"][0])
    return query["oobCode"][0]


def test_create_get_update_delete():
    user = auth.create_user(uid="interop-1", email="one@example.com", phone_number="+15550100001", password="secret-pass",
                            display_name="One", email_verified=True)
    assert user.uid == "interop-1"
    assert auth.get_user("interop-1").email == "one@example.com"
    assert auth.get_user_by_email("ONE@example.com").uid == "interop-1"
    assert auth.get_user_by_phone_number("+15550100001").uid == "interop-1"
    assert {p.provider_id for p in user.provider_data} == {"password", "phone"}
    updated = auth.update_user("interop-1", display_name="Uno", disabled=True)
    assert updated.display_name == "Uno" and updated.disabled
    status, body = rest("signInWithPassword", {"email": "one@example.com", "password": "secret-pass"})
    assert body["error"]["message"] == "USER_DISABLED"
    auth.update_user("interop-1", disabled=False)
    auth.delete_user("interop-1")
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user("interop-1")
    with pytest.raises(auth.EmailAlreadyExistsError):
        auth.create_user(email="dup@example.com")
        auth.create_user(email="dup@example.com")


def test_custom_claims_reach_a_fresh_token():
    user = auth.create_user(email="claims@example.com", password="secret-pass")
    auth.set_custom_user_claims(user.uid, {"role": "admin", "level": 3})
    assert auth.get_user(user.uid).custom_claims == {"role": "admin", "level": 3}
    token = sign_in("claims@example.com", "secret-pass")["idToken"]
    assert claims(token)["role"] == "admin"
    decoded = auth.verify_id_token(token)
    assert decoded["uid"] == user.uid and decoded["level"] == 3


def test_revoke_refresh_tokens_then_check_revoked():
    user = auth.create_user(email="revoke@example.com", password="secret-pass")
    session = sign_in("revoke@example.com", "secret-pass")
    assert auth.verify_id_token(session["idToken"], check_revoked=True)["uid"] == user.uid
    auth.revoke_refresh_tokens(user.uid)
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(session["idToken"], check_revoked=True)
    reply = requests.post(f"{BASE}/securetoken.googleapis.com/v1/token?key={KEY}",
                          data={"grant_type": "refresh_token", "refresh_token": session["refreshToken"]}, timeout=30)
    assert reply.json()["error"]["message"] == "TOKEN_EXPIRED"
    fresh = sign_in("revoke@example.com", "secret-pass")
    assert auth.verify_id_token(fresh["idToken"], check_revoked=True)["uid"] == user.uid


def test_action_links_redeem():
    auth.create_user(email="links@example.com", password="secret-pass")
    reset = auth.generate_password_reset_link("links@example.com")
    status, body = rest("resetPassword", {"oobCode": code_of(reset), "newPassword": "new-secret"})
    assert status == 200 and body["requestType"] == "PASSWORD_RESET"
    sign_in("links@example.com", "new-secret")

    verify = auth.generate_email_verification_link("links@example.com")
    status, body = rest("update", {"oobCode": code_of(verify)})
    assert status == 200 and body["emailVerified"] is True
    assert auth.get_user_by_email("links@example.com").email_verified

    settings = auth.ActionCodeSettings(url="https://app.localhost/finish", handle_code_in_app=True)
    link = auth.generate_sign_in_with_email_link("newcomer@example.com", settings)
    status, body = rest("signInWithEmailLink", {"email": "newcomer@example.com", "oobCode": code_of(link)})
    assert status == 200 and body["isNewUser"] is True
    assert auth.get_user_by_email("newcomer@example.com").email_verified


def test_email_link_strips_an_unverified_password():
    status, body = rest("signUp", {"email": "victim@example.com", "password": "attacker-pw", "returnSecureToken": True})
    assert status == 200
    old_token = body["idToken"]
    settings = auth.ActionCodeSettings(url="https://app.localhost/finish", handle_code_in_app=True)
    link = auth.generate_sign_in_with_email_link("victim@example.com", settings)
    status, body = rest("signInWithEmailLink", {"email": "victim@example.com", "oobCode": code_of(link)})
    assert status == 200 and body["isNewUser"] is False
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(old_token, check_revoked=True)
    status, body = rest("signInWithPassword", {"email": "victim@example.com", "password": "attacker-pw"})
    assert body["error"]["message"] == "INVALID_PASSWORD"


def test_import_every_hash_format():
    salt = b"saltsalt"
    signer = base64.b64decode("jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")
    cases = [
        (auth.UserImportHash.scrypt(key=signer, rounds=8, memory_cost=14, salt_separator=base64.b64decode("Bw==")),
         auth.ImportUserRecord(uid="imp-scrypt", email="imp-scrypt@example.com",
                               password_hash=base64.b64decode("lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="),
                               password_salt=base64.b64decode("42xEC+ixf3L2lw==")),
         "user1password"),
        (auth.UserImportHash.standard_scrypt(memory_cost=1024, parallelization=1, block_size=8, derived_key_length=64),
         auth.ImportUserRecord(uid="imp-std", email="imp-std@example.com",
                               password_hash=hashlib.scrypt(b"std-pass", salt=salt, n=1024, r=8, p=1, dklen=64), password_salt=salt),
         "std-pass"),
        (auth.UserImportHash.bcrypt(),
         auth.ImportUserRecord(uid="imp-bcrypt", email="imp-bcrypt@example.com",
                               password_hash=b"$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"),
         "U*U"),
        (auth.UserImportHash.pbkdf2_sha256(rounds=1000),
         auth.ImportUserRecord(uid="imp-pbkdf2", email="imp-pbkdf2@example.com",
                               password_hash=hashlib.pbkdf2_hmac("sha256", b"pb-pass", salt, 1000, 32), password_salt=salt),
         "pb-pass"),
        (auth.UserImportHash.hmac_sha256(key=b"hmac-key"),
         auth.ImportUserRecord(uid="imp-hmac", email="imp-hmac@example.com",
                               password_hash=hmac.new(b"hmac-key", b"hm-pass" + salt, "sha256").digest(), password_salt=salt),
         "hm-pass"),
    ]

    def repeated(name, data, rounds):
        digest = hashlib.new(name, data).digest()
        for _ in range(rounds - 1):
            digest = hashlib.new(name, digest).digest()
        return digest

    # The digests hash salt + password, then the digest again for each further round (MD5's 0 is one round).
    for name, factory, rounds in [("md5", auth.UserImportHash.md5, 0), ("sha1", auth.UserImportHash.sha1, 1),
                                  ("sha256", auth.UserImportHash.sha256, 3), ("sha512", auth.UserImportHash.sha512, 2)]:
        cases.append((factory(rounds=rounds),
                      auth.ImportUserRecord(uid=f"imp-{name}", email=f"imp-{name}@example.com", password_salt=salt,
                                            password_hash=repeated(name, salt + b"dg-pass", max(rounds, 1))),
                      "dg-pass"))
    for name, factory in [("md5", auth.UserImportHash.hmac_md5), ("sha1", auth.UserImportHash.hmac_sha1),
                          ("sha512", auth.UserImportHash.hmac_sha512)]:
        cases.append((factory(key=b"hmac-key"),
                      auth.ImportUserRecord(uid=f"imp-hmac-{name}", email=f"imp-hmac-{name}@example.com", password_salt=salt,
                                            password_hash=hmac.new(b"hmac-key", b"hm-pass" + salt, name).digest()),
                      "hm-pass"))
    cases.append((auth.UserImportHash.pbkdf_sha1(rounds=1000),
                  auth.ImportUserRecord(uid="imp-pbkdf-sha1", email="imp-pbkdf-sha1@example.com", password_salt=salt,
                                        password_hash=hashlib.pbkdf2_hmac("sha1", b"pb-pass", salt, 1000, 20)),
                  "pb-pass"))
    for hash_alg, record, password in cases:
        result = auth.import_users([record], hash_alg=hash_alg)
        assert result.failure_count == 0, [e.reason for e in result.errors]
        assert sign_in(record.email, password)["localId"] == record.uid
        status, body = rest("signInWithPassword", {"email": record.email, "password": password + "x"})
        assert body["error"]["message"] == "INVALID_PASSWORD"


def test_list_users_pages():
    for index in range(5):
        auth.create_user(uid=f"page-{index}", email=f"page{index}@example.com")
    seen = [user.uid for user in auth.list_users(max_results=2).iterate_all()]
    assert len(seen) == len(set(seen))
    assert {f"page-{index}" for index in range(5)} <= set(seen)
    first = auth.list_users(max_results=2)
    assert len(first.users) == 2 and first.has_next_page


def test_session_cookie_verifies():
    user = auth.create_user(email="cookie@example.com", password="secret-pass")
    token = sign_in("cookie@example.com", "secret-pass")["idToken"]
    cookie = auth.create_session_cookie(token, expires_in=3600)
    assert claims(cookie)["iss"] == f"https://session.firebase.google.com/{PROJECT}"
    assert claims(cookie)["sub"] == user.uid
