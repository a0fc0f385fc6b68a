import GatehouseCore
import Hummingbird
import NIOCore

/// Per-request data: the peer address, and the principal once a bearer token was checked.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: String?
    public var principal: Principal?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress
        self.principal = nil
    }

    /// The body limit of the contract: 1 MiB.
    public var maxUploadSize: Int { 1 << 20 }
}

/// The context of routes behind bearer authentication: a handler here cannot forget the check.
public struct AuthenticatedContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let principal: Principal
    public let remoteAddress: String?

    public init(context: AppRequestContext) throws {
        guard let principal = context.principal else {
            throw GatehouseError.unauthorized("A bearer token is required.", code: .unauthorized)
        }
        self.coreContext = context.coreContext
        self.principal = principal
        self.remoteAddress = context.remoteAddress
    }
}
