import GatehouseAPI
import GatehouseCore
import Hummingbird
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Per-request data: the caller as ``EdgeMiddleware`` resolved it once, and who the caller is
/// once an authenticator in ``AuthenticationMiddleware`` recognised them.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The socket's peer; ``meta`` holds the address the rules use (the proxy's word, when trusted).
    public let remoteAddress: String?
    public var meta: RequestMeta
    public var identity: Identity?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = Self.text(of: source.channel.remoteAddress)
        self.meta = RequestMeta(ipAddress: remoteAddress)
        self.identity = nil
    }

    /// The peer's address as text. IPv4 (loopback, a proxy on the same network: nearly every peer) is
    /// formatted here by hand: NIO's `ipAddress` goes through `inet_ntop`, which formats IPv4 with
    /// `sprintf`, and this runs for every request.
    static func text(of address: SocketAddress?) -> String? {
        guard case .v4(let v4)? = address else { return address?.ipAddress }
        let bits = UInt32(bigEndian: v4.address.sin_addr.s_addr)
        return "\(bits >> 24).\(bits >> 16 & 0xff).\(bits >> 8 & 0xff).\(bits & 0xff)"
    }

    /// The body limit of the contract: 1 MiB.
    public var maxUploadSize: Int { 1 << 20 }
}

/// The context of routes that need a signed-in user: a handler here cannot forget the check.
public struct AuthenticatedContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let principal: Principal
    public let meta: RequestMeta

    public init(context: AppRequestContext) throws {
        guard case .user(let principal) = context.identity else {
            throw GatehouseError.unauthorized("A user's bearer token is required.", code: .unauthorized)
        }
        self.coreContext = context.coreContext
        self.principal = principal
        self.meta = context.meta
    }
}

/// The context of routes for operators: an admin credential, never a user's session.
public struct AdminContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let admin: AdminPrincipal
    public let meta: RequestMeta

    public init(context: AppRequestContext) throws {
        guard case .admin(let admin) = context.identity else {
            throw GatehouseError.unauthorized("An admin credential is required.", code: .unauthorized)
        }
        self.coreContext = context.coreContext
        self.admin = admin
        self.meta = context.meta
    }
}
