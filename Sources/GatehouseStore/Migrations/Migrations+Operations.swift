extension Migrations {
    /// Versions 9 to 17: what running Gatehouse for others added (audit log, admin API and console,
    /// hosted sign-in, readiness, rolling upgrades, DPoP, device authorizations).
    static let auditLogThroughDeviceAuthorizations: [Migration] = [
        // Append-only: nothing updates a row; the clean-up deletes them by age.
        Migration(
            version: 9, name: "audit log",
            statements: [
                """
                CREATE TABLE audit_events (
                    id TEXT PRIMARY KEY,
                    at BIGINT NOT NULL,
                    type TEXT NOT NULL,
                    user_id TEXT,
                    client_id TEXT,
                    method TEXT,
                    reason TEXT,
                    account TEXT,
                    address_block TEXT,
                    user_agent TEXT
                )
                """,
                "CREATE INDEX audit_events_at ON audit_events (at, id)",
                "CREATE INDEX audit_events_user ON audit_events (user_id, at)",
                "CREATE INDEX audit_events_account ON audit_events (account, at)",
            ]),
        // Operators' actions name who acted; every event names the request that caused it. The admin
        // API pages users by creation and filters by last sign-in without a scan.
        Migration(
            version: 10, name: "admin API",
            statements: [
                "ALTER TABLE audit_events ADD COLUMN actor TEXT",
                "ALTER TABLE audit_events ADD COLUMN request_id TEXT",
                "CREATE INDEX users_created ON users (created_at, id)",
                "CREATE INDEX users_last_login ON users (last_login_at)",
            ]),
        // The admin console's one-time links and the sessions they open; the overview's refresh chart
        // counts rotated refresh tokens by day.
        Migration(
            version: 11, name: "admin console",
            statements: [
                """
                CREATE TABLE console_sessions (
                    id TEXT PRIMARY KEY,
                    token_hash TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL,
                    operator_name TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    ended_at BIGINT
                )
                """,
                "CREATE INDEX console_sessions_expiry ON console_sessions (expires_at)",
                "CREATE INDEX audit_events_type ON audit_events (type, at)",
                "CREATE INDEX refresh_tokens_created ON refresh_tokens (created_at)",
            ]),
        // Hosted sign-in: an app session remembers the browser session that signed it in (RP-initiated
        // logout ends both) and when the user last proved who they are there (`auth_time` in every ID
        // token of the session, refreshes too); a third-party client's consent is kept per user and client.
        Migration(
            version: 12, name: "hosted sign-in",
            statements: [
                "ALTER TABLE sessions ADD COLUMN browser_session_id TEXT",
                "ALTER TABLE sessions ADD COLUMN auth_time BIGINT",
                "CREATE INDEX sessions_browser ON sessions (browser_session_id) WHERE browser_session_id IS NOT NULL",
                """
                CREATE TABLE consents (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT NOT NULL,
                    scopes TEXT NOT NULL,
                    granted_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, client_id)
                )
                """,
            ]),
        // The `claims` request parameter (OIDC Core §5.5): the single claims a session's userinfo and ID
        // tokens release besides its scopes'. Added, never changed: older nodes write NULL.
        Migration(version: 13, name: "requested claims", statements: ["ALTER TABLE sessions ADD COLUMN claims TEXT"]),
        // Readiness commits a write (one row, overwritten), so a full disk or a read-only database
        // makes a node not ready. A new table: older nodes never touch it.
        Migration(
            version: 14, name: "readiness checks",
            statements: ["CREATE TABLE readiness_checks (name TEXT PRIMARY KEY, checked_at BIGINT NOT NULL)"]),
        // Rolling upgrades: a migration records which nodes may still serve after it (NULL: any, as
        // for every migration that only adds), and nodes say which schema they run, so a migration
        // that removes something refuses to run while a node that needs it is alive.
        Migration(
            version: 15, name: "rolling upgrades",
            statements: [
                "ALTER TABLE schema_migrations ADD COLUMN min_node_version BIGINT",
                """
                CREATE TABLE cluster_nodes (
                    id TEXT PRIMARY KEY,
                    schema_version BIGINT NOT NULL,
                    host TEXT NOT NULL,
                    started_at BIGINT NOT NULL,
                    seen_at BIGINT NOT NULL
                )
                """,
            ]),
        // DPoP (RFC 9449): the key a session's refresh tokens are bound to, and the once-only record of
        // each proof (kept until no proof could be taken again, then purged by expiry). Added, never
        // changed: an older node writes NULL, an unbound session, and refreshes it as before.
        Migration(
            version: 16, name: "dpop binding",
            statements: [
                "ALTER TABLE sessions ADD COLUMN dpop_jkt TEXT",
                "CREATE TABLE dpop_proofs (proof_key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
                "CREATE INDEX dpop_proofs_expiry ON dpop_proofs (expires_at)",
            ]),
        // The device authorization grant (RFC 8628): a new table, which older nodes never touch.
        Migration(
            version: 17, name: "device authorizations",
            statements: [
                """
                CREATE TABLE device_authorizations (
                    device_code_hash TEXT PRIMARY KEY,
                    user_code_hash TEXT NOT NULL UNIQUE,
                    client_id TEXT NOT NULL,
                    scopes TEXT NOT NULL,
                    status TEXT NOT NULL,
                    sealed_code TEXT,
                    sealed_verifier TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    interval_seconds BIGINT NOT NULL,
                    polled_at BIGINT
                )
                """,
                "CREATE INDEX device_authorizations_expiry ON device_authorizations (expires_at)",
            ]),
    ]
}
