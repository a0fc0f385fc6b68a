import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import Logging

/// The options every command that opens the database shares.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help:
            "sqlite:///path/file.sqlite or postgres://user:pass@host:port/db (GATEHOUSE_DATABASE_URL; default sqlite://./gatehouse.sqlite)")
    var databaseURL: String?

    @Option(
        name: .customLong("secret-file"),
        help:
            "File with the server secrets that seal signing keys and other secrets, current first, one per line; created 0600 if missing (GATEHOUSE_SECRET_FILE; default ./gatehouse.secret)"
    )
    var secretFile: String?

    var resolvedDatabaseURL: String { Env.value(databaseURL, "GATEHOUSE_DATABASE_URL") ?? "sqlite://./gatehouse.sqlite" }
    var resolvedSecretFile: String { Env.value(secretFile, "GATEHOUSE_SECRET_FILE") ?? "./gatehouse.secret" }

    func open(logger: Logger) async throws -> SQLPersistence {
        try await SQLPersistence.open(
            try DatabaseURL(resolvedDatabaseURL, allowPlaintextToRemote: Env.flag("GATEHOUSE_DATABASE_INSECURE")), logger: logger)
    }

    /// The secret file's ring with the database's stable keys; refused, saying what to do, when the
    /// file holds none of the secrets the database is sealed under.
    func secret(for persistence: SQLPersistence) async throws -> ServerSecret {
        try await persistence.adoptStableKeys(try ServerSecret.loadOrCreate(path: resolvedSecretFile), now: Date())
    }
}

/// Quiet logger for the admin commands: their output is the answer.
func cliLogger() -> Logger {
    var logger = Logger(label: "gatehouse")
    logger.logLevel = .warning
    return logger
}
