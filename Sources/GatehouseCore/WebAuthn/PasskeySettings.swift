import Foundation

/// How passkeys are configured: the relying party Gatehouse is, and the native apps that share its
/// passkeys (through `/.well-known/apple-app-site-association` and `/.well-known/assetlinks.json`).
public struct PasskeySettings: Sendable {
    /// The RP ID; nil: the public URL's host. A registrable suffix of it (`example.com` for
    /// `login.example.com`) lets passkeys work on the app's own site too.
    public var rpID: String?
    /// What authenticators show as the site's name.
    public var rpName = "Gatehouse"
    /// Web origins besides the public URL's own whose pages may use the passkeys (`https://app.example.com`).
    public var origins: [String] = []
    /// iOS and macOS apps (`TEAMID.bundle.id`) named under `webcredentials` in the Apple app-site association.
    public var appleAppIDs: [String] = []
    /// Android apps allowed to use the passkeys: package names with their signing certificates' SHA-256
    /// fingerprints (hex, colons allowed). Each fingerprint is also an accepted origin
    /// (`android:apk-key-hash:<base64url>`), as Android's Credential Manager reports it.
    public var androidApps: [AndroidApp] = []
    public var attestationRoots = AttestationRoots()
    /// `none` (default: no attestation asked, the authenticator stays anonymous) or `direct` (asked;
    /// for operators who configured roots to check it against).
    public var attestation = "none"

    public struct AndroidApp: Sendable, Hashable {
        public var packageName: String
        public var fingerprints: [String]

        public init(packageName: String, fingerprints: [String]) {
            self.packageName = packageName
            self.fingerprints = fingerprints
        }

        /// The fingerprints as 32 bytes each, or nil when one is not a SHA-256 in hex.
        public var fingerprintBytes: [[UInt8]]? {
            var all: [[UInt8]] = []
            for fingerprint in fingerprints {
                let hex = fingerprint.replacingOccurrences(of: ":", with: "")
                guard hex.count == 64 else { return nil }
                var bytes: [UInt8] = []
                var index = hex.startIndex
                while index < hex.endIndex {
                    let next = hex.index(index, offsetBy: 2)
                    guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
                    bytes.append(byte)
                    index = next
                }
                all.append(bytes)
            }
            return all
        }
    }

    public init() {}

    /// The relying party for a server at `publicURL`.
    public func relyingParty(publicURL: String) -> RelyingParty {
        let url = URL(string: publicURL)
        let host = url?.host ?? "localhost"
        var origins = Set(origins)
        if let url, let scheme = url.scheme {
            origins.insert("\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? ""))
        }
        for app in androidApps {
            for bytes in app.fingerprintBytes ?? [] { origins.insert("android:apk-key-hash:" + Base64URL.encode(bytes)) }
        }
        let id = rpID ?? host
        // An Apple app's ceremonies report the RP ID's https origin (its associated domain).
        if !appleAppIDs.isEmpty { origins.insert("https://\(id)") }
        return RelyingParty(id: id, name: rpName, origins: origins, attestationRoots: attestationRoots)
    }
}
