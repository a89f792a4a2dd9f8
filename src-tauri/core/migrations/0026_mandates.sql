-- Standing orders (issue 31, build point 3): a bounded, data-only mandate the owner grants a
-- task or a schedule, so a call it covers runs without a card. A use is counted by one
-- compare-and-swap on `uses` (see store/mandates.rs); each use is recorded under the
-- operation key it ran as, which is what its receipt cites.
CREATE TABLE mandates (
    id           TEXT PRIMARY KEY,
    holder_kind  TEXT NOT NULL CHECK (holder_kind IN ('task', 'schedule')),
    holder_id    TEXT NOT NULL,
    grant_kind   TEXT NOT NULL CHECK (grant_kind IN ('computer_commands', 'site_actions', 'remember_facts')),
    origin       TEXT,
    max_uses     INTEGER NOT NULL CHECK (max_uses > 0),
    window_ms    INTEGER NOT NULL CHECK (window_ms >= 0),
    uses         INTEGER NOT NULL DEFAULT 0,
    window_start INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER
);
CREATE INDEX mandates_holder ON mandates (holder_kind, holder_id);

CREATE TABLE mandate_uses (
    mandate_id TEXT NOT NULL REFERENCES mandates(id),
    op_scope   TEXT NOT NULL,
    op_id      TEXT NOT NULL,
    tool       TEXT NOT NULL,
    used_at    INTEGER NOT NULL,
    PRIMARY KEY (op_scope, op_id)
);
CREATE INDEX mandate_uses_mandate ON mandate_uses (mandate_id);
