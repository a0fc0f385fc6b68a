import Foundation
import GatehouseCore
import SQLKit

/// Batched deletes of rows nothing reads any more; each batch picks its keys through an index.
struct SQLHousekeepingStore: HousekeepingStore {
    let db: any SQLDatabase

    func purge(_ kind: ExpiredRows, before: Date, limit: Int) async throws -> Int {
        let cutoff = Columns.millis(before)
        let query: SQLQueryString
        switch kind {
        case .attemptCounters:
            query =
                "DELETE FROM attempt_counters WHERE counter_key IN (SELECT counter_key FROM attempt_counters WHERE window_start < \(bind: cutoff) LIMIT \(unsafeRaw: String(limit))) RETURNING 1"
        case .dpopProofs:
            query =
                "DELETE FROM dpop_proofs WHERE proof_key IN (SELECT proof_key FROM dpop_proofs WHERE expires_at < \(bind: cutoff) LIMIT \(unsafeRaw: String(limit))) RETURNING 1"
        case .deviceAuthorizations:
            query =
                "DELETE FROM device_authorizations WHERE device_code_hash IN (SELECT device_code_hash FROM device_authorizations WHERE expires_at < \(bind: cutoff) LIMIT \(unsafeRaw: String(limit))) RETURNING 1"
        case .oneTimeCodes:
            query =
                "DELETE FROM one_time_codes WHERE id IN (SELECT id FROM one_time_codes WHERE expires_at < \(bind: cutoff) LIMIT \(unsafeRaw: String(limit))) RETURNING 1"
        case .flows:
            query =
                "DELETE FROM flows WHERE id IN (SELECT id FROM flows WHERE expires_at < \(bind: cutoff) LIMIT \(unsafeRaw: String(limit))) RETURNING 1"
        case .refreshTokens:
            query =
                "DELETE FROM refresh_tokens WHERE token_hash IN (SELECT token_hash FROM refresh_tokens WHERE expires_at < \(bind: cutoff) LIMIT \(unsafeRaw: String(limit))) RETURNING 1"
        case .sessions:
            // Their refresh tokens go with them (ON DELETE CASCADE on both databases).
            query = """
                DELETE FROM sessions WHERE id IN (
                    SELECT id FROM sessions WHERE expires_at < \(bind: cutoff) OR revoked_at < \(bind: cutoff)
                    LIMIT \(unsafeRaw: String(limit))) RETURNING 1
                """
        case .browserSessions:
            query = """
                DELETE FROM browser_sessions WHERE id IN (
                    SELECT id FROM browser_sessions WHERE expires_at < \(bind: cutoff) OR revoked_at < \(bind: cutoff)
                    LIMIT \(unsafeRaw: String(limit))) RETURNING 1
                """
        case .outbox:
            query = """
                DELETE FROM outbox WHERE id IN (
                    SELECT id FROM outbox WHERE (status = 'sent' AND sent_at < \(bind: cutoff))
                        OR (status = 'dead' AND created_at < \(bind: cutoff))
                    LIMIT \(unsafeRaw: String(limit))) RETURNING 1
                """
        case .consoleSessions:
            query =
                "DELETE FROM console_sessions WHERE id IN (SELECT id FROM console_sessions WHERE expires_at < \(bind: cutoff) LIMIT \(unsafeRaw: String(limit))) RETURNING 1"
        case .anonymousUsers:
            // Sessions, credentials, codes and flows go with the user (ON DELETE CASCADE); an anonymous
            // account has no address for mail or codes to name.
            query = """
                DELETE FROM users WHERE id IN (
                    SELECT id FROM users u WHERE u.is_anonymous = 1 AND u.created_at < \(bind: cutoff)
                        AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id AND s.last_used_at >= \(bind: cutoff))
                    LIMIT \(unsafeRaw: String(limit))) RETURNING 1
                """
        case .auditEvents:
            query =
                "DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < \(bind: cutoff) LIMIT \(unsafeRaw: String(limit))) RETURNING 1"
        }
        return try await db.raw(query).all().count
    }
}
