extension Migrations {
    /// A session's refresh chain in four columns of its own row (the generation that refreshes now,
    /// when it was issued, when it idles out, its hash), instead of a row per token kept until its expiry: that
    /// was about 1.3 MiB per busy session over 30 days. Added, never changed: an older node neither
    /// reads nor writes them and keeps its token rows, and nodes of this release start chains only
    /// once no older node is alive (`RefreshChainGate`).
    static let refreshChains = Migration(
        version: 18, name: "refresh chains",
        statements: [
            "ALTER TABLE sessions ADD COLUMN refresh_generation BIGINT",
            "ALTER TABLE sessions ADD COLUMN refresh_rotated_at BIGINT",
            "ALTER TABLE sessions ADD COLUMN refresh_expires_at BIGINT",
            "ALTER TABLE sessions ADD COLUMN refresh_token_hash TEXT",
        ])
}
