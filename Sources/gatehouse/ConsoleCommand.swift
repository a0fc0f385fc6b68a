import ArgumentParser
import Foundation
import GatehouseCore

struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console", abstract: "The admin web console.", subcommands: [Link.self])

    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print a one-time link that signs an operator in to the admin console (good for 10 minutes; the session lasts 8 hours).",
            discussion: """
                Whoever can run this on the server's machine already holds the database, so the link is the console's \
                sign-in: no console password to leak or guess. The link and the session are audited under console:NAME.
                """)

        @OptionGroup var store: StoreOptions
        @Option(help: "Who will use the link (letters, digits, . _ - @): the audit log names actions console:NAME") var `operator`: String
        @Option(name: .customLong("public-url"), help: "The server's public URL (GATEHOUSE_PUBLIC_URL; default http://127.0.0.1:8080)")
        var publicURL: String?

        func run() async throws {
            var base = Env.value(publicURL, "GATEHOUSE_PUBLIC_URL") ?? "http://127.0.0.1:8080"
            while base.hasSuffix("/") { base.removeLast() }
            try await withPersistence(store) { persistence in
                let token = try await ConsoleAccess(persistence: persistence, clock: SystemWallClock()).issueLink(operatorName: `operator`)
                print("\(base)/admin/console/enter?token=\(token)")
            }
        }
    }
}
