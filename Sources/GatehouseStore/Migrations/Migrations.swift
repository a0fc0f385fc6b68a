/// One migration list for both databases: portable column types (TEXT, BIGINT) keep the SQL shared.
struct Migration: Sendable {
    let version: Int
    let name: String
    var kind: MigrationKind = .expand
    let statements: [String]
}

enum Migrations {
    /// Every migration, in order: this file's, `Migrations+Operations.swift`'s, then
    /// `Migrations+Chains.swift` onwards.
    static let all: [Migration] = throughDeviceAuthorizations + [refreshChains, usernames, anonymousUsers]

    static let throughDeviceAuthorizations: [Migration] = throughAppMetadata + auditLogThroughDeviceAuthorizations

    /// The first release's schema and what its first changes added.
    static let throughAppMetadata: [Migration] = [
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
    ]
}
