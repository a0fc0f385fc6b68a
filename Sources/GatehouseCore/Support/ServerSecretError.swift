/// Why a server secret or a value sealed under it could not be used.
public enum ServerSecretError: Error, CustomStringConvertible {
    case tooShort
    case unreadable(String)
    case unwritable(String)
    case malformed(String)
    /// Sealed under none of the ring's secrets.
    case unopenable

    public var description: String {
        switch self {
        case .tooShort: "the server secret must hold at least 32 bytes"
        case .unreadable(let p): "cannot read the server secret at \(p)"
        case .unwritable(let p): "cannot create the server secret at \(p)"
        case .malformed(let p): "the server secret at \(p) is not base64, one secret per line"
        case .unopenable: "sealed under a server secret this node does not hold"
        }
    }
}
