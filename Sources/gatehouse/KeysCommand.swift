import ArgumentParser
import Foundation
import GatehouseCore

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage token-signing keys.", subcommands: [Rotate.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a new signing key and make it current; old keys stay in the JWKS until their tokens have expired.")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let persistence = try await store.open(logger: cliLogger())
            do {
                let secret = try ServerSecret.loadOrCreate(path: store.resolvedSecretFile)
                let keys = SigningKeys(persistence: persistence, secret: secret, clock: SystemWallClock())
                let kid = try await KeyAdmin(keys: keys).rotate()
                print("New signing key \(kid) is current.")
            } catch {
                await persistence.shutdown()
                throw error
            }
            await persistence.shutdown()
        }
    }
}
