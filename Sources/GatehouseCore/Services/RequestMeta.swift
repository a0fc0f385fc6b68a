import Foundation

/// What the transport knows about the caller that the rules care about.
public struct RequestMeta: Sendable, Hashable {
    public var ipAddress: String?
    public var userAgent: String?
    public var acceptLanguage: String?
    /// The id the answer's `Request-Id` header and the access log carry, for the audit log.
    public var requestID: String?
    /// The thumbprint of the DPoP key whose proof this request carried and that held (RFC 9449): the
    /// key tokens issued by this request are bound to, as the client's `dpop` setting says.
    public var dpopKey: String?
    /// The bot challenge widget's token sent with this request (`Gatehouse-Bot-Challenge`, or the
    /// widget's own field on a hosted form), checked where the client asks for one.
    public var botChallengeToken: String?

    public init(ipAddress: String? = nil, userAgent: String? = nil, acceptLanguage: String? = nil, requestID: String? = nil) {
        self.ipAddress = ipAddress
        self.userAgent = userAgent.map { String($0.prefix(512)) }
        self.acceptLanguage = acceptLanguage
        self.requestID = requestID
    }
}
