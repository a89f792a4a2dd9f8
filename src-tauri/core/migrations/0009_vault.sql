-- The secrets vault: one row per named secret, encrypted with AES-256-GCM under the vault's
-- data key (kept in the OS keychain or <data>/vault.key, never here). The associated data
-- binds each ciphertext to its name and format, so a row copied under another name does not
-- decrypt. key_id is a fingerprint of the data key (a hash, not the key).
CREATE TABLE secrets (
    name       TEXT PRIMARY KEY,
    format     INTEGER NOT NULL,
    nonce      BLOB NOT NULL,
    ciphertext BLOB NOT NULL,
    key_id     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
