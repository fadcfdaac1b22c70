-- OTP fraud guard deny-list (issue 29, finding 4; docs/OTP.md "Fraud
-- guard"): a JSON array of number prefixes in international format
-- ("+1876"), NULL for none.
ALTER TABLE otp_fraud_guards ADD COLUMN denied_prefixes TEXT;
