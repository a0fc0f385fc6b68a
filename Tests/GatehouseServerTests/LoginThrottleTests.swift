import Argon2
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// Sign-in attempts are counted before they are checked, per account and address, with a backstop.
@Suite("Login throttle")
struct LoginThrottleTests {
    static func wrong(_ client: some TestClientProtocol, _ email: String, from ip: String? = nil) async throws -> Int {
        var headers: HTTPFields = [:]
        if let ip { headers[HTTPField.Name("X-Forwarded-For")!] = ip }
        let response = try await client.json(
            .post, "/v1/login", ["client_id": TestServer.openClient, "email": email, "password": "wrong password!"], headers: headers)
        return Int(response.status.code)
    }

    static func right(_ client: some TestClientProtocol, _ user: SignedIn, from ip: String? = nil) async throws -> Int {
        var headers: HTTPFields = [:]
        if let ip { headers[HTTPField.Name("X-Forwarded-For")!] = ip }
        let response = try await client.json(
            .post, "/v1/login", ["client_id": TestServer.openClient, "email": user.email, "password": user.password], headers: headers)
        return Int(response.status.code)
    }

    @Test("40 wrong passwords at once against a limit of 10: exactly 10 are checked", arguments: TestDatabase.available)
    func concurrentGuesses(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 { group.addTask { try await Self.wrong(client, user.email) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 401 }.count == 10, "\(statuses)")
            #expect(statuses.filter { $0 == 429 }.count == 30)
            // The right password is refused too until the window passes.
            #expect(try await Self.right(client, user) == 429)
        }
    }

    @Test(
        "Two nodes on one PostgreSQL: 40 wrong passwords split across both, exactly 10 checked",
        .enabled(if: TestDatabase.postgresURL != nil))
    func twoNodes() async throws {
        try await withTwoNodes { one, two in
            let user = try await signUp(one)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    let node: any TestClientProtocol = index.isMultiple(of: 2) ? one : two
                    group.addTask { try await Self.wrong(node, user.email) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 401 }.count == 10, "\(statuses)")
            #expect(statuses.filter { $0 == 429 }.count == 30)
        }
    }

    /// A server with one hashing place and no queue, where an account locks after 3 failures. Three
    /// concurrent `attempt`s while the place is held (as a sign-in in progress holds it) are all
    /// refused with 503; once it is free, one more wrong `attempt` is checked and counted. Then `body`.
    private static func threeRefusedThenOneChecked(
        _ body: @escaping @Sendable (any TestClientProtocol, SignedIn) async throws -> Void,
        attempt: @escaping @Sendable (any TestClientProtocol, SignedIn, Int) async throws -> Int
    ) async throws {
        let server = try await TestServer.startOpen(.sqlite) {
            $0.hashingThreads = 1
            $0.hashingQueue = 0
            $0.maxFailuresPerAccount = 3
        }
        try await server.withRouter { client in
            let user = try await signUp(client)
            let statuses = try await server.services.hasher.whilePlaceHeld {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for i in 0..<3 { group.addTask { try await attempt(client, user, i) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(statuses == [503, 503, 503], "\(statuses)")
            // Had the three 503s been counted, the account would be at its limit and this would be 429.
            let checked = try await attempt(client, user, 3)
            #expect((400..<500).contains(checked) && checked != 429, "\(checked)")
            try await body(client, user)
        }
    }

    @Test("A sign-in refused for capacity (503) is not counted as a failure")
    func busyIsNotAFailure() async throws {
        try await Self.threeRefusedThenOneChecked(
            { client, user in
                // One failure counted against a limit of 3: the right password still signs in.
                let status = try await Self.right(client, user)
                #expect(status == 200)
            }, attempt: { client, user, _ in try await Self.wrong(client, user.email) })
    }

    @Test("A password change whose current-password check is refused for capacity (503) is not counted as a failure")
    func busyPasswordChangeIsNotAFailure() async throws {
        try await Self.threeRefusedThenOneChecked(
            { client, user in
                // One failure counted against a limit of 3: the right current password still changes it.
                let changed = try await client.json(
                    .put, "/v1/me/password", ["current_password": user.password, "password": "a new long secret"], bearer: user.accessToken)
                #expect(changed.status.code < 300, "\(changed.text)")
            },
            attempt: { client, user, i in
                try await Int(
                    client.json(
                        .put, "/v1/me/password", ["current_password": "wrong guess \(i)", "password": "a new long secret"],
                        bearer: user.accessToken
                    ).status.code)
            })
    }

    @Test(
        "THR-4: a right password refused after its check is no failure: six sign-ins of an address not yet verified (403) and six that a storage fault ends in the sign-in's last transaction, against a limit of 3, never meet 429; a wrong password is still checked, and once the fault is gone the right one signs in"
    )
    func rightPasswordRefusedIsNotAFailure() async throws {
        let server = try await TestServer.startOpen(.sqlite) { $0.maxFailuresPerAccount = 3 }
        try await server.withRouter { client in
            // The default client verifies addresses before it signs anyone in.
            let waiting = "unverified@example.com"
            let signup = try await client.json(.post, "/v1/signup", ["email": waiting, "password": "correct horse battery"])
            #expect(signup.status == .created, "\(signup.text)")
            for _ in 0..<6 {
                let login = try await client.json(.post, "/v1/login", ["email": waiting, "password": "correct horse battery"])
                #expect(login.status == .forbidden && login.string("code") == "email_not_verified", "\(login.text)")
            }
            #expect(try await Self.wrong(client, waiting) == 401)

            // Recording the sign-in fails, after the password was checked: the transaction that would
            // start the session rolls back, as a storage fault there would.
            let user = try await signUp(client)
            try await server.server.persistence.executeRaw([
                """
                CREATE TRIGGER injected_login_fault BEFORE UPDATE OF last_login_at ON users
                BEGIN SELECT RAISE(ABORT, 'injected storage fault'); END
                """
            ])
            for _ in 0..<6 {
                let status = try await Self.right(client, user)
                #expect(status >= 500, "the injected fault did not end the sign-in: \(status)")
            }
            try await server.server.persistence.executeRaw(["DROP TRIGGER injected_login_fault"])
            #expect(try await Self.wrong(client, user.email) == 401)
            #expect(try await Self.right(client, user) == 200)
        }
    }

    @Test("A stranger's guesses lock out the stranger's address, not the owner's; the backstop stops many addresses")
    func perAddress() async throws {
        let server = try await TestServer.startOpen(.sqlite) {
            $0.trustForwardedFor = true
            $0.maxFailuresPerAccountTotal = 25
        }
        try await server.withRouter { client in
            let user = try await signUp(client)
            for _ in 0..<10 { #expect(try await Self.wrong(client, user.email, from: "203.0.113.7") == 401) }
            #expect(try await Self.wrong(client, user.email, from: "203.0.113.7") == 429)
            #expect(try await Self.right(client, user, from: "203.0.113.7") == 429)
            // The owner, elsewhere, signs in.
            #expect(try await Self.right(client, user, from: "198.51.100.9") == 200)
            // Another address gets its own ten; then the account-wide backstop (25) is reached.
            for _ in 0..<10 { #expect(try await Self.wrong(client, user.email, from: "192.0.2.1") == 401) }
            for _ in 0..<5 { #expect(try await Self.wrong(client, user.email, from: "192.0.2.2") == 401) }
            #expect(try await Self.wrong(client, user.email, from: "192.0.2.3") == 429)
            #expect(try await Self.right(client, user, from: "198.51.100.9") == 429)
        }
    }

    @Test("Successful sign-ins are not failures: they never fill an address's counter; a success resets only its pair")
    func successesGiveBack() async throws {
        let server = try await TestServer.startOpen(.sqlite) {
            $0.trustForwardedFor = true
            $0.maxFailuresPerIP = 3
            $0.maxFailuresPerAccount = 3
        }
        try await server.withRouter { client in
            let user = try await signUp(client)
            for _ in 0..<8 { #expect(try await Self.right(client, user, from: "198.51.100.20") == 200) }
            // Two failures, then a success: the pair starts over, but the address keeps its two failures.
            for _ in 0..<2 { #expect(try await Self.wrong(client, user.email, from: "198.51.100.20") == 401) }
            #expect(try await Self.right(client, user, from: "198.51.100.20") == 200)
            #expect(try await Self.wrong(client, user.email, from: "198.51.100.20") == 401)
            // The address's fourth failure is over its limit of 3, though the pair has only one.
            #expect(try await Self.wrong(client, user.email, from: "198.51.100.20") == 429)
        }
    }

    @Test("THR-3: failures from one address count against its block for unknown identifiers too; successes from there do not")
    func addressCountsFailuresOnly() async throws {
        let server = try await TestServer.startOpen(.sqlite) {
            $0.trustForwardedFor = true
            $0.maxFailuresPerIP = 3
        }
        try await server.withRouter { client in
            let user = try await signUp(client)
            // Many successes from the block never fill it.
            for _ in 0..<5 { #expect(try await Self.right(client, user, from: "198.51.100.30") == 200) }
            // Three unknown identifiers fail and count; the fourth attempt, for anyone, is refused there.
            for index in 0..<3 { #expect(try await Self.wrong(client, "nobody\(index)@example.com", from: "198.51.100.30") == 401) }
            #expect(try await Self.wrong(client, "nobody9@example.com", from: "198.51.100.30") == 429)
            #expect(try await Self.right(client, user, from: "198.51.100.30") == 429)
            // Another block is untouched.
            #expect(try await Self.right(client, user, from: "198.51.100.31") == 200)
        }
    }
}
