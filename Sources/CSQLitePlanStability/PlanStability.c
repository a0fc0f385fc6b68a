#include "CSQLitePlanStability.h"

// Written by hand because Swift cannot call a C function with variable arguments, and
// sqlite3_db_config is one; no listed package wraps it. The prototype is declared here rather than
// included: sqlite-nio's header belongs to an internal target a C target of ours cannot depend on.
// The symbol is sqlite-nio's own copy of SQLite, linked into the same binary.
extern int sqlite_nio_sqlite3_db_config(void *db, int op, ...);

// SQLITE_DBCONFIG_ENABLE_QPSG, from sqlite3.h.
#define GATEHOUSE_SQLITE_DBCONFIG_ENABLE_QPSG 1007

int gatehouse_sqlite_enable_qpsg(void *db) {
    int now = 0;
    return sqlite_nio_sqlite3_db_config(db, GATEHOUSE_SQLITE_DBCONFIG_ENABLE_QPSG, 1, &now);
}
