/// One migration list for both databases: portable column types (TEXT, BIGINT) keep the SQL shared.
struct Migration: Sendable {
    let version: Int
    let name: String
    var kind: MigrationKind = .expand
    let statements: [String]
}

enum Migrations {
    /// Every migration, in order: this file's, then `Migrations+Chains.swift` onwards.
    static let all: [Migration] = throughDeviceAuthorizations + [refreshChains, usernames, anonymousUsers]

    static let throughDeviceAuthorizations: [Migration] = [
        Migration(
            version: 1, name: "foundation",
            statements: [
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    email TEXT UNIQUE,
                    email_verified BIGINT NOT NULL DEFAULT 0,
                    phone TEXT UNIQUE,
                    phone_verified BIGINT NOT NULL DEFAULT 0,
                    profile TEXT NOT NULL,
                    state TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    last_login_at BIGINT
                )
                """,
                """
                CREATE TABLE credentials (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, kind)
                )
                """,
                """
                CREATE TABLE clients (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    secret_hash TEXT,
                    redirect_uris TEXT NOT NULL,
                    scopes TEXT NOT NULL,
                    settings TEXT NOT NULL,
                    is_default BIGINT NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT NOT NULL,
                    amr TEXT NOT NULL,
                    scopes TEXT NOT NULL,
                    user_agent TEXT,
                    ip_address TEXT,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    revoked_at BIGINT,
                    revoke_reason TEXT
                )
                """,
                "CREATE INDEX sessions_user ON sessions (user_id, revoked_at)",
                """
                CREATE TABLE refresh_tokens (
                    token_hash TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    parent_hash TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    rotated_at BIGINT
                )
                """,
                "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id)",
                """
                CREATE TABLE signing_keys (
                    kid TEXT PRIMARY KEY,
                    algorithm TEXT NOT NULL,
                    public_jwk TEXT NOT NULL,
                    sealed_private_key TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    retired_at BIGINT,
                    publish_until BIGINT
                )
                """,
                """
                CREATE TABLE attempt_counters (
                    counter_key TEXT PRIMARY KEY,
                    count BIGINT NOT NULL,
                    window_start BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE one_time_codes (
                    id TEXT PRIMARY KEY,
                    purpose TEXT NOT NULL,
                    identifier TEXT NOT NULL,
                    client_id TEXT NOT NULL,
                    user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                    code_hash TEXT,
                    token_hash TEXT UNIQUE,
                    attempts BIGINT NOT NULL DEFAULT 0,
                    max_attempts BIGINT NOT NULL,
                    data TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    consumed_at BIGINT
                )
                """,
                "CREATE INDEX one_time_codes_lookup ON one_time_codes (purpose, identifier, client_id)",
                """
                CREATE TABLE outbox (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    recipient TEXT NOT NULL,
                    locale TEXT,
                    payload TEXT NOT NULL,
                    status TEXT NOT NULL,
                    attempts BIGINT NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL,
                    due_at BIGINT NOT NULL,
                    lease_until BIGINT,
                    last_error TEXT,
                    sent_at BIGINT
                )
                """,
                "CREATE INDEX outbox_due ON outbox (status, due_at)",
            ]),
        Migration(
            version: 2, name: "agreements",
            statements: [
                """
                CREATE TABLE agreements (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    client_id TEXT NOT NULL,
                    platform_version TEXT,
                    client_version TEXT,
                    accepted_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, client_id)
                )
                """
            ]),
        // A rotation is now recorded by its successor alone: the successor's hash is derived from the
        // parent, and at most one row may name a parent, so inserting it is the atomic claim and its
        // creation time is the rotation time. One write per refresh instead of three.
        Migration(
            version: 3, name: "rotation by successor", kind: .breaking,
            statements: [
                "CREATE UNIQUE INDEX refresh_tokens_parent ON refresh_tokens (parent_hash)",
                "DROP INDEX refresh_tokens_session",
                "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id, created_at)",
                "ALTER TABLE refresh_tokens DROP COLUMN rotated_at",
            ]),
        // Credentials of many types per user (the Kratos model): an id, a type, a versioned JSON config and
        // a failure counter of their own, found by identifiers unique per type (email for a password,
        // provider + subject for a federated identity, device + key for an authenticator). Existing
        // passwords move over with the user's email and phone as identifiers. The config is built by
        // concatenation: PHC and bcrypt strings use only `$ , = . / +` and alphanumerics, nothing JSON
        // must escape.
        Migration(
            version: 4, name: "credentials with identifiers, flows, browser sessions", kind: .breaking,
            statements: [
                "ALTER TABLE credentials RENAME TO credentials_v1",
                """
                CREATE TABLE credentials (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    type TEXT NOT NULL,
                    config TEXT NOT NULL,
                    config_version BIGINT NOT NULL DEFAULT 1,
                    failure_count BIGINT NOT NULL DEFAULT 0,
                    locked_until BIGINT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX credentials_user ON credentials (user_id, type)",
                """
                CREATE TABLE credential_identifiers (
                    type TEXT NOT NULL,
                    identifier TEXT NOT NULL,
                    credential_id TEXT NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
                    PRIMARY KEY (type, identifier)
                )
                """,
                "CREATE INDEX credential_identifiers_credential ON credential_identifiers (credential_id)",
                """
                INSERT INTO credentials (id, user_id, type, config, config_version, failure_count, created_at, updated_at)
                SELECT 'v1-' || user_id || '-' || kind, user_id, kind, '{"hashed_password":"' || secret || '"}', 1, 0,
                       created_at, updated_at
                FROM credentials_v1
                """,
                """
                INSERT INTO credential_identifiers (type, identifier, credential_id)
                SELECT c.type, u.email, c.id FROM credentials c JOIN users u ON u.id = c.user_id WHERE u.email IS NOT NULL
                """,
                """
                INSERT INTO credential_identifiers (type, identifier, credential_id)
                SELECT c.type, u.phone, c.id FROM credentials c JOIN users u ON u.id = c.user_id WHERE u.phone IS NOT NULL
                """,
                "DROP TABLE credentials_v1",
                """
                CREATE TABLE flows (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    client_id TEXT NOT NULL,
                    redirect_uri TEXT,
                    code_challenge TEXT,
                    code_challenge_method TEXT,
                    nonce TEXT,
                    state TEXT,
                    csrf_hash TEXT NOT NULL,
                    step TEXT NOT NULL,
                    user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                    browser_session_id TEXT,
                    data TEXT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    consumed_at BIGINT
                )
                """,
                "CREATE INDEX flows_expiry ON flows (expires_at)",
                """
                CREATE TABLE browser_sessions (
                    id TEXT PRIMARY KEY,
                    token_hash TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    amr TEXT NOT NULL,
                    auth_time BIGINT NOT NULL,
                    user_agent TEXT,
                    ip_address TEXT,
                    created_at BIGINT NOT NULL,
                    last_seen_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX browser_sessions_user ON browser_sessions (user_id)",
            ]),
        // Sessions remember the credential that started them, so deleting a device authenticator (or
        // its last allowed failure) ends exactly its sessions. No foreign key: a deleted credential's
        // sessions stay as revoked history.
        Migration(
            version: 5, name: "sessions bound to credentials",
            statements: [
                "ALTER TABLE sessions ADD COLUMN credential_id TEXT",
                "CREATE INDEX sessions_credential ON sessions (credential_id) WHERE credential_id IS NOT NULL",
            ]),
        // Settings every node of one database must agree on (the token issuer), recorded by the first.
        Migration(
            version: 6, name: "cluster settings",
            statements: [
                """
                CREATE TABLE cluster_settings (
                    name TEXT PRIMARY KEY,
                    value TEXT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """
            ]),
        // The clean-up deletes by age in small batches: each batch must find its rows without a scan.
        Migration(
            version: 7, name: "clean-up indexes",
            statements: [
                "CREATE INDEX attempt_counters_window ON attempt_counters (window_start)",
                "CREATE INDEX one_time_codes_expiry ON one_time_codes (expires_at)",
                "CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at)",
                "CREATE INDEX sessions_expiry ON sessions (expires_at)",
                "CREATE INDEX browser_sessions_expiry ON browser_sessions (expires_at)",
                "CREATE INDEX outbox_sent ON outbox (sent_at) WHERE sent_at IS NOT NULL",
            ]),
        // What only the server, hooks and operators write about a user (the user writes profile.metadata).
        Migration(
            version: 8, name: "app metadata",
            statements: [
                "ALTER TABLE users ADD COLUMN app_metadata TEXT"
            ]),
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
