import Foundation
import Gatehouse
import GatehouseAPI
import GatehouseServer
import GatehouseTesting
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real SDK against a real server over a socket.
@Suite("SDK against a live server")
struct AuthClientTests {
    static let clientID = "sdk-app"

    static func server(grace: TimeInterval = 10) async throws -> TestServer {
        let server = try await TestServer.startLive() { $0.refreshReuseGrace = grace }
        try await server.createClient(id: clientID, settings: ["email_verification=off", "methods=password,email_otp"])
        return server
    }

    @Test("Signing in while signed in ends the old session on the server, not only here")
    func signInAgainEndsTheOldSession() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore()))
            _ = try await client.signUp(email: "twice@example.com", password: "correct horse battery")
            let first = try await refreshedToken(client)
            try await client.signIn(email: "twice@example.com", password: "correct horse battery")
            let sessions = try await client.sessions()
            #expect(sessions.count == 1, "\(sessions)")
            // The first session's refresh token is dead on the server.
            var request = URLRequest(url: base.appendingPathComponent("oauth/token"))
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data("grant_type=refresh_token&client_id=\(Self.clientID)&refresh_token=\(first)".utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 400)
            #expect(String(decoding: data, as: UTF8.self).contains("invalid_grant"))
        }
    }

    @Test("Sign-up, the event stream starting with the current state, logout with the reason")
    func signUpAndEvents() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore()))
            let (log, task) = await record(client)
            guard case .signedIn(let signedUp) = try await client.signUp(email: "sdk@example.com", password: "correct horse battery") else {
                Issue.record("expected to be signed in")
                return
            }
            let user = signedUp.user
            #expect(user.email == "sdk@example.com")
            // The same result as every sign-in: the account is new, and the session is the client's.
            #expect(signedUp.isNew && signedUp.session == client.session)
            let (data, response) = try await client.authorizedData(for: meRequest(base))
            #expect(response.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self).contains("sdk@example.com"))
            try await client.signOut()
            #expect(client.state == .signedOut)
            let events = try await log.events(once: .signedOut(.userRequested))
            task.cancel()
            #expect(events.first == .current(.restoring))
            #expect(events.contains(.signedIn(user)))
            #expect(events.last == .signedOut(.userRequested))

            do {
                try await client.signIn(email: "sdk@example.com", password: "wrong password!")
                Issue.record("wrong password signed in")
            } catch let error as GatehouseError {
                #expect(error.isInvalidCredentials && error.status == 401)
            }
            do {
                _ = try await client.signUp(email: "bad", password: "x")
            } catch let error as GatehouseError {
                #expect(error.isValidationFailure)
                #expect(!error.validation.isValid)
                #expect(Set(error.validation.fieldMessages.keys) == ["email", "password"])
            }
        }
    }

    @Test("20 concurrent authorizedData calls with an expired access token make exactly one refresh")
    func singleFlightRefresh() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let transport = CountingTransport()
            let client = AuthClient(
                configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore(), transport: transport))
            _ = try await client.signUp(email: "flight@example.com", password: "correct horse battery")
            // The server's clock moves past the access token's lifetime; the SDK's does not, so every
            // call first meets a 401.
            server.clock.advance(by: 16 * 60)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await client.authorizedData(for: meRequest(base)).1.statusCode }
                }
                var all: [Int] = []
                for try await status in group { all.append(status) }
                return all
            }
            #expect(statuses == Array(repeating: 200, count: 20))
            #expect(transport.refreshes == 1)
        }
    }

    @Test("A new AuthClient on the same store restores the session: restoring → signedIn")
    func restore() async throws {
        let server = try await Self.server()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gh-sdk-\(UUID().uuidString)/session.json")
        defer { try? FileManager.default.removeItem(at: path.deletingLastPathComponent()) }
        try await withLiveServer(server) { base in
            let first = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: FileSessionStore(url: path)))
            _ = try await first.signUp(email: "restore@example.com", password: "correct horse battery")
            let permissions = try FileManager.default.attributesOfItem(atPath: path.path)[.posixPermissions] as? Int
            #expect(permissions == 0o600)

            let second = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: FileSessionStore(url: path)))
            #expect(second.state == .restoring)
            let (log, task) = await record(second)
            await second.restore()
            guard case .signedIn(let user) = second.state else {
                Issue.record("not restored")
                return
            }
            #expect(user.email == "restore@example.com")
            #expect(try await second.authorizedData(for: meRequest(base)).1.statusCode == 200)
            let events = try await log.events(once: .signedIn(user))
            task.cancel()
            #expect(events.first == .current(.restoring))
            #expect(events.dropFirst().first == .signedIn(user))
        }
    }

    @Test("A session revoked on the server ends in signedOut with the reason")
    func revokedOnServer() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let phone = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore()))
            let laptop = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore()))
            _ = try await phone.signUp(email: "revoked@example.com", password: "correct horse battery")
            try await laptop.signIn(email: "revoked@example.com", password: "correct horse battery")
            let (log, task) = await record(phone)
            try await laptop.signOut(scope: .others)
            #expect(laptop.currentUser != nil)
            do {
                _ = try await phone.authorizedData(for: meRequest(base))
                Issue.record("a revoked session still worked")
            } catch let error as GatehouseError {
                #expect(error.isSessionEnded)
            }
            #expect(phone.state == .signedOut)
            let events = try await log.events(once: .signedOut(.sessionRevoked))
            task.cancel()
            #expect(events.last == .signedOut(.sessionRevoked))
        }
    }

    @Test("Network down during a refresh keeps the session; the next try works")
    func networkDown() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let transport = CountingTransport()
            let client = AuthClient(
                configuration: .init(baseURL: base, clientID: Self.clientID, store: InMemorySessionStore(), transport: transport))
            _ = try await client.signUp(email: "offline@example.com", password: "correct horse battery")
            transport.setOffline(true)
            do {
                try await client.refreshSession()
                Issue.record("refresh succeeded offline")
            } catch let error as GatehouseError {
                #expect(error.isNetworkError && error.isRetryable)
            }
            #expect(client.currentUser?.email == "offline@example.com")
            transport.setOffline(false)
            try await client.refreshSession()
            #expect(try await client.authorizedData(for: meRequest(base)).1.statusCode == 200)
        }
    }

    @Test("Two processes on one file store refresh in turn: no invalid_grant, even with no reuse grace")
    func twoProcesses() async throws {
        let example = Subprocess.builtProduct("gatehouse-example")
        try #require(FileManager.default.isExecutableFile(atPath: example.path), "build gatehouse-example first (swift build)")
        let server = try await Self.server(grace: 0)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gh-sdk-\(UUID().uuidString)/session.json")
        defer { try? FileManager.default.removeItem(at: path.deletingLastPathComponent()) }
        try await withLiveServer(server) { base in
            let client = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: FileSessionStore(url: path)))
            _ = try await client.signUp(email: "shared@example.com", password: "correct horse battery")
            let results = try await withThrowingTaskGroup(of: (Int32, String).self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await Subprocess.run(
                            example,
                            [
                                "refresh-loop", "--url", base.absoluteString, "--client-id", Self.clientID,
                                "--store", path.path, "--count", "8",
                            ])
                    }
                }
                var all: [(Int32, String)] = []
                for try await result in group { all.append(result) }
                return all
            }
            for (status, output) in results {
                #expect(status == 0, "\(output)")
                #expect(output.contains("refresh-loop ok 8"))
            }
            // The session the processes left behind is still good.
            let after = AuthClient(configuration: .init(baseURL: base, clientID: Self.clientID, store: FileSessionStore(url: path)))
            #expect(try await after.authorizedData(for: meRequest(base)).1.statusCode == 200)
        }
    }
}

