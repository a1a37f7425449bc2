/* SPDX-License-Identifier: MIT */
/* SQLite (Debian's libsqlite3, which serialises with its own recursive
 * pthread mutexes) used from several threads, for the shim's real-program
 * tests (tests/apps/): the same result on glibc and under hotlock-run.
 *  (a) one connection opened SQLITE_OPEN_FULLMUTEX, shared by 8 threads,
 *      each inserting 2000 rows in transactions of 50;
 *  (b) 4 threads with a connection each to one WAL database, each inserting
 *      2000 rows in transactions of 25 and reading its own rows back after
 *      each while the others write (busy timeout 10 s).
 * Checks the row counts and sums exactly; prints one deterministic line.
 *   sqlite_threads DIR */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHARED_THREADS 8
#define WAL_THREADS 4
#define ROWS 2000

static sqlite3 *shared_db;
static char wal_path[4096];
static int failed;

static void fail(const char *what, int rc, sqlite3 *db)
{
	fprintf(stderr, "sqlite_threads: %s: %d %s\n", what, rc, db ? sqlite3_errmsg(db) : "");
	failed = 1;
}

static int exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
	if (rc != SQLITE_OK) {
		fprintf(stderr, "sqlite_threads: %s: %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		failed = 1;
	}
	return rc;
}

static void insert_rows(sqlite3 *db, const char *table, long id, int batch)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "INSERT INTO %s(thread, v) VALUES(?, ?)", table);
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		fail("prepare", rc, db);
		return;
	}
	for (int i = 0; i < ROWS; i++) {
		if (i % batch == 0 && exec(db, "BEGIN IMMEDIATE") != SQLITE_OK)
			break;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, id * 100000 + i);
		if ((rc = sqlite3_step(st)) != SQLITE_DONE)
			fail("insert", rc, db);
		sqlite3_reset(st);
		if (i % batch == batch - 1) {
			if (exec(db, "COMMIT") != SQLITE_OK)
				break;
			/* Read while the others write: this thread's committed
			 * rows, all of them, in a snapshot of its own. */
			char q_sql[128];
			snprintf(q_sql, sizeof(q_sql), "SELECT count(*) FROM %s WHERE thread = ?", table);
			sqlite3_stmt *q;
			if ((rc = sqlite3_prepare_v2(db, q_sql, -1, &q, NULL)) != SQLITE_OK) {
				fail("prepare (read)", rc, db);
				break;
			}
			sqlite3_bind_int64(q, 1, id);
			if ((rc = sqlite3_step(q)) != SQLITE_ROW)
				fail("read", rc, db);
			else if (sqlite3_column_int64(q, 0) != i + 1)
				fail("read: rows of this thread", (int)sqlite3_column_int64(q, 0), db);
			sqlite3_finalize(q);
		}
	}
	sqlite3_finalize(st);
}

static void *shared_main(void *arg)
{
	/* One connection, many threads: SQLite serialises each call; a
	 * transaction is the connection's, so threads take turns in them. */
	static pthread_mutex_t txn = PTHREAD_MUTEX_INITIALIZER;
	long id = (long)(intptr_t)arg;
	for (int b = 0; b < ROWS / 50; b++) {
		pthread_mutex_lock(&txn);
		sqlite3_stmt *st;
		exec(shared_db, "BEGIN");
		if (sqlite3_prepare_v2(shared_db, "INSERT INTO s(thread, v) VALUES(?, ?)", -1, &st, NULL) ==
		    SQLITE_OK) {
			for (int i = b * 50; i < b * 50 + 50; i++) {
				sqlite3_bind_int64(st, 1, id);
				sqlite3_bind_int64(st, 2, id * 100000 + i);
				if (sqlite3_step(st) != SQLITE_DONE)
					fail("insert (shared)", 0, shared_db);
				sqlite3_reset(st);
			}
			sqlite3_finalize(st);
		}
		exec(shared_db, "COMMIT");
		pthread_mutex_unlock(&txn);
		/* Reads from every thread at once through the one connection. */
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(shared_db, "SELECT count(*) FROM s", -1, &q, NULL) == SQLITE_OK) {
			sqlite3_step(q);
			sqlite3_finalize(q);
		}
	}
	return NULL;
}

