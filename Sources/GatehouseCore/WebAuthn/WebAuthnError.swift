import Foundation

/// Why a WebAuthn response was refused. The text names the check that failed and nothing secret, so it
/// may go to the caller as a problem's detail and to the audit log.
public enum WebAuthnError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Bytes or JSON that do not have the structure the specification gives them.
    case malformed(String)
    case cbor(CBORError)
    case unsupportedAlgorithm(Int)
    /// A ceremony check (type, challenge, origin, RP ID, flags, counter) failed.
    case refused(String)
    case badSignature
    /// The signature counter did not increase: a cloned authenticator, or a replayed assertion.
    case counterWentBackwards
    /// The attestation statement is malformed, does not verify, or leads to no trusted root.
    case attestation(String)

    public var description: String {
        switch self {
        case .malformed(let what): what
        case .cbor(let error): error.description
        case .unsupportedAlgorithm(let alg): "COSE algorithm \(alg) is not accepted (use -7, -8 or -257)"
        case .refused(let what): what
        case .badSignature: "the signature does not verify with the credential's key"
        case .counterWentBackwards: "the authenticator's signature counter did not increase"
        case .attestation(let what): "attestation: \(what)"
        }
    }
}
