-- Connected Google accounts: one row per connection (each sign-in mints a new id; its tokens are
-- sealed in the vault under `google-tokens:<id>`, never here). A reconnect of the same account
-- replaces its row, so what was prepared for the old connection can no longer be approved.
CREATE TABLE google_accounts (
    connection_id TEXT PRIMARY KEY,
    account       TEXT NOT NULL,
    -- The scopes this sign-in holds, space-separated.
    scopes        TEXT NOT NULL,
    connected_at  INTEGER NOT NULL
) STRICT;
