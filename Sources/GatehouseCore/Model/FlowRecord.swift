import Foundation

/// What a persisted flow is for.
public struct FlowKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let login = FlowKind(rawValue: "login")
    public static let signup = FlowKind(rawValue: "signup")
    public static let recovery = FlowKind(rawValue: "recovery")
    public static let verification = FlowKind(rawValue: "verification")
    /// `/oauth/authorize` through the hosted pages.
    public static let authorize = FlowKind(rawValue: "authorize")
    /// A social sign-in's round trip through a provider.
    public static let social = FlowKind(rawValue: "social")
    /// A single-use nonce a device authenticator signs.
    public static let deviceChallenge = FlowKind(rawValue: "device_challenge")

    public var description: String { rawValue }
}

/// Where a flow stands; each flow kind names its own steps.
public struct FlowStep: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let started = FlowStep(rawValue: "started")
    public static let authenticated = FlowStep(rawValue: "authenticated")

    public var description: String { rawValue }
}

/// A flow that outlives one request (a browser going through pages, a round trip through a provider):
/// what it was started with, where it stands, until when it may finish. Finished exactly once:
/// ``FlowStore/consume(id:at:)`` is atomic.
public struct FlowRecord: Sendable, Hashable {
    public var id: UUID
    public var kind: FlowKind
    public var clientID: String
    /// Where the flow returns, already matched exactly against the client's registration.
    public var redirectURI: String?
    public var pkce: PKCEChallenge?
    public var nonce: String?
    /// The client's `state`, echoed back unchanged.
    public var state: String?
    /// SHA-256 (hex) of the CSRF token the flow's forms carry; the token itself is never stored.
    public var csrfHash: String
    public var step: FlowStep
    /// Set once the user is known.
    public var userID: UUID?
    public var browserSessionID: UUID?
    /// Flow-kind data that must survive between steps, as JSON.
    public var data: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var expiresAt: Date
    public var consumedAt: Date?

    public init(
        id: UUID = UUID(), kind: FlowKind, clientID: String, redirectURI: String? = nil, pkce: PKCEChallenge? = nil,
        nonce: String? = nil, state: String? = nil, csrfHash: String, step: FlowStep = .started, userID: UUID? = nil,
        browserSessionID: UUID? = nil, data: String? = nil, createdAt: Date, updatedAt: Date? = nil, expiresAt: Date,
        consumedAt: Date? = nil
    ) {
        self.id = id
        self.kind = kind
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.pkce = pkce
        self.nonce = nonce
        self.state = state
        self.csrfHash = csrfHash
        self.step = step
        self.userID = userID
        self.browserSessionID = browserSessionID
        self.data = data
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.expiresAt = expiresAt
        self.consumedAt = consumedAt
    }

    public func isOpen(at now: Date) -> Bool { consumedAt == nil && expiresAt > now }
}
