import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseServer
import Logging

struct HooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hooks", abstract: "Check the hooks file and try its hooks.",
        subcommands: [Test.self, Secret.self, SampleEndpoint.self])

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a sample event to every hook of a point and print each verdict.",
            discussion:
                "POINT is one of \(HookPoint.beforePoints.map(\.rawValue).joined(separator: ", ")). The sample carries no real user.")
        @Argument(help: "The hook point") var point: String
        @Option(name: .customLong("hooks-file"), help: "The hooks file (GATEHOUSE_HOOKS_FILE)") var hooksFile: String?
        @Option(name: .customLong("client"), help: "The client id the sample event names") var client = "sample-client"
        @Option(help: "The identifier the sample event names") var identifier = "sample@example.com"

        func run() async throws {
            guard let parsed = HookPoint(rawValue: point), HookPoint.beforePoints.contains(parsed) else {
                throw ValidationError("unknown point \(point); use \(HookPoint.beforePoints.map(\.rawValue).joined(separator: ", "))")
            }
            guard let path = Env.value(hooksFile, "GATEHOUSE_HOOKS_FILE") else {
                throw ValidationError("no hooks file: pass --hooks-file or set GATEHOUSE_HOOKS_FILE")
            }
            let file: HooksConfiguration
            do { file = try HooksConfiguration.load(path: path) } catch { throw ValidationError("\(error)") }
            let outcomes = await HookTester.run(file, point: parsed, clientID: client, identifier: identifier, logger: cliLogger())
            if outcomes.isEmpty { print("No hook is configured for \(parsed.rawValue).") }
            for outcome in outcomes { print("\(outcome.url): \(outcome.verdict)") }
        }
    }

    struct SampleEndpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sample-endpoint",
            abstract: "Serve a sample hook (POST /hook: allow) and webhook receiver (POST /events: 204) to try hooks against.")
        @Option(help: "Address to listen on") var host = "127.0.0.1"
        @Option(help: "Port to listen on") var port = 9100
        @Option(help: "A claim to add at token issue, NAME=VALUE (repeatable)") var claim: [String] = []

        func run() async throws {
            var claims: [String: String] = [:]
            for pair in claim {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty else { throw ValidationError("--claim takes NAME=VALUE") }
                claims[parts[0]] = parts[1]
            }
            var logger = Logger(label: "gatehouse-sample-hook")
            logger.logLevel = .info
            try await SampleHookEndpoint.run(host: host, port: port, claims: claims, logger: logger)
        }
    }

    struct Secret: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a new signing secret (whsec_…) for a hook or webhook.")
        func run() { print(WebhookSecret.generate()) }
    }
}

struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "Inspect webhook deliveries and send dead ones again.", subcommands: [List.self, Retry.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List webhook deliveries, newest first (never their content).")
        @OptionGroup var store: StoreOptions
        @Option(help: "pending, sending, sent or dead (default: all)") var status: String?
        @Option(help: "How many to show") var limit = 50

        func run() async throws {
            try await OutboxCommand.List.show(store: store, status: status, channel: .webhook, limit: limit)
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a dead (or pending) webhook due now, with its attempts reset; it keeps its webhook-id.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "Delivery id (the webhook-id without msg_)") var id: String

        func run() async throws {
            let bare = id.hasPrefix("msg_") ? String(id.dropFirst(4)) : id
            try await OutboxCommand.Retry.revive(store: store, id: bare, channel: .webhook)
        }
    }
}
