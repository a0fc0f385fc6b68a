import Crypto
import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Signs the SDK's requests with DPoP proofs (RFC 9449) when the server advertises DPoP: sign-in and
/// refresh requests, so the server binds the session's tokens to this device's key, and every request
/// that carries a bound access token (`Authorization: DPoP`, the proof naming the token in `ath`).
/// Keeps the servers' nonces (`DPoP-Nonce`) per origin.
///
/// `@unchecked Sendable` is sound: every stored property is either immutable and Sendable or read and
/// written only while `lock` is held (`Mutex` needs iOS 18).
final class DPoPSigner: @unchecked Sendable {
    private let lock = NSLock()
    private let provider: any DPoPKeyProvider
    private let enabled: Bool
    /// Whether the server lists ES256 in `dpop_signing_alg_values_supported`; nil until asked.
    private var advertised: Bool?
    private var key: (any DeviceKey)?
    private var record: StoredDPoPKey?
    /// The session's tokens are bound to `key`: requests that carry them say `DPoP`.
    private var bound = false
    /// The key of the last proof sent without an access token (a sign-in or a refresh): what the
    /// tokens that request gets are bound to, whatever a store read in the meantime adopted.
    private var issuing: StoredDPoPKey?
    private var nonces: [String: String] = [:]

    private let clock: any AuthClock

    /// A key and how the session store keeps it.
    struct SignInKey: Sendable {
        var key: any DeviceKey
        var stored: StoredDPoPKey
    }

    /// The key this task's requests are signed with instead of the session's. A sign-in with a device
    /// key of this device that signs without the user (a custom authenticator's) binds the new session
    /// to that key rather than a new one; a request for a session that was just replaced (its logout)
    /// is signed with that session's key. Task-local: only requests sent inside `withValue` use it.
    @TaskLocal static var requestKey: SignInKey?

    /// The current session's key, if one is held: what a request for that session needs once another
    /// sign-in has replaced it.
    var currentKey: SignInKey? {
        lock.withLock { key.flatMap { key in record.map { SignInKey(key: key, stored: $0) } } }
    }

    init(enabled: Bool, provider: any DPoPKeyProvider, clock: any AuthClock) {
        self.enabled = enabled
        self.provider = provider
        self.clock = clock
    }

    /// Whether the server's discovery document must still be read to know if DPoP is on.
    var needsDiscovery: Bool { lock.withLock { enabled && advertised == nil } }

    func setAdvertised(_ value: Bool) { lock.withLock { advertised = value } }

    /// A bound session always signs: it cannot work without proofs, whatever discovery said since.
    private var isOn: Bool { lock.withLock { enabled && (advertised == true || bound) } }

    /// The key to keep with the tokens a sign-in or refresh just got: the key its proof was signed by.
    var issuingKey: StoredDPoPKey? { lock.withLock { issuing ?? record } }

    /// Signed out: the next sign-in makes a new key, so two accounts on one device share none.
    func forget() {
        lock.withLock {
            key = nil
            record = nil
            issuing = nil
            bound = false
        }
    }

    /// The session now held: its key and whether its tokens are bound. No session keeps the key there
    /// is: a sign-in may be on its way with a proof by it (the store is read after the request went
    /// out). A key that no longer loads (an enclave handle restored from another device's backup) is
    /// dropped: the server refuses the session, which is then signed out.
    func adopt(_ stored: StoredDPoPKey?, bound isBound: Bool) {
        lock.withLock {
            bound = isBound
            guard let stored, stored != record else { return }
            record = stored
            switch stored.kind {
            case .software: key = try? SoftwareDeviceKey(stored: stored.data)
            case .platform: key = try? provider.loadKey(stored.data)
            }
        }
    }

    /// `request` with a proof when DPoP is on and the request is one that needs it: a POST without
    /// credentials (a sign-in or a token request), or one with the session's bound access token, whose
    /// `Bearer` scheme becomes `DPoP`.
    func sign(_ request: URLRequest) async throws -> URLRequest {
        guard isOn, let url = request.url, let method = request.httpMethod else { return request }
        var request = request
        var accessToken: String?
        if let authorization = request.value(forHTTPHeaderField: "Authorization") {
            guard lock.withLock({ bound }), authorization.hasPrefix("Bearer ") else { return request }
            let token = String(authorization.dropFirst("Bearer ".count))
            accessToken = token
            request.setValue("DPoP \(token)", forHTTPHeaderField: "Authorization")
        } else if method != "POST" {
            return request
        }
        let (proof, used) = try await self.proof(method: method, url: url, accessToken: accessToken)
        if accessToken == nil { lock.withLock { issuing = used } }
        request.setValue(proof, forHTTPHeaderField: "DPoP")
        return request
    }

    /// Keeps the nonce an answer hands out; true when the answer asks for the request again with it
    /// (`use_dpop_nonce`), which the caller does once.
    func noteNonce(_ data: Data, _ response: HTTPURLResponse, for url: URL?) -> Bool {
        guard let nonce = response.value(forHTTPHeaderField: "DPoP-Nonce"), let origin = url.map(Self.origin) else { return false }
        lock.withLock { nonces[origin] = nonce }
        guard response.statusCode == 400 || response.statusCode == 401 else { return false }
        if response.value(forHTTPHeaderField: "WWW-Authenticate")?.contains("use_dpop_nonce") == true { return true }
        return String(decoding: data.prefix(2048), as: UTF8.self).contains("use_dpop_nonce")
    }

    private func proof(method: String, url: URL, accessToken: String?) async throws -> (String, StoredDPoPKey) {
        let given = Self.requestKey
        let (signer, used, origin) = try lock.withLock { () throws -> (any DeviceKey, StoredDPoPKey, String) in
            if let given { return (given.key, given.stored, Self.origin(url)) }
            if let key, let record { return (key, record, Self.origin(url)) }
            let made = try provider.makeKey()
            let stored = StoredDPoPKey(kind: made is SoftwareDeviceKey ? .software : .platform, data: made.stored)
            key = made
            record = stored
            return (made, stored, Self.origin(url))
        }
        let point = signer.publicKey.x963Representation.dropFirst()
        let header = Header(jwk: JWK(x: PKCE.base64URL(Data(point.prefix(32))), y: PKCE.base64URL(Data(point.suffix(32)))))
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        let claims = Claims(
            jti: UUID().uuidString, htm: method, htu: components?.string ?? url.absoluteString,
            iat: Int(clock.now.timeIntervalSince1970),
            ath: accessToken.map { PKCE.base64URL(Data(SHA256.hash(data: Data($0.utf8)))) },
            nonce: lock.withLock { nonces[origin] })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input = PKCE.base64URL(try encoder.encode(header)) + "." + PKCE.base64URL(try encoder.encode(claims))
        let signature = try await signer.sign(Data(input.utf8), reason: "")
        return (input + "." + PKCE.base64URL(signature), used)
    }

    /// Scheme, host and port: nonces are per server.
    static func origin(_ url: URL) -> String {
        "\(url.scheme ?? "")://\(url.host ?? ""):\(url.port.map(String.init) ?? "")"
    }

    private struct JWK: Encodable {
        var kty = "EC"
        var crv = "P-256"
        var x: String
        var y: String
    }

    private struct Header: Encodable {
        var typ = "dpop+jwt"
        var alg = "ES256"
        var jwk: JWK
    }

    private struct Claims: Encodable {
        var jti: String
        var htm: String
        var htu: String
        var iat: Int
        var ath: String?
        var nonce: String?
    }
}
