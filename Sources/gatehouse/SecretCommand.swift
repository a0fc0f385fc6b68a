import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore

/// `gatehouse secret generate|status|rotate`: the server secret's ring (docs/operations.md, "Rotating
/// the server secret"). Editing the secret file is the operator's, on each node: these commands only
/// make a secret and reseal what the database holds.
struct SecretCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret",
        abstract: "Rotate the server secret: make one, reseal every secret at rest, check what still needs the old one.",
        subcommands: [Generate.self, Status.self, Rotate.self])

    struct Generate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new server secret (256 random bits, base64): a line for every node's secret file.")

        func run() async throws { print(ServerSecret.generateLine()) }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The secret file's fingerprints (current first) and how many sealed values each place holds under which.")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            try await withPersistence(store) { persistence in
                let secret = try await store.secret(for: persistence)
                let report = try await persistence.resealSecrets(secret, dryRun: true)
                SecretCommand.describe(report, secret: secret)
                if report.previous == 0, report.unopenable == 0, secret.fingerprints.count > 1 {
                    Swift.print("Nothing at rest needs the previous secret(s) any more: remove them from every node's secret file.")
                }
                if report.unopenable > 0 { throw ExitCode(2) }
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reseal every secret at rest under the secret file's current (first) secret, in batches, while nodes serve.",
            discussion: """
                Run it after every node's secret file has the new secret first and the old one after it, and every \
                node was restarted with that file. It reseals signing keys, authenticator-app secrets, the database's \
                stable keys, unsent messages and sign-ins in progress; it can run again at any time. Then, once \
                `gatehouse secret status` shows nothing under the old secret, remove it from every node's file.
                """)

        @OptionGroup var store: StoreOptions
        @Option(help: "Rows per transaction.") var batch = 200

        func run() async throws {
            guard batch > 0, batch <= 10_000 else { throw ValidationError("--batch must be between 1 and 10000") }
            try await withPersistence(store) { persistence in
                let secret = try await store.secret(for: persistence)
                var report = try await persistence.resealSecrets(secret, batchSize: batch)
                var resealed = report.previous
                // A row written meanwhile from what a node read before (a TOTP code's step) can bring
                // an old value back: passes repeat until one finds nothing to do.
                for _ in 0..<3 where report.previous > 0 {
                    report = try await persistence.resealSecrets(secret, batchSize: batch)
                    resealed += report.previous
                }
                let summary = try await persistence.resealSecrets(secret, dryRun: true)
                SecretCommand.describe(summary, secret: secret)
                let event = AdminActor.commandLine.event(
                    "secret.resealed", at: Date(),
                    reason:
                        "\(resealed) value(s) resealed under \(secret.fingerprints[0]); \(summary.previous) left under a previous secret")
                try await persistence.transaction { try await $0.audit.append(event) }
                Swift.print("Resealed \(resealed) value(s) under \(secret.fingerprints[0]).")
                if summary.unopenable > 0 {
                    throw ValidationError(
                        "\(summary.unopenable) value(s) are sealed under no secret in the secret file; add the secret they were sealed under and run again"
                    )
                }
                if summary.previous == 0, secret.fingerprints.count > 1 {
                    Swift.print(
                        "Nothing at rest needs the previous secret(s): remove them from every node's secret file and restart the nodes.")
                }
            }
        }
    }

    static func describe(_ report: ResealReport, secret: ServerSecret) {
        Swift.print(
            "secret file: current \(secret.fingerprints[0])"
                + (secret.fingerprints.count > 1 ? ", previous " + secret.fingerprints.dropFirst().joined(separator: ", ") : ""))
        for place in report.places {
            Swift.print(
                "\(place.name): \(place.current) under the current secret, \(place.previous) under a previous one, \(place.unopenable) under none"
            )
        }
    }
}
