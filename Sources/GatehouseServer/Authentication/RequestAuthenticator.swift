import Foundation
import GatehouseCore
import Hummingbird

/// One way a request can prove who sends it. Answers nil for "not mine" (no such header, a token of
/// another kind), so authenticators stack; throws for "mine, and rejected".
protocol RequestAuthenticator: Sendable {
    func authenticate(_ request: Request) async throws -> Identity?
}

/// Runs the group's authenticators in order and records the first identity found. A request no
/// authenticator claims goes on without one: the route's child context decides whether that is
/// allowed.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let authenticators: [any RequestAuthenticator]

    func handle(
        _ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        for authenticator in authenticators {
            if let identity = try await authenticator.authenticate(request) {
                context.identity = identity
                break
            }
        }
        return try await next(request, context)
    }
}

extension Request {
    /// The access token of `Authorization: Bearer …` or `Authorization: DPoP …`, with the request's
    /// proof and what the proof must name; nil for another scheme or none. More than one `DPoP` header
    /// is refused (RFC 9449 §4.3).
    var presentedToken: PresentedToken? {
        get throws {
            guard let header = headers[.authorization] else { return nil }
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            let scheme: PresentedToken.Scheme
            switch parts[0].lowercased() {
            case "bearer": scheme = .bearer
            case "dpop": scheme = .dpop
            default: return nil
            }
            let proofs = headers[values: DPoPHeaders.proof]
            guard proofs.count <= 1 else {
                throw GatehouseError.invalidDPoPProof("A request carries one DPoP proof.").atProtectedRoute
            }
            return PresentedToken(
                token: Request.credentials(parts[1]), scheme: scheme, proof: proofs.first,
                method: method.rawValue, path: uri.path)
        }
    }

    /// The credentials of `Authorization: Bearer …`, or nil when the header is absent or another scheme.
    var bearerToken: String? {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return Request.credentials(parts[1])
    }

    /// The credentials after the scheme, without surrounding whitespace. A token never starts or ends
    /// with a space, a tab or a non-ASCII byte, so it is taken as it is; only one that does goes through
    /// Foundation's trimming, which on every bearer request was 5 % of a `/v1/me`.
    private static func credentials(_ raw: Substring) -> String {
        func plain(_ byte: UInt8?) -> Bool { byte.map { $0 > 0x20 && $0 < 0x80 } ?? true }
        guard plain(raw.utf8.first), plain(raw.utf8.last) else { return String(raw).trimmingCharacters(in: .whitespaces) }
        return String(raw)
    }
}
