-- Sending identities of the e-mail provider accounts: sender addresses
-- and domains notifyd asked the vendor to verify (or took over), with the
-- vendor state last read: status, the DNS records to publish (JSON), the
-- custom MAIL FROM / return-path domain.
CREATE TABLE sending_identities (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    provider_account_id TEXT NOT NULL REFERENCES provider_accounts(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    vendor_id TEXT NOT NULL,
    status TEXT NOT NULL,
    origin TEXT NOT NULL,
    mail_from_domain TEXT NOT NULL,
    spf_include TEXT NOT NULL,
    records TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    checked_at BIGINT NOT NULL,
    verified_at BIGINT,
    UNIQUE (provider_account_id, type, name)
);
CREATE INDEX sending_identities_ws_provider ON sending_identities(workspace_id, provider_account_id, created_at);
