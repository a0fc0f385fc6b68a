#if canImport(Observation)
    import Foundation
    import Gatehouse
    import Observation
    import Testing

    @Suite("AuthModel (Observation)")
    @MainActor
    struct ModelTests {
        /// Waits until `condition` holds, reading it on the main actor as a view would.
        func eventually(_ condition: () -> Bool) async -> Bool {
            for _ in 0..<200 {
                if condition() { return true }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            return condition()
        }

        @Test("U-18: the model follows sign-in and sign-out, and observers of state are told")
        func follows() async throws {
            guard #available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *) else { return }
            let server = ScriptedServer()
            await server.on("POST /v1/login", Fixture.tokens(1))
            await server.on("POST /oauth/token", .json(400, OAuthErrorBody(error: "invalid_grant")))
            let client = Fixture.client(server)
            let model = AuthModel(client: client)
            #expect(model.state == .restoring && !model.isSignedIn)

            final class Flag: @unchecked Sendable {
                // Set from the observation callback, read on the main actor afterwards; the lock orders
                // the two.
                private let lock = NSLock()
                private var value = false
                func set() { lock.withLock { value = true } }
                var isSet: Bool { lock.withLock { value } }
            }
            // The model's first event repeats the state it already has, which must not notify anyone.
            let signedIn = Flag()
            withObservationTracking {
                _ = model.state
            } onChange: {
                signedIn.set()
            }
            try await Task.sleep(nanoseconds: 50_000_000)
            #expect(!signedIn.isSet)

            try await client.signIn(email: "ada@example.com", password: "pw")
            #expect(await eventually { model.user == Fixture.user })
            #expect(signedIn.isSet && model.isSignedIn && model.lastSignOutReason == nil)

            let signedOut = Flag()
            withObservationTracking {
                _ = model.isSignedIn
            } onChange: {
                signedOut.set()
            }
            _ = try? await client.refreshSession()  // the server refuses: signed out by the server
            #expect(await eventually { model.state == .signedOut })
            #expect(signedOut.isSet && model.lastSignOutReason == .sessionRevoked)
        }
    }
#endif