@Suite("SDK deep link")
struct DeepLinkSDKTests {
    @Test("Sign-up with a redirect, app relaunched, the link comes back: handle(url:) signs in with the stored verifier")
    func deepLinkAfterRelaunch() async throws {
        let server = try await TestServer.startLive()
        try await server.createClient(id: "mobile", redirectURIs: ["com.example.app:/verified"])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gh-sdk-\(UUID().uuidString)/session.json")
        defer { try? FileManager.default.removeItem(at: path.deletingLastPathComponent()) }
        try await withLiveServer(server) { base in
            let redirect = URL(string: "com.example.app:/verified")!
            let first = AuthClient(
                configuration: .init(baseURL: base, clientID: "mobile", redirectURL: redirect, store: FileSessionStore(url: path)))
            let result = try await first.signUp(email: "link@example.com", password: "correct horse battery")
            guard case .verificationRequired = result else {
                Issue.record("expected verification to be required")
                return
            }
            try await server.deliverMail()
            let linkPath = try #require(server.lastMail(to: "link@example.com", kind: "verification")?.linkPath("/verify?token="))
            // The mail link, followed as the browser would: its page's button answers a redirect into the app.
            let location = try await Redirects.confirm(URL(string: base.absoluteString + linkPath)!)
            let appURL = try #require(URL(string: location))

            // A new process: only the store remembers the verifier.
            let relaunched = AuthClient(
                configuration: .init(baseURL: base, clientID: "mobile", redirectURL: redirect, store: FileSessionStore(url: path)))
            #expect(try await relaunched.handle(url: appURL))
            #expect(relaunched.currentUser?.email == "link@example.com")
            #expect(relaunched.currentUser?.emailVerified == true)
            #expect(try await relaunched.handle(url: URL(string: "https://elsewhere.example/x")!) == false)
            // Mails tell when the next may be asked for.
            #expect(try await relaunched.requestPasswordReset(email: "link@example.com").resendAfter == 60)
        }
    }
}

/// Reads a redirect's Location without following it.
enum Redirects {
    final class Stopper: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        // @unchecked: no stored state; URLSession calls this from its own queue.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }

    /// Opens a mail link's page (verification, magic link), then posts its form with its cookie, as a
    /// browser does.
    static func confirm(_ link: URL) async throws -> String {
        let (data, response) = try await URLSession.shared.data(from: link)
        let page = String(decoding: data, as: UTF8.self)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200,
            let cookie = http.value(forHTTPHeaderField: "Set-Cookie")?.split(separator: ";").first
        else { throw URLError(.badServerResponse) }
        func field(_ name: String) -> String {
            guard let start = page.range(of: "name=\"\(name)\" value=\"") else { return "" }
            return String(page[start.upperBound...].prefix { $0 != "\"" })
        }
        var post = URLRequest(url: URL(string: link.path, relativeTo: link)!.absoluteURL)
        post.httpMethod = "POST"
        post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        post.setValue(String(cookie), forHTTPHeaderField: "Cookie")
        post.httpBody = Data("token=\(field("token"))&csrf=\(field("csrf"))".utf8)
        return try await location(of: post)
    }

    static func location(of request: URLRequest) async throws -> String {
        let session = URLSession(configuration: .ephemeral, delegate: Stopper(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let (_, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 303,
            let location = http.value(forHTTPHeaderField: "Location")
        else { throw URLError(.badServerResponse) }
        return location
    }
}
