import Foundation
import GatehouseCore
import SQLKit

/// Where secrets are kept sealed under the server secret, as `gatehouse secret rotate` finds them: a
/// column that is the sealed value, or a field of the JSON document a column holds.
struct SealedColumn: Sendable {
    var place: String
    var table: String
    var key: String
    var column: String
    var filter: String
    var jsonField: String?
    /// A field that names the sealing secret, rewritten with the value.
    var fingerprintField: String?

    /// Every place a sealed value lives. A new kind of sealed secret is added here, or the rotation
    /// leaves it under the old secret (and `secret status` shows it).
    static let all: [SealedColumn] = [
        SealedColumn(
            place: "stable keys", table: "cluster_settings", key: "name", column: "value",
            filter: "name = '\(StableKeysRecord.name)'", jsonField: "sealed", fingerprintField: "sealed_under"),
        SealedColumn(place: "signing keys", table: "signing_keys", key: "kid", column: "sealed_private_key", filter: "1 = 1"),
        SealedColumn(
            place: "authenticator apps", table: "credentials", key: "id", column: "config",
            filter: "type = '\(CredentialType.totp.rawValue)'", jsonField: "sealed_secret"),
        // Social providers' access and refresh tokens kept for the app (`keep_tokens`).
        SealedColumn(
            place: "provider tokens", table: "credentials", key: "id", column: "config",
            filter: "type = '\(CredentialType.oidc.rawValue)' AND config LIKE '%sealed_tokens%'", jsonField: "sealed_tokens"),
        // Mail, text messages, webhooks and logout notices not yet sent (a sent one's payload is emptied).
        SealedColumn(place: "outbox", table: "outbox", key: "id", column: "payload", filter: "payload <> ''"),
        // A device authorization's PKCE verifier and the code its approval minted, for its ten minutes.
        SealedColumn(
            place: "device authorizations", table: "device_authorizations", key: "device_code_hash", column: "sealed_verifier",
            filter: "1 = 1"),
        SealedColumn(
            place: "approved device authorizations", table: "device_authorizations", key: "device_code_hash", column: "sealed_code",
            filter: "sealed_code IS NOT NULL"),
        // Recovery codes shown once during a hosted enrolment, for the minutes the flow lives.
        SealedColumn(
            place: "sign-ins in progress", table: "flows", key: "id", column: "data", filter: "data LIKE '%sealedRecoveryCodes%'",
            jsonField: "sealedRecoveryCodes"),
    ]
}

/// What a pass over the sealed values found, per place.
public struct ResealReport: Sendable {
    public struct Place: Sendable {
        public var name: String
        /// Sealed under the current secret already.
        public var current = 0
        /// Sealed under a previous secret: resealed (or, in a dry run, still needing it).
        public var previous = 0
        /// Sealed under no secret of the ring: left as they are.
        public var unopenable = 0
    }

    public var places: [Place]

    public var previous: Int { places.reduce(0) { $0 + $1.previous } }
    public var unopenable: Int { places.reduce(0) { $0 + $1.unopenable } }
}

extension SQLPersistence {
    /// Seals every secret at rest under the ring's current secret, in batches of `batchSize` rows,
    /// each batch one short transaction, so nodes keep serving. A row changed meanwhile (a TOTP code
    /// accepted, a message sent) is left to the next pass: the update only applies to the value it
    /// read. With `dryRun`, only counts.
    public func resealSecrets(
        _ secret: ServerSecret, batchSize: Int = 200, dryRun: Bool = false,
        progress: @escaping @Sendable (_ place: String, _ done: Int) -> Void = { _, _ in }
    ) async throws -> ResealReport {
        var places: [ResealReport.Place] = []
        for column in SealedColumn.all {
            var place = ResealReport.Place(name: column.place)
            var cursor = ""
            while true {
                let after = cursor
                let rows = try await readDatabase { db in
                    try await db.raw(
                        """
                        SELECT \(unsafeRaw: column.key) AS k, \(unsafeRaw: column.column) AS v FROM \(unsafeRaw: column.table)
                        WHERE \(unsafeRaw: column.filter) AND \(unsafeRaw: column.key) > \(bind: after)
                        ORDER BY \(unsafeRaw: column.key) LIMIT \(bind: batchSize)
                        """
                    ).all().map { (try $0.string("k"), try $0.string("v")) }
                }
                guard let last = rows.last else { break }
                cursor = last.0
                var updates: [(key: String, old: String, new: String)] = []
                for (key, value) in rows {
                    switch Self.reseal(value, column: column, secret: secret) {
                    case .current: place.current += 1
                    case .unopenable: place.unopenable += 1
                    case .resealed(let new):
                        place.previous += 1
                        updates.append((key, value, new))
                    }
                }
                if !dryRun, !updates.isEmpty {
                    let changes = updates
                    try await transactionOnDatabase { db in
                        for change in changes {
                            try await db.raw(
                                """
                                UPDATE \(unsafeRaw: column.table) SET \(unsafeRaw: column.column) = \(bind: change.new)
                                WHERE \(unsafeRaw: column.key) = \(bind: change.key) AND \(unsafeRaw: column.column) = \(bind: change.old)
                                """
                            ).run()
                        }
                    }
                }
                progress(column.place, place.current + place.previous + place.unopenable)
            }
            places.append(place)
        }
        return ResealReport(places: places)
    }

    private enum Resealed {
        case current
        case resealed(String)
        case unopenable
    }

    private static func reseal(_ value: String, column: SealedColumn, secret: ServerSecret) -> Resealed {
        guard let field = column.jsonField else {
            do {
                return try secret.resealed(value).map(Resealed.resealed) ?? .current
            } catch { return .unopenable }
        }
        guard var document = (try? JSONSerialization.jsonObject(with: Data(value.utf8))) as? [String: Any],
            let sealed = document[field] as? String
        else { return .current }  // nothing sealed in this row
        do {
            guard let new = try secret.resealed(sealed) else { return .current }
            document[field] = new
            if let fingerprint = column.fingerprintField { document[fingerprint] = secret.fingerprints[0] }
            let data = try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
            return .resealed(String(decoding: data, as: UTF8.self))
        } catch { return .unopenable }
    }
}
