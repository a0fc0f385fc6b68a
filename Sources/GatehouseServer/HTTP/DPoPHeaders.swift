import GatehouseAPI
import GatehouseCore
import HTTPTypes

/// The header fields of RFC 9449: the proof a request carries, the nonce an answer hands out, and the
/// `DPoP` challenge of a protected route.
enum DPoPHeaders {
    static let proof = HTTPField.Name("DPoP")!
    static let nonce = HTTPField.Name("DPoP-Nonce")!

    /// RFC 9449 §7.1: the scheme, the algorithms a proof may use, and why the request was refused.
    static func challenge(error: ErrorCode) -> String {
        let algorithms = DPoPProof.algorithms.joined(separator: " ")
        return "DPoP realm=\"gatehouse\", error=\"\(error.rawValue)\", algs=\"\(algorithms)\""
    }
}
