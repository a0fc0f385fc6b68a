import Crypto
import Foundation
import GatehouseAPI

/// A device key of one virtual user, registered during set-up, signing each challenge as the SDK does.
struct BenchDevice: Sendable {
    let deviceID: String
    let key = P256.Signing.PrivateKey()
    var authenticatorID = ""

    init(worker: Int) { deviceID = "bench-\(worker)-\(UUID().uuidString.lowercased())" }

    var publicKey: String { Self.base64URL(key.publicKey.x963Representation) }

    func sign(challengeID: String, challenge: String, clientID: String) throws -> String {
        let message = DeviceSignature.message(
            challengeID: challengeID, challenge: challenge, clientID: clientID, deviceID: deviceID, authenticatorID: authenticatorID)
        return Self.base64URL(try key.signature(for: message).rawRepresentation)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
