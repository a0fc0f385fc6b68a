import Crypto
import Foundation
import GatehouseAPI

/// The device authorization grant (RFC 8628) for devices without a browser or a keyboard (a TV, a
/// command line): the device gets a device code to poll with and a short user code the person types
/// on another screen (`/device`), where the ordinary hosted sign-in runs (every sign-in method, the
/// second factor, terms, fields) and a consent page names the device's client. Approval mints an
/// authorization code through the one session starter, kept sealed for the device, and the poll
/// redeems it with the PKCE verifier the server kept: the device's session starts as every other does.
public struct DeviceAuthorizations: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public static let grantType = "urn:ietf:params:oauth:grant-type:device_code"
    /// Where an approval's code "goes": nowhere a browser can be sent (RFC 8252 style URN).
    static let redirectURI = "urn:ietf:params:oauth:grant-type:device_code"
    static let lifetime: TimeInterval = 600
    static let interval = 5
    /// No vowels (no words), no digits or letters that look alike (RFC 8628 §6.1): 20⁸ ≈ 2.6 × 10¹⁰.
    static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")

    /// `POST /oauth/device_authorization`: the client (public, or authenticated) and the scopes it may have.
    public func start(client: ClientRecord, scope: String?) async throws -> DeviceAuthorizationResponse {
        let deviceCode = Secrets.token(prefix: "gh_dc_")
        let userCode = Self.makeUserCode()
        let verifier = Secrets.token(prefix: "")
        let now = services.clock.now()
        let record = DeviceAuthorizationRecord(
            deviceCodeHash: Secrets.sha256Hex(deviceCode), userCodeHash: Self.hash(userCode, services.secret),
            clientID: client.id, scopes: SessionIssuer.grant(requested: scope, client: client),
            sealedVerifier: try services.secret.seal(Data(verifier.utf8)), createdAt: now,
            expiresAt: now.addingTimeInterval(Self.lifetime), interval: Self.interval)
        try await services.persistence.transaction { try await $0.devices.insert(record) }
        let page = services.tokens.issuer + "/device"
        return DeviceAuthorizationResponse(
            deviceCode: deviceCode, userCode: userCode, verificationURI: page,
            verificationURIComplete: page + "?user_code=" + userCode, expiresIn: Int(Self.lifetime), interval: Self.interval)
    }

    /// The grant: pending, slower, refused, expired, or the tokens, once.
    public func poll(deviceCode: String, client: ClientRecord, meta: RequestMeta) async throws -> TokenResponse {
        let hash = Secrets.sha256Hex(deviceCode)
        let now = services.clock.now()
        guard deviceCode.hasPrefix("gh_dc_"), deviceCode.utf8.count <= 256,
            let record = try await services.persistence.read({ try await $0.devices.find(deviceCodeHash: hash) }),
            record.clientID == client.id
        else { throw GatehouseError.invalidGrant("The device code is not valid.") }
        guard record.expiresAt > now else {
            _ = try await services.persistence.transaction { try await $0.devices.delete(deviceCodeHash: hash) }
            throw GatehouseError.deviceFlow(ErrorCode.expiredToken, "The device code expired: start again.")
        }
        switch record.status {
        case .denied:
            _ = try await services.persistence.transaction { try await $0.devices.delete(deviceCodeHash: hash) }
            throw GatehouseError.deviceFlow(ErrorCode.accessDenied, "The person declined.")
        case .pending:
            // RFC 8628 §3.5: polling faster than the interval is told to slow down, for good.
            var interval = record.interval
            let early = record.polledAt.map { now.timeIntervalSince($0) < Double(record.interval) } ?? false
            if early { interval += 5 }
            let next = interval
            try await services.persistence.transaction { try await $0.devices.polled(deviceCodeHash: hash, at: now, interval: next) }
            if early { throw GatehouseError.deviceFlow(ErrorCode.slowDown, "Poll at most every \(next) seconds.") }
            throw GatehouseError.deviceFlow(ErrorCode.authorizationPending, "The person has not approved yet.")
        case .approved:
            // Single use: whoever deletes the row redeems the code.
            guard try await services.persistence.transaction({ try await $0.devices.delete(deviceCodeHash: hash) }),
                let sealed = record.sealedCode
            else { throw GatehouseError.invalidGrant("The device code was used.") }
            let code = String(decoding: try services.secret.open(sealed), as: UTF8.self)
            let verifier = String(decoding: try services.secret.open(record.sealedVerifier), as: UTF8.self)
            return try await CodeExchange(services: services).exchange(
                code: code, redirectURI: Self.redirectURI, verifier: verifier, client: client, meta: meta)
        }
    }

    /// A typed user code, pending and live, with its client: what the `/device` page continues with.
    public func pending(userCode: String) async throws -> (DeviceAuthorizationRecord, ClientRecord) {
        let hash = Self.hash(userCode, services.secret)
        let now = services.clock.now()
        guard let record = try await services.persistence.read({ try await $0.devices.find(userCodeHash: hash) }),
            record.status == .pending, record.expiresAt > now
        else { throw GatehouseError.codeExpired }
        return (record, try await services.clients.resolve(record.clientID))
    }

    /// The hosted sign-in's request for an approval: always the consent page (the person must see
    /// which device's client they let in), the code kept by the server, PKCE by the server's verifier.
    func authorizationRequest(_ record: DeviceAuthorizationRecord) throws -> AuthorizationRequest {
        let verifier = String(decoding: try services.secret.open(record.sealedVerifier), as: UTF8.self)
        let challenge = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
        return AuthorizationRequest(
            clientID: record.clientID, redirectURI: Self.redirectURI, responseMode: .device, state: record.userCodeHash,
            scopes: record.scopes, pkce: PKCEChallenge(challenge: challenge, method: "S256"), prompt: ["consent"])
    }

    /// Upper case, only the alphabet's letters (dashes and spaces a person types are dropped).
    static func normalised(_ userCode: String) -> String {
        String(userCode.uppercased().filter { alphabet.contains($0) }.prefix(16))
    }

    static func hash(_ userCode: String, _ secret: ServerSecret) -> String {
        secret.stableCodeHash(normalised(userCode), binding: "device")
    }

    static func makeUserCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let letters = (0..<8).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
        return String(letters[0..<4]) + "-" + String(letters[4..<8])
    }
}
