import ArgumentParser
import Foundation
import GatehouseStore

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply pending migrations and exit; --check only says what they would do.",
        discussion: """
            A migration that only adds (expand) runs while nodes of any release serve. One that removes or changes \
            what older nodes use (contract, breaking) waits until no node older than it needs is alive, and says \
            which. Nodes report themselves every 30 s; nodes of releases before rolling upgrades are not seen.
            """)

    @OptionGroup var store: StoreOptions
    @Flag(help: "Apply nothing: show the pending migrations, what each needs of running nodes, and the nodes seen.")
    var check = false

    func run() async throws {
        let persistence = try await SQLPersistence.open(
            try DatabaseURL(store.resolvedDatabaseURL, allowPlaintextToRemote: Env.flag("GATEHOUSE_DATABASE_INSECURE")),
            logger: cliLogger(), migrateUpTo: 0)
        let outcome: Result<(MigrationPlan, Set<Int>), any Error>
        do {
            let plan = try await persistence.migrationPlan()
            if !check, let tooNew = plan.tooNew { throw tooNew }
            outcome = .success((plan, check ? [] : Set(try await persistence.applyMigrations())))
        } catch {
            outcome = .failure(error)
        }
        await persistence.shutdown()
        let (plan, applied) = try outcome.get()
        if check {
            Self.describe(plan)
            if plan.blocked || plan.tooNew != nil { throw ExitCode(3) }
            return
        }
        for step in plan.pending where applied.contains(step.version) {
            let note = step.minimumNode.map { ": nodes older than schema \($0) cannot serve beside it" } ?? ""
            print("Applied \(step.version) \(step.name) (\(step.kind ?? "?"))\(note).")
        }
        print(applied.isEmpty ? "Nothing to apply: the database is at schema \(plan.databaseVersion)." : "Migrations applied.")
    }

    static func describe(_ plan: MigrationPlan) {
        print("schema: the database is at \(plan.databaseVersion), this release at \(plan.releaseVersion)")
        if let nodes = plan.liveNodes {
            let summary = Dictionary(grouping: nodes, by: \.schemaVersion).sorted { $0.key < $1.key }
                .map { "\($0.value.count) at schema \($0.key)" }.joined(separator: ", ")
            print("nodes seen in the last 90 s: \(nodes.isEmpty ? "none" : summary)")
        } else {
            print("nodes: not reported by this database's release (nodes report themselves from schema 15 on)")
        }
        if plan.pending.isEmpty { print("pending: none") }
        for step in plan.pending {
            let rule =
                step.minimumNode.map { "every node must run schema \($0) or newer" } ?? "runs while nodes of any release serve"
            print("pending \(step.version) \(step.name) (\(step.kind ?? "?")): \(rule)")
            for node in step.blockedBy {
                print(
                    "  waits for \(node.host) (schema \(node.schemaVersion), node \(node.id.prefix(8)), seen \(Int(-node.seenAt.timeIntervalSinceNow)) s ago)"
                )
            }
        }
        for step in plan.newer {
            print(
                "applied by a newer release: \(step.version) \(step.name)"
                    + (step.minimumNode.map { ", needs nodes of schema \($0) or newer" } ?? ""))
        }
        if let tooNew = plan.tooNew {
            print("verdict: this release cannot serve this database: \(tooNew)")
        } else if plan.blocked {
            print(
                "verdict: upgrade or stop the nodes above first; then `gatehouse migrate` (or starting a node of this release) applies the rest"
            )
        } else if !plan.pending.isEmpty {
            print("verdict: `gatehouse migrate` (or starting a node of this release) can apply them now, while nodes serve")
        } else {
            print("verdict: nothing to do")
        }
    }
}
