-- Sign-ins in progress (OAuth 2.0 with PKCE): one row per authorization Hearth sent the owner's
-- browser to, keyed by the SHA-256 of its `state` (the state itself is never stored). Its PKCE
-- verifier is in the vault under `oauth-verifier:<state_hash>`. A row is consumed by the one
-- DELETE … RETURNING that completes it, so a state works once, and only until `expires_at`.
CREATE TABLE oauth_states (
    state_hash    TEXT PRIMARY KEY,
    redirect_uri  TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
) STRICT;
