import ArgumentParser
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseStore

// `gatehouse users list|show|sessions|export|disable|enable|sign-out|delete|factors|reset-factors|remove-passkey`: the admin API's user
// routes on the server's own machine, through the same core code (``UserAdmin``), audited with actor
// `cli`. Creating users and sending reset mail need the running server (the admin API).

/// Opens the store, runs `body` with a ``UserAdmin``, closes the store either way; a core refusal
/// becomes the command's error message.
func withUserAdmin(_ store: StoreOptions, _ body: (UserAdmin) async throws -> Void) async throws {
    try await withPersistence(store) { persistence in
        try await body(UserAdmin(persistence: persistence, clock: SystemWallClock(), secret: try await store.secret(for: persistence)))
    }
}

/// Opens the store, runs `body`, closes the store either way; a core refusal (``GatehouseError``)
/// becomes the command's error message.
func withPersistence(_ store: StoreOptions, _ body: (SQLPersistence) async throws -> Void) async throws {
    let persistence = try await store.open(logger: cliLogger())
    do {
        try await body(persistence)
    } catch let error as GatehouseError {
        await persistence.shutdown()
        throw ValidationError(error.detail ?? error.title)
    } catch {
        await persistence.shutdown()
        throw error
    }
    await persistence.shutdown()
}

struct UserID: ExpressibleByArgument {
    let id: UUID
    init?(argument: String) {
        guard let id = UUID(uuidString: argument) else { return nil }
        self.id = id
    }
}

extension UsersCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Search users (oldest first) and print them as JSON Lines.")
        @OptionGroup var store: StoreOptions
        @Option(help: "Email prefix") var email: String?
        @Option(help: "Phone prefix (E.164)") var phone: String?
        @Option(help: "Users with a credential of this type: password, device_authenticator") var provider: String?
        @Option(help: "active or disabled") var state: String?
        @Option(help: "At most this many") var limit = 100

        func run() async throws {
            var search = UserSearch(limit: max(1, min(limit, 1000)))
            search.email = email
            search.phone = phone
            search.credentialType = provider
            if let state {
                guard state == "active" || state == "disabled" else { throw ValidationError("--state is active or disabled") }
                search.state = UserState(rawValue: state)
            }
            try await withUserAdmin(store) { admin in
                let encoder = WireCoding.encoder()
                for user in try await admin.search(search) {
                    print(String(decoding: try encoder.encode(user.wire), as: UTF8.self))
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one user as JSON.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        func run() async throws {
            try await withUserAdmin(store) { admin in try printJSON(try await admin.show(id: user.id).wire) }
        }
    }

    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a user's sessions, live and ended, newest first, as JSON.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        func run() async throws {
            try await withUserAdmin(store) { admin in
                try printJSON(try await admin.sessions(id: user.id).map(UserExport.Session.init))
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print everything kept about one user as JSON (a data-subject request): no hash, key or secret.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        func run() async throws {
            try await withUserAdmin(store) { admin in try printJSON(try await admin.export(id: user.id, actor: .commandLine)) }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a user: sign-in refused, every session ended.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        func run() async throws {
            try await withUserAdmin(store) { admin in
                try printJSON(try await admin.setDisabled(id: user.id, true, actor: .commandLine).wire)
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled user.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        func run() async throws {
            try await withUserAdmin(store) { admin in
                try printJSON(try await admin.setDisabled(id: user.id, false, actor: .commandLine).wire)
            }
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-out", abstract: "End every session and browser session of a user.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        func run() async throws {
            try await withUserAdmin(store) { admin in
                print(#"{"revoked_sessions": \#(try await admin.signOut(id: user.id, actor: .commandLine))}"#)
            }
        }
    }

    struct Factors: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's second factors (authenticator apps, recovery codes left) as JSON: never a secret.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        func run() async throws {
            try await withUserAdmin(store) { admin in try printJSON(try await admin.factors(id: user.id)) }
        }
    }

    struct ResetFactors: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-factors",
            abstract: "Remove a user's authenticator apps and recovery codes and end their sessions (a lost phone).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        @Flag(help: "Required: the user signs in with one factor until they enrol again") var yes = false
        func run() async throws {
            guard yes else { throw ValidationError("resetting factors weakens the account until the user enrols again: add --yes") }
            try await withUserAdmin(store) { admin in
                print(#"{"removed_factors": \#(try await admin.resetFactors(id: user.id, actor: .commandLine))}"#)
            }
        }
    }

    struct RemovePasskey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-passkey",
            abstract: "Remove one of a user's passkeys (its id from `users factors`) and end the sessions it started.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        @Argument(help: "The passkey's id") var passkey: String
        func run() async throws {
            try await withUserAdmin(store) { admin in
                try await admin.removePasskey(id: user.id, passkeyID: passkey, actor: .commandLine)
                print(#"{"removed": true}"#)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user and everything kept for them (credentials, sessions, codes, pending mail).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "User id") var user: UserID
        @Flag(help: "Required: deletion cannot be undone") var yes = false
        func run() async throws {
            guard yes else { throw ValidationError("deleting a user cannot be undone: add --yes") }
            try await withUserAdmin(store) { admin in try await admin.delete(id: user.id, actor: .commandLine) }
        }
    }
}
