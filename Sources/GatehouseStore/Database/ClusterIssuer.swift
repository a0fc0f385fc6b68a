import Foundation
import GatehouseCore
import SQLKit

/// What starting a node found about the token issuer recorded for its database.
public enum IssuerClaim: Sendable, Equatable {
    /// The first node: its issuer is now the database's.
    case recorded
    case matched
    /// Changed on purpose (the operator allowed it); tokens of the old issuer stop verifying.
    case changed(from: String)
}

/// Another node of this database signs with another issuer: its tokens would be refused here and
/// these there, so users behind a load balancer would get random 401s.
public struct IssuerMismatch: Error, CustomStringConvertible {
    public let recorded: String
    public let configured: String

    public var description: String {
        """
        this database's nodes issue tokens as \(recorded), but this node is configured as \(configured). \
        Give every node the same GATEHOUSE_PUBLIC_URL (the address clients use, e.g. the load balancer's). \
        To change the issuer on purpose (every signed-in user must sign in again), start once with \
        GATEHOUSE_ALLOW_ISSUER_CHANGE=1.
        """
    }
}

extension SQLPersistence {
    /// Records `issuer` as the database's on first start, and compares with it afterwards.
    public func claimIssuer(_ issuer: String, now: Date, allowChange: Bool) async throws -> IssuerClaim {
        try await transactionOnDatabase { db in
            // Two first nodes starting at once: one insert wins, the other compares with it.
            let inserted =
                try await db.raw(
                    """
                    INSERT INTO cluster_settings (name, value, updated_at) VALUES ('issuer', \(bind: issuer), \(bind: Columns.millis(now)))
                    ON CONFLICT (name) DO NOTHING RETURNING name
                    """
                ).first() != nil
            if inserted { return .recorded }
            let recorded =
                try await db.raw("SELECT value FROM cluster_settings WHERE name = 'issuer'").first()
                .map { try $0.string("value") } ?? issuer
            if recorded == issuer { return .matched }
            guard allowChange else { throw IssuerMismatch(recorded: recorded, configured: issuer) }
            try await db.raw(
                "UPDATE cluster_settings SET value = \(bind: issuer), updated_at = \(bind: Columns.millis(now)) WHERE name = 'issuer'"
            ).run()
            return .changed(from: recorded)
        }
    }
}
