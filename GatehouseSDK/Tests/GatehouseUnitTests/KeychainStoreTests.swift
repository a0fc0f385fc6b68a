#if canImport(Security) || GATEHOUSE_SECURITY_SHIM
    import Foundation
    import Gatehouse
    import Testing
    #if !canImport(Security)
        import SecurityShim
    #endif

    /// The Keychain stores' own code. On Linux it runs against SecurityShim (scripts/check-apple-paths);
    /// on an Apple platform against the real Keychain.
    @Suite("Keychain stores", .serialized)
    struct KeychainStoreTests {
        static func store() -> KeychainSessionStore {
            let lock = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-unit-\(UUID().uuidString).lock")
            return KeychainSessionStore(service: "gatehouse.tests.\(UUID().uuidString)", account: "session", lockFile: lock)
        }

        @Test("K-1: save, load, overwrite, clear; the PKCE verifier is an item of its own")
        func roundTrip() async throws {
            let store = Self.store()
            #expect(try await store.load() == nil)
            let first = StoredSession(
                accessToken: "a1", refreshToken: "r1", accessTokenExpiresAt: Date(timeIntervalSince1970: 1_800_000_000), user: Fixture.user)
            try await store.save(first)
            var second = first
            second.refreshToken = "r2"
            second.idToken = "id"
            try await store.save(second)
            #expect(try await store.load() == second)
            try await store.savePendingVerifier("v1")
            try await store.savePendingVerifier("v2")
            #expect(try await store.loadPendingVerifier() == "v2")
            try await store.clear()
            #expect(try await store.load() == nil)
            #expect(try await store.loadPendingVerifier() == "v2")
            try await store.savePendingVerifier(nil)
            #expect(try await store.loadPendingVerifier() == nil)
            try await store.clear()  // clearing nothing is fine
        }

        @Test("K-2: refreshes through the Keychain store take turns on its lock file")
        func locks() async throws {
            let store = Self.store()
            #expect(try await overlapped(store) == false)
            #expect(FileManager.default.fileExists(atPath: store.lockFile.path))
            #expect(KeychainSessionStore(service: "s", account: "a").lockFile.lastPathComponent == "s.a.lock")
        }

        @Test("K-3: the device store keeps its state in the Keychain too")
        func deviceStore() async throws {
            let store = KeychainDeviceStore(service: "gatehouse.tests.\(UUID().uuidString)")
            #expect(try await store.load() == nil)
            let state = DeviceState(deviceID: "dev_test")
            try await store.save(state)
            #expect(try await store.load() == state)
            try await store.clear()
            #expect(try await store.load() == nil)
        }

        #if !canImport(Security)
            @Test("K-4: a Keychain that cannot be read yet (before first unlock) leaves the client restoring, then it restores")
            func beforeFirstUnlock() async throws {
                let store = Self.store()
                let server = ScriptedServer()
                await server.on("POST /v1/login", Fixture.tokens(1))
                try await Fixture.client(server, store: store).signIn(email: "ada@example.com", password: "pw")
                SecurityShimControl.setLocked(true)
                let relaunched = Fixture.client(server, store: store)
                await relaunched.restore()
                #expect(relaunched.state == .restoring)
                SecurityShimControl.setLocked(false)
                await relaunched.restore()
                #expect(relaunched.state == .signedIn(Fixture.user))
                try await store.clear()
            }
        #endif
    }
#endif

#if !canImport(LocalAuthentication) && GATEHOUSE_SECURITY_SHIM
    import Crypto

    /// `SecureEnclaveBiometricKeys`' own code, against the stand-in enclave (Linux only).
    @Suite("Secure Enclave keys (stand-in)", .serialized)
    struct EnclaveKeyTests {
        @Test(
            "K-5: an enclave key signs after the prompt with the app's reason, reloads from its handle, and a refused prompt signs nothing")
        func enclaveKeys() async throws {
            let provider = SecureEnclaveBiometricKeys()
            SecurityShimControl.setBiometricsAvailable(true)
            SecurityShimControl.setBiometricsPass(true)
            #expect(provider.isAvailable)
            let key = try provider.makeKey()
            let message = Data("challenge".utf8)
            let signature = try await key.sign(message, reason: "Sign in to Example")
            #expect(SecurityShimControl.lastPromptReason == "Sign in to Example")
            #expect(key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: message))

            let reloaded = try provider.loadKey(key.stored)
            #expect(reloaded.publicKey.x963Representation == key.publicKey.x963Representation)
            #expect(throws: (any Error).self) { try provider.loadKey(Data("not a handle".utf8)) }

            SecurityShimControl.setBiometricsPass(false)
            await #expect(throws: (any Error).self) { try await reloaded.sign(message, reason: "again") }
            SecurityShimControl.setBiometricsPass(true)
            SecurityShimControl.setBiometricsAvailable(false)
            #expect(!provider.isAvailable)
            SecurityShimControl.setBiometricsAvailable(true)
        }

        @Test(
            "K-6: the DPoP key provider makes enclave keys that sign without a prompt and reload from their handle, and software keys where there is no enclave"
        )
        func dpopKeys() async throws {
            let provider = SecureEnclaveDPoPKeys()
            SecurityShimControl.setBiometricsAvailable(true)
            let key = try provider.makeKey()
            #expect(!(key is SoftwareDeviceKey))
            let message = Data("header.claims".utf8)
            let reloaded = try provider.loadKey(key.stored)
            let signature = try await reloaded.sign(message, reason: "")
            #expect(key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: message))
            #expect(throws: (any Error).self) { try provider.loadKey(Data("not a handle".utf8)) }

            SecurityShimControl.setBiometricsAvailable(false)
            #expect(try provider.makeKey() is SoftwareDeviceKey)
            SecurityShimControl.setBiometricsAvailable(true)
        }
    }
#endif
