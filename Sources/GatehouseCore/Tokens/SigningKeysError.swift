import Foundation

public enum SigningKeysError: Error, CustomStringConvertible {
    case notLoaded
    case noCurrentKey
    /// No published key has this kid (never existed, or already past its publication).
    case unknownKey(String)
    /// A stored key names an algorithm this version does not sign with.
    case unknownAlgorithm(String)
    /// An RSA key under the 2048 bits OpenID Connect and jwt-kit require.
    case weakKey(bits: Int)
    /// The current key does not open with this server secret.
    case secretMismatch(String)

    public var description: String {
        switch self {
        case .notLoaded: "signing keys are not loaded"
        case .noCurrentKey: "there is no current signing key"
        case .unknownKey(let kid): "no published signing key has the kid \(kid)"
        case .unknownAlgorithm(let name): "a stored signing key uses the algorithm \(name), which this version does not know"
        case .weakKey(let bits): "an RSA signing key of \(bits) bits is under the 2048 required"
        case .secretMismatch(let kid):
            "the current signing key (\(kid)) does not open with this server secret: the database was restored or "
                + "is shared without the secret file it was written with. Give this node that file "
                + "(GATEHOUSE_SECRET_FILE); if it is lost, see docs/operations.md, \"Signing keys\""
        }
    }
}
