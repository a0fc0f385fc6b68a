/// One migration list for both databases: portable column types (TEXT, BIGINT) keep the SQL shared.
struct Migration: Sendable {
    let version: Int
    let name: String
    let statements: [String]
}

enum Migrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "foundation", statements: [
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
        Migration(version: 2, name: "agreements", statements: [
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
        Migration(version: 3, name: "rotation by successor", statements: [
            "CREATE UNIQUE INDEX refresh_tokens_parent ON refresh_tokens (parent_hash)",
            "DROP INDEX refresh_tokens_session",
            "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id, created_at)",
            "ALTER TABLE refresh_tokens DROP COLUMN rotated_at",
        ]),
    ]
}
