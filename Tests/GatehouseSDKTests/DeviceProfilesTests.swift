import Argon2
import Crypto
import Foundation
import Gatehouse
import GatehouseAPI
import protocol GatehouseCore.FlowHook
import struct GatehouseCore.FlowHooks
import struct GatehouseCore.HookEvent
import enum GatehouseCore.HookVerdict
import GatehouseServer
import GatehouseTesting
import Synchronization
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Device authenticators through the real SDK against a real server over a socket.
@Suite("Device profiles against a live server")
struct DeviceProfilesTests {
    static let clientID = "device-app"
    /// Cheap Argon2 for debug builds; the construction, not the cost, is under test.
    static let cheap = Argon2Parameters(memoryKiB: 256, iterations: 1, parallelism: 1)

    static func server(hooks: FlowHooks = FlowHooks()) async throws -> TestServer {
        let server = try await TestServer.startLive(hooks: hooks)
        try await server.createClient(id: clientID, settings: ["email_verification=off"])
        return server
    }

    static func setUp(
        _ base: URL, store: any DeviceStore = InMemoryDeviceStore(), transport: any HTTPTransport = URLSessionTransport(),
        custom: [any CustomAuthenticator] = [], biometrics: (any BiometricKeyProvider)? = nil
    )
        -> (AuthClient, DeviceProfiles)
    {
        let client = AuthClient(
            configuration: .init(baseURL: base, clientID: clientID, store: InMemorySessionStore(), transport: transport))
        let profiles = DeviceProfiles(
            client: client,
            configuration: .init(
                store: store, pinKeyDerivation: cheap, biometricKeys: biometrics ?? SoftwareBiometricKeys(),
                customAuthenticators: custom, deviceName: "Test phone"))
        return (client, profiles)
    }

    @Test("Register a PIN, log out, sign in with it (amr pin); wrong PINs show 3/1/2 then 3/2/1; the third deregisters everywhere")
    func pinLifecycle() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gh-device-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let (client, profiles) = Self.setUp(base, store: FileDeviceStore(url: directory.appendingPathComponent("device.json")))
            _ = try await client.signUp(email: "pin@example.com", password: "correct horse battery")
            let profile = try await profiles.registerPIN("13579")
            #expect(profile.authenticators.map(\.type) == [.pin])
            // The registering password session is over; the new one is bound to the PIN.
            #expect(try await amr(client) == ["pin"])
            #expect(try await client.sessions().count == 1)
            #expect(await profiles.signOut().isRevoked)
            #expect(client.state == .signedOut)

            let user = try await profiles.signIn(profile: profile, pin: "13579").user
            #expect(user.email == "pin@example.com")
            #expect(try await amr(client) == ["pin"])
            let sessions = try await client.sessions()
            #expect(sessions.first?.authenticator?.deviceId == (try await profiles.deviceID()))
            let bound = try await refreshedToken(client)

