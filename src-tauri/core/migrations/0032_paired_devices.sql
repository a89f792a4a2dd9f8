-- Devices paired with this Hearth (core::pairing). A device is known by its static public key
-- (x25519, 32 bytes): the host accepts a connection only from a key listed here and not revoked,
-- and checks `scopes` (JSON of hearth_protocol::devices::DeviceScopes) on every request. A
-- revoked row stays, so Settings can show it and the key stays refused, until the owner removes it.
CREATE TABLE paired_devices (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    public_key BLOB NOT NULL UNIQUE CHECK (length(public_key) = 32),
    scopes TEXT NOT NULL,
    paired_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
);
