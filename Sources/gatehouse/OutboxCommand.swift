import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseStore

struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "Inspect the outbox (mail, SMS, webhooks) and revive dead messages.",
        subcommands: [List.self, Retry.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List messages, newest first (never their content).")
        @OptionGroup var store: StoreOptions
        @Option(help: "pending, sending, sent or dead (default: all)") var status: String?
        @Option(help: "How many to show") var limit = 50

        func run() async throws {
            try await Self.show(store: store, status: status, channel: nil, limit: limit)
        }

        static func show(store: StoreOptions, status: String?, channel: OutboxMessage.Channel?, limit: Int) async throws {
            let filter: OutboxMessage.Status?
            if let status {
                guard let parsed = OutboxMessage.Status(rawValue: status) else {
                    throw ValidationError("status must be pending, sending, sent or dead")
                }
                filter = parsed
            } else {
                filter = nil
            }
            let persistence = try await store.open(logger: cliLogger())
            let rows: [OutboxMessage]
            do {
                rows = try await OutboxAdmin(persistence: persistence, clock: SystemWallClock()).list(
                    status: filter, channel: channel, limit: limit)
            } catch {
                await persistence.shutdown()
                throw error
            }
            await persistence.shutdown()
            print(
                "id                                   status   attempts kind              channel recipient                      created_at           last_error"
            )
            let iso = ISO8601DateFormatter()
            for row in rows {
                let columns = [
                    row.id.uuidString.lowercased(), row.status.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0),
                    String(row.attempts).padding(toLength: 8, withPad: " ", startingAt: 0),
                    row.kind.padding(toLength: 17, withPad: " ", startingAt: 0),
                    row.channel.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0),
                    row.recipient.padding(toLength: 30, withPad: " ", startingAt: 0), iso.string(from: row.createdAt),
                    row.lastError ?? "",
                ]
                print(columns.joined(separator: " "))
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a dead (or pending) message due now, with its attempts reset.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Message id") var id: String

        func run() async throws {
            try await Self.revive(store: store, id: id, channel: nil)
        }

        static func revive(store: StoreOptions, id: String, channel: OutboxMessage.Channel?) async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("\(id) is not a message id") }
            let persistence = try await store.open(logger: cliLogger())
            let revived: Bool
            do {
                let admin = OutboxAdmin(persistence: persistence, clock: SystemWallClock())
                if let channel, try await persistence.read({ try await $0.outbox.find(id: uuid) })?.channel != channel {
                    revived = false
                } else {
                    revived = try await admin.retry(id: uuid)
                }
            } catch {
                await persistence.shutdown()
                throw error
            }
            await persistence.shutdown()
            guard revived else { throw ValidationError("no dead or pending \(channel?.rawValue ?? "message") with id \(id)") }
            print("Message \(id) will be sent again.")
        }
    }
}
