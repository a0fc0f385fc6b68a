extension Migrations {
    /// Anonymous accounts (`AnonymousSignIn`): a flag on the user, and the index housekeeping walks to
    /// find the idle ones. Added, never changed: an older node neither reads nor writes the column (its
    /// `INSERT` gets the default, a permanent account), and its `UPDATE` of a user leaves it as it is.
    static let anonymousUsers = Migration(
        version: 20, name: "anonymous_users",
        statements: [
            "ALTER TABLE users ADD COLUMN is_anonymous BIGINT NOT NULL DEFAULT 0",
            "CREATE INDEX users_anonymous ON users (created_at) WHERE is_anonymous = 1",
        ])
}
