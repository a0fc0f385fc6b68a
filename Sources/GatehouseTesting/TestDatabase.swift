import Foundation
import Logging
import PostgresKit

/// The databases a test runs against: SQLite always, PostgreSQL when `GATEHOUSE_TEST_POSTGRES_URL`
/// names a server. Each test gets a database of its own, removed afterwards.
public enum TestDatabase: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    public var description: String { rawValue }

    public static let postgresURL: String? = {
        guard let url = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_POSTGRES_URL"], !url.isEmpty else {
            // Visible in the test log, once: these tests are skipped, not passed.
            FileHandle.standardError.write(
                Data(
                    "note: GATEHOUSE_TEST_POSTGRES_URL is not set; PostgreSQL variants of the persistence and server tests are skipped.\n"
                        .utf8))
            return nil
        }
        // The test database is on loopback. Without `sslmode` postgres-kit "prefers" TLS and builds a
        // TLS context (loading the system CA file) for every server a test starts; dozens of those
        // built at once crashed inside BoringSSL's PEM reader. Plain TCP, unless the URL says otherwise.
        guard var components = URLComponents(string: url), !(components.queryItems ?? []).contains(where: { $0.name == "sslmode" })
        else { return url }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "sslmode", value: "disable")]
        return components.string ?? url
    }()

    /// The databases available here.
    public static var available: [TestDatabase] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    /// A fresh, empty database; `cleanup` removes it.
    public func make() async throws -> (url: String, cleanup: @Sendable () async -> Void) {
        switch self {
        case .sqlite:
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let path = dir.appendingPathComponent("test.sqlite").path
            return ("sqlite://" + path, { try? FileManager.default.removeItem(at: dir) })
        case .postgres:
            guard let admin = Self.postgresURL else { throw TestDatabaseError.postgresUnavailable }
            let name = "gh_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
            try await Self.adminQuery(admin, "CREATE DATABASE \(name)")
            guard var components = URLComponents(string: admin) else { throw TestDatabaseError.postgresUnavailable }
            components.path = "/" + name
            let url = components.string!
            return (url, { try? await Self.adminQuery(admin, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") })
        }
    }

    private static func adminQuery(_ url: String, _ sql: String) async throws {
        let configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: Logger(label: "gatehouse-test-admin"))
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "gatehouse-test-admin"))
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}

public enum TestDatabaseError: Error {
    case postgresUnavailable
}
