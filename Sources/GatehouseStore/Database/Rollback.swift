import Logging
import SQLKit

/// The one rollback of a failed transaction, for the SQLite write queue and PostgreSQL's transactions.
enum Rollback {
    /// Rolls back a failed transaction. SQLite has already rolled back after a full disk or an I/O
    /// error, and a lost PostgreSQL connection takes its transaction with it, so their refusals are the
    /// expected answer, not a second failure to log.
    static func run(_ db: any SQLDatabase, logger: Logger) async {
        do {
            try await db.raw("ROLLBACK").run()
        } catch let error as SQLiteStatementError where error.message.contains("no transaction is active") {
            logger.debug("rollback: SQLite had already rolled the transaction back")
        } catch  where StorageFaults.code(of: error) != nil {
            // The connection is gone (the storage episode is logged once): so is its transaction.
            logger.debug("rollback: the storage failed; the transaction went with the connection")
        } catch {
            logger.error("rollback failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
