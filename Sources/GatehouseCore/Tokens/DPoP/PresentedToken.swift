import Foundation
import GatehouseAPI

/// An access token as a request presented it: the scheme it came under and, for `DPoP`, the proof and
/// what the proof must name (RFC 9449 §7).
public struct PresentedToken: Sendable {
    public enum Scheme: Sendable { case bearer, dpop }

    public var token: String
    public var scheme: Scheme
    /// The `DPoP` header's proof; nil when the request had none.
    public var proof: String?
    public var method: String
    public var path: String

    public init(token: String, scheme: Scheme, proof: String?, method: String, path: String) {
        self.token = token
        self.scheme = scheme
        self.proof = proof
        self.method = method
        self.path = path
    }

    /// A token from a form body or a test: a bearer token with nothing beside it.
    public static func bearer(_ token: String) -> PresentedToken {
        PresentedToken(token: token, scheme: .bearer, proof: nil, method: "", path: "")
    }
}

extension DPoPVerifier {
    /// A bound token only with a proof by its key, under the `DPoP` scheme; an unbound one only as a
    /// bearer token (the scheme says what the client believes, and a mismatch is a client to fix).
    /// Refusals are the 401s of a protected route, with a `DPoP` challenge.
    public func check(_ claims: AccessTokenClaims, presented: PresentedToken) async throws {
        guard let jkt = claims.cnf?.jkt else {
            if presented.scheme == .dpop {
                throw GatehouseError.dpopBoundToken("This access token is not bound to a DPoP key: send it as a Bearer token.")
            }
            return
        }
        guard presented.scheme == .dpop else {
            throw GatehouseError.dpopBoundToken("This access token is bound to a DPoP key: send it as Authorization: DPoP with a proof.")
        }
        guard let proof = presented.proof else {
            throw GatehouseError.invalidDPoPProof("A DPoP-bound token needs a DPoP proof beside it.").atProtectedRoute
        }
        let key: String
        do {
            key = try await verify(proof, method: presented.method, path: presented.path, accessToken: presented.token)
        } catch let error as GatehouseError where error.code == .invalidDPoPProof || error.code == .useDPoPNonce {
            throw error.atProtectedRoute
        }
        guard key == jkt else {
            throw GatehouseError.invalidDPoPProof("The DPoP proof is signed by another key than the token is bound to.").atProtectedRoute
        }
    }
}