            // The delegate is asked three times, with the server's counts; the third wrong PIN ends it.
            let delegate = ScriptedDelegate(pins: ["24680", "97531", "11223"])
            let result = await profiles.signIn(profile: profile, authenticator: profile.authenticators[0], delegate: delegate)
            #expect(result == nil)
            let asked = delegate.challenges
            #expect(
                asked.map { [$0.maxFailureCount, $0.previousFailureCount, $0.remainingFailureCount] } == [
                    [3, 0, 3], [3, 1, 2], [3, 2, 1],
                ])
            #expect(asked.map { $0.previousError?.code } == [nil, .invalidAuthenticatorResponse, .invalidAuthenticatorResponse])
            #expect(delegate.failure as? DeviceAuthenticationError == .deregistered)
            #expect(delegate.started == 1 && delegate.succeeded == 0)

            // Gone on the server (its session's refresh token refused) and here (register again).
            #expect(try await refreshStatus(base, bound) == 400)
            #expect(try await profiles.profiles().first?.authenticators.isEmpty == true)
            #expect(client.state == .signedOut)
            do {
                try await profiles.signIn(profile: profile, pin: "13579")
                Issue.record("a deregistered PIN signed in")
            } catch let error as DeviceAuthenticationError {
                #expect(error == .unknownProfile)
            }
        }
    }

    @Test("Camouflage: every PIN unlocks a well-formed key, only the right one is the registered key, and the server refuses the rest")
    func camouflage() async throws {
        let (stored, created) = try CamouflagedPINKey.create(pin: "86420", parameters: Self.cheap)
        let publicKey = created.publicKey
        #expect(try stored.unlock(pin: "86420").publicKey.x963Representation == publicKey.x963Representation)
        var seen = Set<Data>()
        let guesses = Set((0..<40).map { String(format: "%05d", $0 * 2467 % 100_000) }).subtracting(["86420"])
        for guess in guesses {
            let key = try stored.unlock(pin: guess)
            // Well-formed: it signs, and its own public key verifies the signature.
            let signature = try key.signature(for: Data("x".utf8))
            #expect(key.publicKey.isValidSignature(signature, for: Data("x".utf8)))
            #expect(key.publicKey.x963Representation != publicKey.x963Representation)
            seen.insert(key.publicKey.x963Representation)
        }
        #expect(seen.count == guesses.count)

        // What the device stores holds no public key and no key hash to test a guess against.
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let store = InMemoryDeviceStore()
            let (client, profiles) = Self.setUp(base, store: store)
            _ = try await client.signUp(email: "camo@example.com", password: "correct horse battery")
            let profile = try await profiles.registerPIN("86420")
            let state = try #require(try await store.load())
            let json = String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
            let key = try #require(try await server.persistence.read { try await $0.credentials.find(id: profile.authenticators[0].id) })
            let registered = try #require(
                (try JSONSerialization.jsonObject(with: Data(key.config.utf8)) as? [String: Any])?["public_key"] as? String)
            #expect(!json.contains(registered))
            #expect(!json.contains(try #require(key.identifiers.first).split(separator: ":").last.map(String.init) ?? "?"))
            // A wrong PIN's key is refused by the server, which counts it.
            do {
                try await profiles.signIn(profile: profile, pin: "86421")
                Issue.record("a wrong PIN signed in")
            } catch let error as GatehouseError {
                #expect(error.code == .invalidAuthenticatorResponse)
                #expect(error.failureCounts == FailureCounts(max: 3, previous: 1))
            }
        }
    }

    @Test("Two profiles on one device authenticate independently; switching logs the other out first")
    func twoProfiles() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let (client, profiles) = Self.setUp(base)
            _ = try await client.signUp(email: "ada@example.com", password: "correct horse battery")
            let ada = try await profiles.registerPIN("13579")
            let adaRefresh = try await refreshedToken(client)
            _ = await profiles.signOut()
            _ = try await client.signUp(email: "bob@example.com", password: "correct horse battery")
            let bob = try await profiles.registerPIN("97531")
            #expect(try await profiles.profiles().count == 2 && ada.id != bob.id)
            let bobRefresh = try await refreshedToken(client)

            #expect(try await profiles.signIn(profile: ada, pin: "13579").user.email == "ada@example.com")
            #expect(try await profiles.activeProfile()?.id == ada.id)
            // Bob's session was revoked before Ada's began; Ada's old one ended at her logout.
            #expect(try await refreshStatus(base, bobRefresh) == 400)
            #expect(try await refreshStatus(base, adaRefresh) == 400)
            #expect(try await profiles.signIn(profile: bob, pin: "97531").user.email == "bob@example.com")
            #expect(client.currentUser?.email == "bob@example.com")
            // Each profile's own wrong PIN counts only against its own authenticator.
            _ = try? await profiles.signIn(profile: ada, pin: "00000")
            #expect(try await profiles.signIn(profile: bob, pin: "97531").user.email == "bob@example.com")
        }
    }

    @Test("Biometric and custom authenticators register and sign in; the delegate can cancel; custom data reaches the server")
    func biometricAndCustom() async throws {
        let hook = CustomDataHook()
        let server = try await Self.server(hooks: FlowHooks([hook]))
        try await withLiveServer(server) { base in
            let prompts = Mutex<[String]>([])
            let biometrics = SoftwareBiometricKeys { reason in
                prompts.withLock { $0.append(reason) }
                return reason != "refuse"
            }
            let token = HardwareToken()
            let (client, profiles) = Self.setUp(base, custom: [token], biometrics: biometrics)
            _ = try await client.signUp(email: "bio@example.com", password: "correct horse battery")
            _ = try await profiles.registerBiometric()
            let profile = try await profiles.registerCustom("hw-token")
            #expect(profile.authenticators.map(\.type) == [.biometric, .custom])
            _ = await profiles.signOut()

            let delegate = ScriptedDelegate(pins: [], biometricReason: "Unlock Gatehouse")
            let user = await profiles.signIn(profile: profile, authenticator: profile.authenticators[0], delegate: delegate)?.user
            #expect(user?.email == "bio@example.com" && delegate.succeeded == 1)
            #expect(try await amr(client) == ["bio"])
            #expect(prompts.withLock { $0.last } == "Unlock Gatehouse")

            let refusing = ScriptedDelegate(pins: [], biometricReason: "refuse")
            #expect(await profiles.signIn(profile: profile, authenticator: profile.authenticators[0], delegate: refusing) == nil)
            #expect(refusing.failure as? DeviceAuthenticationError == .cancelled)

            try await profiles.signIn(profile: profile, authenticator: profile.authenticators[1])
            #expect(try await amr(client) == ["custom"])
            #expect(token.calls.withLock { $0 } == 1)
            #expect(hook.seen.withLock { $0 } == ["serial=42"])
        }
    }

    @Test("PIN policy on the device, PIN change, deregistration, local-only logout, disconnect")
    func pinManagement() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let transport = SwitchableTransport()
            let (client, profiles) = Self.setUp(base, transport: transport)
            _ = try await client.signUp(email: "change@example.com", password: "correct horse battery")
            for bad in ["12345", "11111", "1234", "12a45", "987654"] {
                do {
                    try await profiles.registerPIN(bad)
                    Issue.record("\(bad) was accepted")
                } catch let DeviceAuthenticationError.pinPolicy(result) {
                    #expect(result.fieldMessages["pin"] != nil)
                }
            }
            var profile = try await profiles.registerPIN("13579")
            try await profiles.changePIN(profile: profile, from: "13579", to: "24681")
            profile = try #require(try await profiles.profiles().first)
            #expect(profile.authenticators.count == 1)
            _ = await profiles.signOut()
            do {
                try await profiles.signIn(profile: profile, pin: "13579")
                Issue.record("the old PIN still works")
            } catch let error as GatehouseError {
                #expect(error.code == .invalidAuthenticatorResponse)
            }
            try await profiles.signIn(profile: profile, pin: "24681")

            // The server out of reach: the logout is local only, and says so.
            transport.offline.withLock { $0 = true }
            guard case .localOnly = await profiles.signOut() else {
                Issue.record("expected a local-only logout")
                return
            }
            transport.offline.withLock { $0 = false }

            try await profiles.signIn(profile: profile, pin: "24681")
            let bound = try await refreshedToken(client)
            try await profiles.deregister(profile.authenticators[0], of: profile)
            // Deleting the authenticator ended the session it started.
            #expect(try await refreshStatus(base, bound) == 400)
            #expect(try await profiles.profiles().first?.authenticators.isEmpty == true)
            try await profiles.disconnect()
            #expect(try await profiles.profiles().isEmpty)
            #expect(client.state == .signedOut)
        }
    }
}

