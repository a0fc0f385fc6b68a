#ifndef GATEHOUSE_SQLITE_PLAN_STABILITY_H
#define GATEHOUSE_SQLITE_PLAN_STABILITY_H

/// Turns on SQLite's query planner stability guarantee (SQLITE_DBCONFIG_ENABLE_QPSG) for one
/// connection of sqlite-nio's SQLite. Returns SQLite's result code.
int gatehouse_sqlite_enable_qpsg(void *db);

#endif
