import Foundation

/// What the transport knows about the caller that the rules care about.
public struct RequestMeta: Sendable, Hashable {
    public var ipAddress: String?
    public var userAgent: String?
    public var acceptLanguage: String?
    /// The id the answer's `Request-Id` header and the access log carry, for the audit log.
    public var requestID: String?

    public init(ipAddress: String? = nil, userAgent: String? = nil, acceptLanguage: String? = nil, requestID: String? = nil) {
        self.ipAddress = ipAddress
        self.userAgent = userAgent.map { String($0.prefix(512)) }
        self.acceptLanguage = acceptLanguage
        self.requestID = requestID
    }
}
