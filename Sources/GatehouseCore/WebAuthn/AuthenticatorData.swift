import Foundation

/// Authenticator data (WebAuthn §6.1), read strictly: the fixed 37 bytes, the attested credential data
/// when `AT` is set, the extensions map when `ED` is set, and not one byte more.
public struct AuthenticatorData: Sendable, Equatable {
    public var rpIDHash: [UInt8]
    public var flags: Flags
    public var signCount: UInt32
    public var attestedCredential: AttestedCredential?
    public var extensions: CBORValue?
    /// The bytes as received, which signatures cover.
    public var raw: [UInt8]

    public struct Flags: OptionSet, Sendable, Equatable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    public struct AttestedCredential: Sendable, Equatable {
        public var aaguid: [UInt8]
        public var credentialID: [UInt8]
        public var publicKey: COSEKey
        /// The key's CBOR bytes as the authenticator encoded them, stored as is.
        public var publicKeyBytes: [UInt8]
    }

    /// WebAuthn §5.8.3 caps credential ids at 1,023 bytes.
    public static let maximumCredentialIDLength = 1023

    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= 37 else { throw .malformed("authenticator data is shorter than 37 bytes") }
        raw = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else { throw .malformed("attested credential data is truncated") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length > 0, length <= Self.maximumCredentialIDLength else {
                throw .malformed("the credential id must be 1 to 1023 bytes")
            }
            guard bytes.count >= offset + length else { throw .malformed("the credential id is truncated") }
            let credentialID = Array(bytes[offset..<offset + length])
            offset += length
            let key: CBORValue
            let end: Int
            do { (key, end) = try CBORDecoder.decodePrefix(bytes, from: offset) } catch { throw .cbor(error) }
            attestedCredential = AttestedCredential(
                aaguid: aaguid, credentialID: credentialID, publicKey: try COSEKey(key), publicKeyBytes: Array(bytes[offset..<end]))
            offset = end
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            let value: CBORValue
            do { (value, offset) = try CBORDecoder.decodePrefix(bytes, from: offset) } catch { throw .cbor(error) }
            guard value.mapEntries != nil else { throw .malformed("authenticator extensions are not a map") }
            extensions = value
        } else {
            extensions = nil
        }
        guard offset == bytes.count else { throw .malformed("\(bytes.count - offset) bytes follow the authenticator data") }
        // §6.1: a credential that is backed up is by definition eligible for backup.
        if flags.contains(.backedUp), !flags.contains(.backupEligible) {
            throw .malformed("the backed-up flag is set without backup eligibility")
        }
    }
}
