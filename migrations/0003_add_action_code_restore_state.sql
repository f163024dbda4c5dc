-- A RECOVER_EMAIL code restores the address an email change replaced, with the verification state
-- that address had before the change (issue 19, point 1). Recovery used to restore it as verified:
-- a squatter who registered a victim's address, moved the account away and let the victim (or a
-- mail scanner) follow the recovery link got an account whose unproven password the victim's later
-- email-link sign-in no longer stripped. NULL (codes made before this column) restores unverified.
ALTER TABLE action_codes ADD COLUMN restore_email_verified boolean;
