-- The periodic cleanup deletes OTP sessions by expiry.
CREATE INDEX otp_sessions_expires_at ON otp_sessions (expires_at);
