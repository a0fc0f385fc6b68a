import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseStore
import GatehouseTesting
import Testing

/// Many transactions at once: on SQLite they share commits (group commit); whatever the database,
/// one caller's failure must neither undo nor fail anyone else's work.
@Suite("Concurrent transactions")
struct GroupCommitTests {
    struct Planned: Error, Equatable { let index: Int }

    @Test("A failing transaction among 60 concurrent ones leaves the other 48 committed", arguments: TestDatabase.available)
    func failureIsolated(database: TestDatabase) async throws {
        try await PersistenceContractTests.withPersistence(database) { db in
            let outcomes = await withTaskGroup(of: (Int, Result<UUID, any Error>).self) { group in
                for index in 0..<60 {
                    group.addTask {
                        let user = PersistenceContractTests.user("concurrent-\(index)@example.com")
                        do {
                            let id = try await db.transaction { stores -> UUID in
                                try await stores.users.insert(user)
                                // Every fifth one fails after writing: its row must vanish.
                                if index % 5 == 0 { throw Planned(index: index) }
                                return user.id
                            }
                            return (index, .success(id))
                        } catch {
                            return (index, .failure(error))
                        }
                    }
                }
                var all: [Int: Result<UUID, any Error>] = [:]
                for await (index, outcome) in group { all[index] = outcome }
                return all
            }
            for (index, outcome) in outcomes {
                switch outcome {
                case .success(let id):
                    #expect(index % 5 != 0)
                    let found = try await db.read { try await $0.users.find(id: id) }
                    #expect(found?.email == "concurrent-\(index)@example.com")
                case .failure(let error):
                    #expect(index % 5 == 0)
                    #expect(error as? Planned == Planned(index: index))
                }
            }
            #expect(try await db.read { try await $0.users.count() } == 48)
            #expect(try await db.read { try await $0.users.find(email: "concurrent-0@example.com") } == nil)
        }
    }

    @Test("A transaction's result reaches only its own caller", arguments: TestDatabase.available)
    func resultsRouted(database: TestDatabase) async throws {
        try await PersistenceContractTests.withPersistence(database) { db in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let echoed = try await db.transaction { stores -> String in
                            try await stores.users.insert(PersistenceContractTests.user("echo-\(index)@example.com"))
                            return "echo-\(index)"
                        }
                        #expect(echoed == "echo-\(index)")
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test("A read sees every transaction that committed before it began, while other reads run", arguments: TestDatabase.available)
    func readYourWrites(database: TestDatabase) async throws {
        try await PersistenceContractTests.withPersistence(database) { db in
            // Enough rows that a background count takes a while on its connection.
            try await db.transaction { stores in
                for i in 0..<3000 { try await stores.users.insert(PersistenceContractTests.user("filler-\(i)@example.com")) }
            }
            let missed = try await withThrowingTaskGroup(of: Int.self) { group in
                // Background reads keep every reader connection busy with statements of their own.
                for _ in 0..<8 {
                    group.addTask {
                        for _ in 0..<40 { _ = try await db.read { try await $0.users.count() } }
                        return 0
                    }
                }
                for index in 0..<120 {
                    group.addTask {
                        let user = PersistenceContractTests.user("fresh-\(index)@example.com")
                        try await db.transaction { try await $0.users.insert(user) }
                        return try await db.read { try await $0.users.find(id: user.id) } == nil ? 1 : 0
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(missed == 0)
        }
    }
}
