#ifndef PUSHPROVIDER_CSQLITE_SHIM_H
#define PUSHPROVIDER_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast macro Swift cannot import. */
static inline sqlite3_destructor_type pp_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/* Binding helpers that always copy (SQLITE_TRANSIENT), so Swift buffers may be freed right after. */
static inline int pp_sqlite_bind_text(sqlite3_stmt *s, int i, const char *text, int n) {
    return sqlite3_bind_text(s, i, text, n, SQLITE_TRANSIENT);
}
static inline int pp_sqlite_bind_blob(sqlite3_stmt *s, int i, const void *bytes, int n) {
    return sqlite3_bind_blob(s, i, bytes, n, SQLITE_TRANSIENT);
}

/* sqlite3_db_config is variadic; this form sets an integer option (e.g. SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE). */
static inline int pp_sqlite3_db_config_int(sqlite3 *db, int op, int value) {
    return sqlite3_db_config(db, op, value, (int *)0);
}
#endif
