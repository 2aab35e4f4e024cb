/* The store's handle and statement helpers, shared by its writing and loading halves. */
#ifndef TANDEM_ORCH_STORE_DB_H
#define TANDEM_ORCH_STORE_DB_H

#include <sqlite3.h>

#include "orch_store.h"

struct orch_store {
    sqlite3 *db;
    char error[256];
};

/* Prepares sql, or records the error and returns NULL. */
sqlite3_stmt *orch_store_prepare(orch_store *s, const char *sql);
/* Steps a prepared write to its end and finalizes it: 0, or -1 with the error recorded. */
int orch_store_finish(orch_store *s, sqlite3_stmt *st);
/* A text column copied into out (empty for NULL). */
void orch_store_text(sqlite3_stmt *st, int col, char *out, size_t outlen);

#endif