static void *wal_main(void *arg)
{
	long id = (long)(intptr_t)arg;
	sqlite3 *db;
	int rc = sqlite3_open_v2(wal_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		fail("open (wal)", rc, NULL);
		return NULL;
	}
	sqlite3_busy_timeout(db, 10000);
	insert_rows(db, "w", id, 25);
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM w WHERE thread = ?", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(q, 1, id);
		if (sqlite3_step(q) != SQLITE_ROW || sqlite3_column_int64(q, 0) != ROWS)
			fail("own rows (wal)", 0, db);
		sqlite3_finalize(q);
	}
	sqlite3_close(db);
	return NULL;
}

static void check(sqlite3 *db, const char *table, int threads, long *count, long long *sum)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT count(*), sum(v) FROM %s", table);
	sqlite3_stmt *q;
	*count = -1;
	*sum = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW) {
		*count = (long)sqlite3_column_int64(q, 0);
		*sum = sqlite3_column_int64(q, 1);
	}
	sqlite3_finalize(q);
	long long want = 0;
	for (long t = 0; t < threads; t++)
		for (int i = 0; i < ROWS; i++)
			want += t * 100000 + i;
	if (*count != (long)threads * ROWS || *sum != want) {
		fprintf(stderr, "sqlite_threads: table %s: %ld rows, sum %lld; expected %ld, %lld\n", table,
			*count, *sum, (long)threads * ROWS, want);
		failed = 1;
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sqlite_threads DIR\n");
		return 2;
	}
	if (!sqlite3_threadsafe()) {
		fprintf(stderr, "sqlite_threads: this libsqlite3 is built without threads\n");
		return 1;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/shared.db", argv[1]);
	snprintf(wal_path, sizeof(wal_path), "%s/wal.db", argv[1]);
	/* What an earlier run left, its journals included (a stale -wal
	 * would be replayed into the new database). */
	const char *suffix[] = {"", "-journal", "-wal", "-shm"};
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		char old[4200];
		snprintf(old, sizeof(old), "%s%s", path, suffix[i]);
		remove(old);
		snprintf(old, sizeof(old), "%s%s", wal_path, suffix[i]);
		remove(old);
	}
	int rc = sqlite3_open_v2(path, &shared_db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc != SQLITE_OK) {
		fail("open", rc, NULL);
		return 1;
	}
	exec(shared_db, "CREATE TABLE s(thread INTEGER, v INTEGER)");
	pthread_t t[SHARED_THREADS];
	for (long i = 0; i < SHARED_THREADS; i++)
		pthread_create(&t[i], NULL, shared_main, (void *)(intptr_t)i);
	for (int i = 0; i < SHARED_THREADS; i++)
		pthread_join(t[i], NULL);
	long n1;
	long long s1;
	check(shared_db, "s", SHARED_THREADS, &n1, &s1);
	sqlite3_close(shared_db);

	sqlite3 *db;
	rc = sqlite3_open_v2(wal_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		fail("open (wal)", rc, NULL);
		return 1;
	}
	exec(db, "PRAGMA journal_mode=WAL");
	exec(db, "CREATE TABLE w(thread INTEGER, v INTEGER)");
	pthread_t w[WAL_THREADS];
	for (long i = 0; i < WAL_THREADS; i++)
		pthread_create(&w[i], NULL, wal_main, (void *)(intptr_t)i);
	for (int i = 0; i < WAL_THREADS; i++)
		pthread_join(w[i], NULL);
	long n2;
	long long s2;
	check(db, "w", WAL_THREADS, &n2, &s2);
	sqlite3_close(db);
	printf("sqlite_threads: shared connection %ld rows sum %lld; wal %ld rows sum %lld: %s\n", n1, s1,
	       n2, s2, failed ? "FAILED" : "ok");
	return failed;
}
