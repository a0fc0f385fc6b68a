import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// A session's refresh tokens as a chain in its own row: storage that does not grow with refreshes,
/// reuse of any earlier token still ending the session, and the move of sessions started on token
/// rows (by an older node) onto a chain.
@Suite("Refresh chains")
struct RefreshChainTests {
    /// What one session occupies: its token rows, and bytes. PostgreSQL: the live row's size
    /// (`pg_column_size`) and its token rows'. SQLite: the database's pages in bytes, as the file holds
    /// them (no other writer runs during these tests).
    struct Storage: Equatable, CustomStringConvertible {
        var tokenRows: Int
        var bytes: Int
        var description: String { "\(tokenRows) token rows, \(bytes) bytes" }
    }

    static func storage(_ server: TestServer, _ database: TestDatabase, session: String) async throws -> Storage {
        let id = session.lowercased()
        let rows = try await server.server.persistence.rawIntegers("SELECT COUNT(*) FROM refresh_tokens WHERE session_id = '\(id)'")[0]
        switch database {
        case .postgres:
            let bytes = try await server.server.persistence.rawIntegers(
                """
                SELECT (SELECT pg_column_size(s.*) FROM sessions s WHERE s.id = '\(id)')
                     + COALESCE((SELECT SUM(pg_column_size(t.*)) FROM refresh_tokens t WHERE t.session_id = '\(id)'), 0)
                """)[0]
            return Storage(tokenRows: rows, bytes: bytes)
        case .sqlite:
            let pages = try await server.server.persistence.rawIntegers("PRAGMA page_count")[0]
            let size = try await server.server.persistence.rawIntegers("PRAGMA page_size")[0]
            return Storage(tokenRows: rows, bytes: pages * size)
        }
    }

    @Test(
        "RC-1: a session refreshed 1,000 times holds the rows and bytes it held after one refresh; after the grace interval any earlier token of the chain ends the session, and with it the newest tokens",
        arguments: TestDatabase.available)
    func thousandRefreshes(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            var tokens = [user.refreshToken]
            var access = user.accessToken
            for n in 1...1000 {
                let answer = try await refresh(client, tokens[tokens.count - 1])
                guard answer.status == .ok, let next = answer.string("refresh_token"), let nextAccess = answer.string("access_token") else {
                    Issue.record("refresh \(n) answered \(answer.status): \(answer.text)")
                    return
                }
                tokens.append(next)
                access = nextAccess
                if n == 1 {
                    server.clock.advance(by: 11)
                    #expect(try await Self.storage(server, database, session: user.sessionID).tokenRows == 0)
                }
            }
            #expect(Set(tokens).count == 1001, "every token of the chain differs")
            #expect(tokens.allSatisfy { $0.utf8.count <= 256 })
            server.clock.advance(by: 11)
            let afterThousand = try await Self.storage(server, database, session: user.sessionID)

            // The measure sees growth where there is some: a session on token rows, as an older node
            // starts them, grows by a row per refresh.
            server.server.services.refreshChains.set(open: false)
            let rowsUser = try await signUp(client)
            var rowToken = rowsUser.refreshToken
            let rowsBefore = try await Self.storage(server, database, session: rowsUser.sessionID)
            for _ in 1...50 { rowToken = try #require(try await refresh(client, rowToken).string("refresh_token")) }
            let rowsAfter = try await Self.storage(server, database, session: rowsUser.sessionID)
            #expect(rowsAfter.tokenRows == rowsBefore.tokenRows + 50)
            server.server.services.refreshChains.set(open: true)

            // Against a session that refreshed once, measured the same way.
            let onceUser = try await signUp(client)
            let once = try #require(try await refresh(client, onceUser.refreshToken).string("refresh_token"))
            server.clock.advance(by: 11)
            _ = once
            let afterOne = try await Self.storage(server, database, session: onceUser.sessionID)
            #expect(afterThousand.tokenRows == 0 && afterOne.tokenRows == 0, "\(afterThousand) \(afterOne)")
            switch database {
            case .postgres:
                #expect(afterThousand.bytes == afterOne.bytes, "\(afterThousand) against \(afterOne)")
            case .sqlite:
                // The whole file: the thousand refreshes added no page. What the file gained came with the
                // two later sessions and the fifty row refreshes.
                #expect(afterThousand.bytes < afterOne.bytes, "\(afterThousand) against \(afterOne)")
            }

            // The 500th token, long rotated: a thief's copy. The session ends; its newest tokens die too.
            let replay = try await refresh(client, tokens[500])
            #expect(replay.status == .badRequest)
            #expect(replay.string("error") == "invalid_grant")
            #expect(replay.string("error_description")?.contains("already used") == true, "\(replay.text)")
            let sessionID = try #require(UUID(uuidString: user.sessionID))
            let ended = try await server.persistence.read { try await $0.sessions.find(id: sessionID) }
            #expect(ended?.revokeReason == RevokeReason.refreshTokenReuse.rawValue)
            #expect(try await refresh(client, tokens[1000]).status == .badRequest)
            #expect(try await client.json(.get, "/v1/me", bearer: access).status == .unauthorized)
        }
    }

