"""Phone numbers through the real Firebase Admin SDK for Python and the REST calls the client SDKs
make (mfa-phone-tenants.md §A), against a running accountd whose demo test inbox is on."""
import pytest
import requests
from firebase_admin import auth

from test_admin_sdk import BASE, HOST, PROJECT, claims, rest

ADMIN = {"Authorization": "Bearer owner"}


def enable_phone():
    reply = requests.patch(
        f"http://{HOST}/v2/projects/{PROJECT}/config",
        params={"updateMask": "signIn.phoneNumber.enabled"},
        json={"signIn": {"phoneNumber": {"enabled": True}}},
        headers=ADMIN,
        timeout=30,
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["signIn"]["phoneNumber"]["enabled"] is True


def code_for(session_info):
    inbox = requests.get(f"{BASE}/emulator/v1/projects/{PROJECT}/verificationCodes", timeout=30).json()
    return next(entry["code"] for entry in inbox["verificationCodes"] if entry["sessionInfo"] == session_info)


def test_phone_sign_in_then_admin_sdk_finds_and_edits_the_user():
    enable_phone()
    status, sent = rest("sendVerificationCode", {"phoneNumber": "+1 (555) 555-0142", "recaptchaToken": "ignored"})
    assert status == 200, sent
    status, signed = rest("signInWithPhoneNumber", {"sessionInfo": sent["sessionInfo"], "code": code_for(sent["sessionInfo"])})
    assert status == 200, signed
    assert signed["isNewUser"] is True and signed["phoneNumber"] == "+15555550142"
    assert claims(signed["idToken"])["firebase"]["sign_in_provider"] == "phone"

    user = auth.get_user_by_phone_number("+15555550142")
    assert user.uid == signed["localId"]
    assert [p.provider_id for p in user.provider_data] == ["phone"]
    assert auth.verify_id_token(signed["idToken"])["phone_number"] == "+15555550142"

    auth.update_user(user.uid, phone_number=auth.DELETE_ATTRIBUTE)
    assert auth.get_user(user.uid).phone_number is None
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user_by_phone_number("+15555550142")


def test_admin_sdk_phone_numbers_are_normalised_and_unique():
    created = auth.create_user(phone_number="+44 20 7946 0001")
    assert created.phone_number == "+442079460001"
    with pytest.raises(auth.PhoneNumberAlreadyExistsError):
        auth.create_user(phone_number="+442079460001")
    with pytest.raises(ValueError):
        auth.create_user(phone_number="not a number")
