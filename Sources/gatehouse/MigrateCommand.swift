import ArgumentParser
import Foundation
import GatehouseStore

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Apply pending migrations and exit.")

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let persistence = try await store.open(logger: cliLogger())
        await persistence.shutdown()
        print("Migrations applied.")
    }
}