    @Test(
        "RC-2: a chain token altered in its MAC, or of a generation the session never reached, is not valid and ends nothing; the token before the current one inside the grace interval gives the current one again, after it ends the session; revocation and introspection know the chain",
        arguments: TestDatabase.available)
    func forgedAndGrace(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            let user = try await signUp(client)
            let sessionID = try #require(UUID(uuidString: user.sessionID))
            let t1 = try #require(try await refresh(client, user.refreshToken).string("refresh_token"))
            #expect(t1.hasPrefix("gh_r_c."))

            // One character of the MAC changed; a generation ahead made with the server's own secret (a
            // database restored from an older backup); the current generation made with the secret and
            // the session id but not the chain's seed (what the secret alone can make); the session id
            // of another session; another seed; a leading zero; bad shapes.
            let parts = t1.dropFirst("gh_r_c.".count).split(separator: ".").map(String.init)
            try #require(parts.count == 4)
            var altered = Array(t1)
            altered[altered.count - 2] = altered[altered.count - 2] == "A" ? "B" : "A"
            let serverSecret = server.server.services.secret
            let ahead = serverSecret.refreshChainToken(try #require(RefreshChainToken(parsing: t1)).generation(7))
            let seedless = serverSecret.refreshChainToken(RefreshChainToken.first(of: sessionID).generation(1))
            let other = try await signUp(client)
            let otherParts = other.refreshToken.dropFirst("gh_r_c.".count).split(separator: ".").map(String.init)
            let swapped = ["gh_r_c." + otherParts[0], parts[1], parts[2], parts[3]].joined(separator: ".")
            let reseeded = ["gh_r_c." + parts[0], parts[1], otherParts[2], parts[3]].joined(separator: ".")
            let leadingZero = ["gh_r_c." + parts[0], "0" + parts[1], parts[2], parts[3]].joined(separator: ".")
            for forged in [
                String(altered), ahead, seedless, swapped, reseeded, leadingZero, t1 + "x", "gh_r_c." + "." + "1.", "gh_r_c.",
                t1 + ".AAAA",
            ] {
                let answer = try await refresh(client, forged)
                #expect(answer.status == .badRequest, "\(forged): \(answer.text)")
                #expect(answer.string("error_description") == "The refresh token is not valid.", "\(forged): \(answer.text)")
            }
            let live = try await server.persistence.read { try await $0.sessions.find(id: sessionID) }
            #expect(live?.revokedAt == nil)

            // Introspection (a confidential client asks): the current token is active, an earlier one not.
            let t2Answer = try await refresh(client, t1)
            let t2 = try #require(t2Answer.string("refresh_token"))
            #expect(try await refresh(client, t1).string("refresh_token") == t2, "a retry inside the grace gets the same token")
            let backend = try await ClientAdmin(persistence: server.persistence, clock: server.clock)
                .create(id: nil, name: "backend", kind: .confidential, redirectURIs: [], scopes: [], settings: [])
            let secret = try #require(backend.secret)
            let active = try await client.form("/oauth/introspect", ["token": t2], basic: (backend.client.id, secret))
            #expect(active.object["active"] as? Bool == true, "\(active.text)")
            #expect(active.string("sid") == user.sessionID.lowercased())
            #expect(active.string("token_type") == "refresh_token")
            let rotated = try await client.form("/oauth/introspect", ["token": t1], basic: (backend.client.id, secret))
            #expect(rotated.object["active"] as? Bool == false)

            // After the grace interval the token before the current one is a reuse.
            server.clock.advance(by: 11)
            let replay = try await refresh(client, t1)
            #expect(replay.string("error_description")?.contains("already used") == true, "\(replay.text)")
            #expect(try await refresh(client, t2).status == .badRequest)

            // Revoking any genuine token of a chain ends its session; a forged one ends nothing.
            let third = try await signUp(client)
            let u1 = try #require(try await refresh(client, third.refreshToken).string("refresh_token"))
            var forgedOld = Array(third.refreshToken)
            forgedOld[forgedOld.count - 3] = forgedOld[forgedOld.count - 3] == "A" ? "B" : "A"
            #expect(try await client.form("/oauth/revoke", ["token": String(forgedOld), "client_id": TestServer.openClient]).status == .ok)
            #expect(try await refresh(client, u1).status == .ok)
            #expect(
                try await client.form("/oauth/revoke", ["token": third.refreshToken, "client_id": TestServer.openClient]).status == .ok)
            let thirdID = try #require(UUID(uuidString: third.sessionID))
            let revoked = try await server.persistence.read { try await $0.sessions.find(id: thirdID) }
            #expect(revoked?.revokeReason == RevokeReason.tokenRevoked.rawValue)
        }
    }

    @Test(
        "RC-3: a session started on token rows (the gate closed, as beside a node of an older release) keeps rows while the gate is closed, moves onto a chain at its first refresh once every node runs chains and grows no more, and its exchanged row token reused after the grace interval ends the session",
        arguments: TestDatabase.available)
    func rowsMoveOntoChain(database: TestDatabase) async throws {
        let server = try await TestServer.startOpen(database)
        try await server.withRouter { client in
            server.server.services.refreshChains.set(open: false)
            let user = try await signUp(client)
            #expect(!user.refreshToken.hasPrefix("gh_r_c."))
            let r1 = try #require(try await refresh(client, user.refreshToken).string("refresh_token"))
            #expect(!r1.hasPrefix("gh_r_c."), "with the gate closed a row token's successor is a row")
            #expect(try await Self.storage(server, database, session: user.sessionID).tokenRows == 2)

            server.server.services.refreshChains.set(open: true)
            let moved = try await refresh(client, r1)
            let c1 = try #require(moved.string("refresh_token"), "\(moved.text)")
            #expect(c1.hasPrefix("gh_r_c."))
            #expect(try await refresh(client, r1).string("refresh_token") == c1, "a retry inside the grace gets the same chain token")
            var token = c1
            for _ in 1...20 { token = try #require(try await refresh(client, token).string("refresh_token")) }
            #expect(try await Self.storage(server, database, session: user.sessionID).tokenRows == 2, "no row since the move")

            // The sessions list still says when the session was last used.
            let sessionID = try #require(UUID(uuidString: user.sessionID))
            let stored = try #require(try await server.persistence.read { try await $0.sessions.find(id: sessionID) })
            #expect(stored.refreshChain?.generation == 21)

            server.clock.advance(by: 11)
            let replay = try await refresh(client, r1)
            #expect(replay.string("error_description")?.contains("already used") == true, "\(replay.text)")
            #expect(try await refresh(client, token).status == .badRequest)
        }
    }
}