extension DeviceProfilesTests {
    @Test("Removing the signed-in profile deletes all its authenticators on the server, the session's own last")
    func removeProfile() async throws {
        let server = try await Self.server()
        try await withLiveServer(server) { base in
            let (client, profiles) = Self.setUp(base)
            _ = try await client.signUp(email: "gone@example.com", password: "correct horse battery")
            _ = try await profiles.registerBiometric()
            let profile = try await profiles.registerPIN("13579")
            #expect(profile.authenticators.count == 2)
            // The session is bound to the PIN (registered last); remove must delete the other first.
            #expect(try await profiles.remove(profile))
            #expect(try await profiles.profiles().isEmpty)
            #expect(client.state == .signedOut)

            try await client.signIn(email: "gone@example.com", password: "correct horse battery")
            let (data, response) = try await client.authorizedData(
                for: URLRequest(url: base.appendingPathComponent("/v1/me/authenticators")))
            #expect(response.statusCode == 200)
            let listed = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            #expect((listed?["authenticators"] as? [Any])?.isEmpty == true)
        }
    }
}

// MARK: - Helpers

private func amr(_ client: AuthClient) async throws -> [String]? {
    let token = try await client.refreshSession().accessToken
    let payload = token.split(separator: ".")[1]
    var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    let claims = try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: base64))) as? [String: Any]
    return claims?["amr"] as? [String]
}

