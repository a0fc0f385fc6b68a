import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore

struct ClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients", abstract: "Manage the applications that sign users in.",
        discussion: "Settings (--set KEY=VALUE): \(ClientSettingsParser.keys.joined(separator: ", ")).",
        subcommands: [Create.self, List.self, Show.self, Update.self, Delete.self, RegistrationToken.self])

    struct RegistrationToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "registration-token",
            abstract: "Issue an initial access token for dynamic client registration (POST /oauth/register): one client, once.")
        @OptionGroup var store: StoreOptions
        @Option(help: "Seconds the token is valid for (60 to 2592000)") var ttl: Int = Int(ClientRegistration.initialTokenLifetime)

        func run() async throws {
            let persistence = try await store.open(logger: cliLogger())
            do {
                let (token, expires) = try await ClientRegistration(persistence: persistence, clock: SystemWallClock())
                    .issueInitialAccessToken(ttl: TimeInterval(ttl), actor: .commandLine)
                print(token)
                FileHandle.standardError.write(
                    Data("valid until \(ISO8601DateFormatter().string(from: expires)), for one registration\n".utf8))
            } catch let error as ClientAdminError {
                await persistence.shutdown()
                throw ValidationError(error.description)
            } catch {
                await persistence.shutdown()
                throw error
            }
            await persistence.shutdown()
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a client and print it as JSON (with its secret, once, for a confidential client).")
        @OptionGroup var store: StoreOptions
        @Option(help: "Display name") var name: String
        @Option(help: "Client id (default: random)") var id: String?
        @Option(help: "public or confidential") var type: ClientRecord.Kind = .public
        @Option(name: .customLong("redirect-uri"), help: "Allowed redirect URI, matched exactly; repeatable") var redirectURIs: [String] =
            []
        @Option(name: .customLong("scope"), help: "Allowed scope; repeatable (default: openid profile email offline_access)") var scopes:
            [String] = []
        @Option(name: .customLong("set"), help: "KEY=VALUE client setting; repeatable") var settings: [String] = []

        func run() async throws {
            try await withAdmin(store) { admin in
                let created = try await admin.create(
                    id: id, name: name, kind: type, redirectURIs: redirectURIs, scopes: scopes, settings: settings)
                try printJSON(ClientView(created.client, secret: created.secret))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List clients as JSON.")
        @OptionGroup var store: StoreOptions
        func run() async throws {
            try await withAdmin(store) { admin in try printJSON(try await admin.list().map { ClientView($0) }) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one client as JSON.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Client id") var id: String
        func run() async throws {
            try await withAdmin(store) { admin in try printJSON(ClientView(try await admin.show(id: id))) }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a client's settings, name, redirect URIs or scopes.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Client id") var id: String
        @Option(help: "New display name") var name: String?
        @Option(name: .customLong("redirect-uri"), help: "Replaces the redirect URIs; repeatable") var redirectURIs: [String] = []
        @Option(name: .customLong("scope"), help: "Replaces the allowed scopes; repeatable") var scopes: [String] = []
        @Option(name: .customLong("set"), help: "KEY=VALUE client setting; repeatable") var settings: [String] = []
        func run() async throws {
            try await withAdmin(store) { admin in
                let updated = try await admin.update(
                    id: id, settings: settings, name: name, redirectURIs: redirectURIs.isEmpty ? nil : redirectURIs,
                    scopes: scopes.isEmpty ? nil : scopes)
                try printJSON(ClientView(updated))
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a client.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Client id") var id: String
        func run() async throws {
            try await withAdmin(store) { admin in
                try await admin.delete(id: id)
                print("Deleted client \(id).")
            }
        }
    }
}

extension ClientRecord.Kind: ExpressibleByArgument {}

/// Opens the database, runs `body`, closes it on every path; admin errors become clean CLI errors.
func withAdmin(_ store: StoreOptions, _ body: (ClientAdmin) async throws -> Void) async throws {
    let persistence = try await store.open(logger: cliLogger())
    do {
        try await body(ClientAdmin(persistence: persistence, clock: SystemWallClock()))
    } catch let error as ClientAdminError {
        await persistence.shutdown()
        throw ValidationError(error.description)
    } catch {
        await persistence.shutdown()
        throw error
    }
    await persistence.shutdown()
}

func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
