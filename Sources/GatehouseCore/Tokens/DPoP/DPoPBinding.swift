import Foundation

/// Which DPoP key, if any, the tokens a request gets are bound to: the key of the request's proof,
/// as the client's `dpop` setting allows or requires.
enum DPoPBinding {
    static func key(for client: ClientRecord, meta: RequestMeta) throws -> String? {
        switch client.settings.dpop {
        case .off: return nil
        case .allowed: return meta.dpopKey
        case .required:
            guard let key = meta.dpopKey else {
                throw GatehouseError.invalidDPoPProof("This client's tokens are bound to a DPoP key: send a DPoP proof.")
            }
            return key
        }
    }
}