private func refreshStatus(_ base: URL, _ refreshToken: String) async throws -> Int {
    var request = URLRequest(url: base.appendingPathComponent("/oauth/token"))
    request.httpMethod = "POST"
    request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data("grant_type=refresh_token&client_id=\(DeviceProfilesTests.clientID)&refresh_token=\(refreshToken)".utf8)
    let (_, response) = try await URLSession.shared.data(for: request)
    return (response as! HTTPURLResponse).statusCode
}

/// Answers PIN challenges from a script and records what it was shown.
final class ScriptedDelegate: AuthenticationDelegate {
    private struct State {
        var pins: [String]
        var challenges: [PINChallenge] = []
        var failure: (any Error)?
        var started = 0
        var succeeded = 0
    }
    private let state: Mutex<State>
    let biometricReason: String

    init(pins: [String], biometricReason: String = "Sign in") {
        state = Mutex(State(pins: pins))
        self.biometricReason = biometricReason
    }

    var challenges: [PINChallenge] { state.withLock { $0.challenges } }
    var failure: (any Error)? { state.withLock { $0.failure } }
    var started: Int { state.withLock { $0.started } }
    var succeeded: Int { state.withLock { $0.succeeded } }

    func didStartAuthentication(profile: UserProfile, authenticator: RegisteredAuthenticator) async {
        state.withLock { $0.started += 1 }
    }

    func didReceivePINChallenge(_ challenge: PINChallenge) async -> PINChallengeResponse {
        state.withLock { state in
            state.challenges.append(challenge)
            return state.pins.isEmpty ? .cancel : .pin(state.pins.removeFirst())
        }
    }

    func didReceiveBiometricChallenge(profile: UserProfile, authenticator: RegisteredAuthenticator) async -> String? {
        biometricReason
    }

    func didAuthenticate(user: User, profile: UserProfile) async { state.withLock { $0.succeeded += 1 } }
    func didFailToAuthenticate(profile: UserProfile, error: any Error) async { state.withLock { $0.failure = error } }
}

/// An app's own authenticator: passes, and sends data along for the operator's hook.
final class HardwareToken: CustomAuthenticator {
    let calls = Mutex(0)
    var type: String { "hw-token" }
    func authenticate(_ challenge: CustomChallenge) async throws -> String? {
        calls.withLock { $0 += 1 }
        return "serial=42"
    }
}

/// The operator's side of a custom authenticator: sees its extra data.
final class CustomDataHook: FlowHook {
    let seen = Mutex<[String]>([])
    func before(_ event: HookEvent) async throws -> HookVerdict {
        if let data = event.customData { seen.withLock { $0.append(data) } }
        return .allow
    }
}

/// URLSession, or "no network" for every request while `offline`.
final class SwitchableTransport: HTTPTransport {
    let offline = Mutex(false)
    private let base = URLSessionTransport()
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        if offline.withLock({ $0 }) { throw URLError(.notConnectedToInternet) }
        return try await base.send(request)
    }
}
