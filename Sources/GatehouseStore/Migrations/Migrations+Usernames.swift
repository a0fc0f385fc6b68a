extension Migrations {
    /// Usernames (`Username`), unique once normalized; accounts without one hold NULL, which a unique
    /// index on both engines lets many rows share. Added, never changed: an older node neither reads
    /// nor writes the column, and its `UPDATE` of a user leaves it as it is.
    static let usernames = Migration(
        version: 19, name: "usernames",
        statements: [
            "ALTER TABLE users ADD COLUMN username TEXT",
            "CREATE UNIQUE INDEX users_username ON users (username)",
        ])
}
