import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage token-signing keys.", subcommands: [List.self, Rotate.self, Revoke.self])

    /// Opens the store and the keys, runs `body`, and closes the store either way.
    static func withKeys(_ store: StoreOptions, _ body: (KeyAdmin) async throws -> Void) async throws {
        let persistence = try await store.open(logger: cliLogger())
        do {
            let secret = try await store.secret(for: persistence)
            let clock = SystemWallClock()
            try await body(
                KeyAdmin(keys: SigningKeys(persistence: persistence, secret: secret, clock: clock), clock: clock))
        } catch {
            await persistence.shutdown()
            throw error
        }
        await persistence.shutdown()
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the published signing keys, current first.")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            try await KeysCommand.withKeys(store) { admin in
                let iso = ISO8601DateFormatter()
                for key in try await admin.list() {
                    let state = key.retiredAt == nil ? "current" : "retired, verifies until \(key.publishUntil.map(iso.string) ?? "-")"
                    print("\(key.kid)  \(key.algorithm)  created \(iso.string(from: key.createdAt))  \(state)")
                }
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Add a new signing key of each algorithm (RS256, ES256) and make it current; old keys stay in the JWKS until their tokens have expired."
        )

        @OptionGroup var store: StoreOptions

        func run() async throws {
            try await KeysCommand.withKeys(store) { admin in
                for kid in try await admin.rotate() { print("New signing key \(kid) is current.") }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop a signing key verifying anything now (a leaked key); a current key is replaced first.",
            discussion: """
                Running servers stop accepting its tokens within a minute (their key reload). Access tokens \
                it signed become invalid; refresh tokens keep working.
                """)

        @OptionGroup var store: StoreOptions
        @Argument(help: "The kid to revoke (see `gatehouse keys list`)") var kid: String

        func run() async throws {
            try await KeysCommand.withKeys(store) { admin in
                let replaced = try await admin.revoke(kid: kid)
                print(replaced ? "Revoked \(kid); a new current key replaces it." : "Revoked \(kid).")
            }
        }
    }
}
