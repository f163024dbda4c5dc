"""Second factors through the real Firebase Admin SDK for Python and the v2 REST calls the client
SDKs make (mfa-phone-tenants.md §B), against a running accountd. The TOTP codes are computed here,
independently of accountd (RFC 6238 with Python's hmac)."""
import base64
import datetime
import hashlib
import hmac
import struct
import time
import urllib.parse

import requests
from firebase_admin import auth

from test_admin_sdk import BASE, HOST, KEY, PROJECT, sign_in

ADMIN = {"Authorization": "Bearer owner"}


def totp(secret_base32, step):
    secret = base64.b32decode(secret_base32 + "=" * (-len(secret_base32) % 8))
    digest = hmac.new(secret, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000)


def test_rfc6238_reference_vectors():
    secret = base64.b32encode(b"12345678901234567890").decode().rstrip("=")
    for seconds, expected in [(59, "287082"), (1111111109, "081804"), (1234567890, "005924"), (2000000000, "279037")]:
        assert totp(secret, seconds // 30) == expected


def v2(rpc, body):
    reply = requests.post(f"{BASE}/v2/accounts/{rpc}?key={KEY}", json=body, timeout=30)
    return reply.status_code, reply.json()


def set_mfa(state):
    body = {"mfa": {"state": state, "enabledProviders": ["PHONE_SMS"],
                    "providerConfigs": [{"state": "ENABLED", "totpProviderConfig": {"adjacentIntervals": 5}}]}}
    reply = requests.patch(f"http://{HOST}/v2/projects/{PROJECT}/config", params={"updateMask": "mfa"}, json=body,
                           headers=ADMIN, timeout=30)
    assert reply.status_code == 200, reply.text


def test_totp_enrolment_and_sign_in_as_the_admin_sdk_sees_them():
    set_mfa("ENABLED")
    try:
        user = auth.create_user(email="mfa-interop@example.com", password="secret-pass", email_verified=True)
        first = sign_in("mfa-interop@example.com", "secret-pass")
        status, started = v2("mfaEnrollment:start", {"idToken": first["idToken"], "totpEnrollmentInfo": {}})
        assert status == 200, started
        info = started["totpSessionInfo"]
        assert (info["hashingAlgorithm"], info["verificationCodeLength"], info["periodSec"]) == ("SHA1", 6, 30)

        # What a TOTP app reads: the URI the JS SDK's generateQrCodeUrl builds from this answer.
        uri = (f"otpauth://totp/accountd:{urllib.parse.quote('mfa-interop@example.com')}?secret={info['sharedSecretKey']}"
               f"&issuer=accountd&algorithm=SHA1&digits=6")
        secret = urllib.parse.parse_qs(urllib.parse.urlparse(uri).query)["secret"][0]
        step = int(time.time()) // 30
        status, enrolled = v2("mfaEnrollment:finalize", {
            "idToken": first["idToken"], "displayName": "Authenticator",
            "totpVerificationInfo": {"sessionInfo": info["sessionInfo"], "verificationCode": totp(secret, step)}})
        assert status == 200, enrolled
        assert enrolled["totpAuthInfo"] == {}

        decoded = auth.verify_id_token(enrolled["idToken"], check_revoked=True)
        assert decoded["firebase"]["sign_in_second_factor"] == "totp"
        factor_id = decoded["firebase"]["second_factor_identifier"]
        # The Python SDK keeps mfaInfo in the record it read (it has no typed view of it).
        factors = auth.get_user(user.uid)._data["mfaInfo"]
        assert [f["mfaEnrollmentId"] for f in factors] == [factor_id]
        assert factors[0]["totpInfo"] == {} and factors[0]["displayName"] == "Authenticator"
        assert "sharedSecretKey" not in str(factors)
        # Enrolment revoked the session that started it.
        try:
            auth.verify_id_token(first["idToken"], check_revoked=True)
            raise AssertionError("the pre-enrolment session survived")
        except auth.RevokedIdTokenError:
            pass

        # A password sign-in is now challenged: no tokens, a pending credential.
        reply = requests.post(f"{BASE}/v1/accounts:signInWithPassword?key={KEY}",
                              json={"email": "mfa-interop@example.com", "password": "secret-pass"}, timeout=30).json()
        assert "idToken" not in reply and reply["mfaInfo"][0]["mfaEnrollmentId"] == factor_id
        status, second = v2("mfaSignIn:finalize", {
            "mfaPendingCredential": reply["mfaPendingCredential"], "mfaEnrollmentId": factor_id,
            "totpVerificationInfo": {"verificationCode": totp(secret, int(time.time()) // 30 + 1)}})
        assert status == 200, second
        cookie = auth.create_session_cookie(second["idToken"], expires_in=datetime.timedelta(minutes=10))
        assert auth.verify_session_cookie(cookie)["firebase"]["second_factor_identifier"] == factor_id
    finally:
        set_mfa("DISABLED")
