import Foundation

/// An attestation object (WebAuthn §6.5): the format's name, its statement and the authenticator data.
public struct AttestationObject: Sendable {
    public var format: String
    public var statement: CBORValue
    public var authenticatorData: AuthenticatorData

    /// An attestation object with a certificate chain is a few kilobytes; 64 KiB bounds decoding work.
    public static let maximumLength = 64 * 1024

    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= Self.maximumLength else { throw .malformed("the attestation object is longer than 64 KiB") }
        let value: CBORValue
        do { value = try CBORDecoder.decode(bytes) } catch { throw .cbor(error) }
        guard let entries = value.mapEntries, entries.count == 3, let format = value[text: "fmt"]?.text,
            let statement = value[text: "attStmt"], statement.mapEntries != nil, let authData = value[text: "authData"]?.bytes
        else { throw .malformed("the attestation object needs exactly fmt, attStmt and authData") }
        self.format = format
        self.statement = statement
        self.authenticatorData = try AuthenticatorData(authData)
    }
}
