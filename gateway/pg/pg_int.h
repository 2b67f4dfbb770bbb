/*
 * pg_int: what the files of the PostgreSQL front-end share (pg_sess.c:
 * connections, startup, authentication, cancel, settings; pg_query.c:
 * simple and extended query, statements run as lease operations). Not for
 * other modules: they include pg_fe.h.
 */
#ifndef LG_PG_INT_H
#define LG_PG_INT_H

#include <stdint.h>

#include "gateway/config.h"
#include "gateway/conn/auth.h"
#include "gateway/conn/conn.h"
#include "gateway/lease/lsess.h"
#include "gateway/pg/pg_fe.h"
#include "gateway/pg/pg_fn.h"
#include "gateway/pg/pg_sql.h"
#include "protocols/pg/pg.h"

struct pg_fe {
	struct conn_proto proto;
	struct srv *srv;
	const struct cfg *cfg;
	struct lsvc *svc;
	const struct auth_pg *auth;
	struct pg_limits lim;
	struct buf refusal;
	enum cfg_pg_tls tls;			    /* OFF when no TLS context */
	bool (*ready)(void *arg, const char **why); /* pg_fe_set_gate */
	void *ready_arg;
	struct pg_cancel_gate *cancels; /* CancelRequests' wrong keys (pg_cancel.h) */
};

enum pgs_state { PGS_STARTUP, PGS_SASL_INIT, PGS_SASL_FINAL, PGS_MD5, PGS_PASSWORD, PGS_READY };

/* Settings (SET/SHOW): index into the table of pg_sess.c. */
enum pg_guc {
	GUC_APPLICATION_NAME,
	GUC_CLIENT_ENCODING,
	GUC_DATESTYLE,
	GUC_INTERVALSTYLE,
	GUC_TIMEZONE,
	GUC_EXTRA_FLOAT_DIGITS,
	GUC_SEARCH_PATH,
	GUC_LOCK_TIMEOUT,
	GUC_STATEMENT_TIMEOUT,
	GUC_LEASE_MS,
	GUC_IDLE_XACT_TIMEOUT,
	GUC_STANDARD_CONFORMING_STRINGS,
	GUC_INTEGER_DATETIMES,
	GUC_SERVER_VERSION,
	GUC_SERVER_VERSION_NUM,
	GUC_SERVER_ENCODING,
	GUC_IS_SUPERUSER,
	GUC_SESSION_AUTHORIZATION,
	GUC_DEFAULT_XACT_READ_ONLY,
	GUC_IN_HOT_STANDBY,
	GUC_XACT_ISOLATION,
	GUC_DEFAULT_XACT_ISOLATION,
	GUC_XACT_READ_ONLY,
	GUC_MAX_IDENTIFIER_LENGTH,
	GUC_BYTEA_OUTPUT,
	GUC_ROW_SECURITY,
	GUC_TRACEPARENT,
	GUC_COUNT
};
#define PG_GUC_VAL 128

/* A prepared statement (Parse). */
struct pg_prep {
	struct pg_prep *next;
	char name[64];
	char *text;
	struct sql_stmt st;
	unsigned ntypes; /* max(declared, $n used) */
	uint32_t *types;
};

/* A bound portal (Bind): its statement and parameter values (copied). */
struct pg_val {
	const char *p; /* NULL: SQL NULL */
	int32_t len;
	int16_t fmt;
};
struct pg_portal {
	struct pg_portal *next;
	char name[64];
	struct pg_prep *prep;
	unsigned nparams;
	struct pg_val *params;
	char *data;
	unsigned nrfmt;
	int16_t *rfmt;
	/* room of the arrays: a closed portal is kept as the session's spare
	 * and reused by the next Bind, so the per-statement path allocates
	 * nothing once warm */
	unsigned params_cap, rfmt_cap;
	size_t data_cap;
};

struct pgs {
	struct conn c; /* first: the connection layer allocates struct pgs */
	struct pg_fe *fe;
	struct pg_reader rd;
	enum pgs_state st;
	char user[64], database[64];
	uint32_t pid, secret;
	struct auth_scram *scram;
	unsigned char md5salt[4];
	/* an authentication's answer held back (auth_delay_ms): its verdict
	 * and the SCRAM server-final message */
	bool auth_ok;
	char *auth_final;
	struct lsess *ls;
	bool in_block, failed, skip_sync;
	/* the simple query being run (a copy: the reader's buffer moves) */
	char *q;
	size_t qcap, qlen, qpos;
	bool in_query, q_any;
	/* the statement waiting for a lease answer */
	const struct pg_fn *pend_fn;
	int pend_timeout; /* what bounded the wait: 0 the call, 1 lock_, 2 statement_timeout */
	const struct pg_portal *pend_portal; /* NULL: simple query (text) */
	char pend_alias[SQL_ALIAS_MAX];
	/* releases being written (COMMIT, DISCARD ALL, an implicit
	 * transaction's end): what is written once they are, the command tag,
	 * or NULL: ReadyForQuery */
	const char *pend_tag;
	struct pg_prep *preps;
	struct pg_portal *portals;
	unsigned npreps, nportals; /* named ones: --max-prepared-statements, --max-portals */
	struct pg_portal *spare;
	char guc[GUC_COUNT][PG_GUC_VAL];
	struct trace_ctx trace;		       /* leasegate.traceparent; .valid false: none */
	char guc_saved[GUC_COUNT][PG_GUC_VAL]; /* before SET LOCAL */
	bool guc_local[GUC_COUNT];
	int64_t lock_timeout_ms, statement_timeout_ms, lease_ms;
	/* pg_locks: the wall time (µs since the Unix epoch) the session's
	 * last wait began, and its transactions begun (virtualtransaction's
	 * local number) */
	int64_t wait_since_us;
	uint32_t xacts;
};

static inline struct pgs *pgs_of(struct conn *c)
{
	return (struct pgs *)c;
}

/* --- pg_sess.c --- */

/* The error (ERROR) or fatal error (FATAL: the connection closes after). */
void pgs_error(struct pgs *s, const char *sqlstate, const char *msg, const char *hint);
void pgs_fatal(struct pgs *s, const char *sqlstate, const char *msg);
void pgs_notice(struct pgs *s, const char *severity, const char *sqlstate, const char *msg,
		const char *hint);
/* Settings by name (case-insensitive), -1 if unknown. */
int pgs_guc_find(const char *name);
const char *pgs_guc_name(int g);
/* Sets g to val (local: until the transaction ends). false with the error
 * written when the value is bad. */
bool pgs_guc_set(struct pgs *s, int g, const char *val, size_t len, bool local);
void pgs_guc_reset(struct pgs *s, int g);
/* SET LOCAL values end with the transaction. */
void pgs_guc_xact_end(struct pgs *s);
/* The session's lease session (made on first use); NULL: out of memory,
 * error written. */
struct lsess *pgs_lsess(struct pgs *s);

/* A typed value of a result or an argument (text: s, len; else i). */
struct val {
	bool null;
	int64_t i;
	const char *s;
	size_t len;
};

/* --- pg_value.c --- */

/* The columns of the result of fn (alias: a one-column result's name), in
 * po's formats (NULL: text); how many (<= PG_FN_MAX_COLS). */
unsigned pgv_fn_columns(const struct pg_fn *fn, const char *alias, const struct pg_portal *po,
			struct pg_col *cols);
/* One DataRow of n (<= SQL_MAX_COLS) values, each in its column's type and
 * format (a timestamptz's .i: µs since the Unix epoch). */
void pgv_put_row(struct buf *o, unsigned n, const struct pg_col *cols, const struct val *v);
/* Argument i of st (a literal or a parameter of po) as type want. false:
 * the error is written (pgx_error). */
bool pgv_arg(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po, unsigned i,
	     uint32_t want, struct val *v);
/* pgv_arg for the argument a (a catalogue query's predicate). */
bool pgv_value(struct pgs *s, const struct sql_arg *a, const struct pg_portal *po, uint32_t want,
	       struct val *v);
/* The type argument i of st is read as. */
uint32_t pgv_arg_type(const struct sql_stmt *st, unsigned i);
/* st's call (SQL_SELECT) resolves to its function's row as PostgreSQL
 * resolves a call: its arity, and each argument's type (a literal's, a
 * cast's, a parameter's declared in types[0..ntypes), 0 undeclared)
 * implicitly cast to the row's (pg_advisory_lock(true) does not exist).
 * false: 42883 written. */
bool pgv_check_call(struct pgs *s, const struct sql_stmt *st, const uint32_t *types,
		    unsigned ntypes) __attribute__((warn_unused_result));

/* --- pg_exec.c --- */

/* Runs one statement (po: its portal, NULL in a simple query): writes its
 * result and CommandComplete or its error, or suspends the session until
 * the lease layer answers. */
void pgx_run(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po);
/* An error of the statement running: written; the rest of a simple query
 * is skipped, an extended one skips to Sync; an open transaction fails.
 * pgx_failed: the same when the error is written already. */
void pgx_error(struct pgs *s, const char *sqlstate, const char *msg, const char *hint);
/* What a function's handler (pg_fns.c) answers through. pgx_answer: the
 * lease operation st started (rc, now: ls_*'s answer; pgx_lease_done its
 * callback, s its argument) is rendered now, or when it ends (the session
 * waits meanwhile); timeout: what bounded its wait (0 the call, 1
 * lock_timeout, 2 statement_timeout). pgx_render: res rendered as fn's
 * result (common errors, then fn->fill). pgx_value_row: one row of st's
 * columns with the values v. */
void pgx_answer(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po, int timeout,
		enum ls_status rc, const struct ls_result *now);
void pgx_lease_done(void *arg, const struct ls_result *res);
void pgx_render(struct pgs *s, const struct pg_fn *fn, int timeout, const struct pg_portal *po,
		const char *alias, const struct ls_result *res);
void pgx_value_row(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po,
		   const struct val *v);
/* After an ACL reload: the session's user may still run the statement
 * waiting for a lease (pend_fn) on the lock name. */
bool pgx_may_wait(const struct pgs *s, const char *name) __attribute__((warn_unused_result));
void pgx_failed(struct pgs *s);
/* st (SQL_UNSUPPORTED) refused: 0A000 naming its first words. */
void pgx_unsupported(struct pgs *s, const struct sql_stmt *st);
/* The implicit transaction ends (outside a block; Sync, the end of a
 * simple query): its xact locks are released and its SET LOCAL values
 * end, then ReadyForQuery is written — once the releases are written (the
 * session waits until then), so that the client's next step finds the
 * locks free on every replica. */
void pgx_ready(struct pgs *s);
/* The result columns of st (0: none), in po's formats. */
unsigned pgx_columns(const struct sql_stmt *st, const struct pg_portal *po, struct pg_col *cols);
/* The type of parameter $n of st, from where it is used. */
uint32_t pgx_param_type(const struct sql_stmt *st, int n);

/* --- pg_catalog.c --- */

/* A type loader's lookup (CAT_PG_TYPE): its row, or none, of the types
 * leasegate has. */
void pgc_type_lookup(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po);

/* --- pg_locks.c --- */

/* The oid pg_database gives the database name (len bytes): >= 16384,
 * the same on every replica (a hash of the name). */
uint32_t pgl_database_oid(const char *name, size_t len);
/* The wall time now, µs since the Unix epoch (pg_locks.waitstart). */
int64_t pgl_wall_us(void);
/* SELECT oid FROM pg_database WHERE datname = ... (CAT_PG_DATABASE): one
 * row, the name's oid (any name: leasegate has every database). */
void pgl_database(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po);
/* A query of pg_locks (CAT_PG_LOCKS): the advisory locks held and awaited
 * by this replica's PostgreSQL sessions, filtered, sorted, limited. */
void pgl_query(struct pgs *s, const struct sql_stmt *st, const struct pg_portal *po);

/* --- pg_fns.c --- */

/* The lock name st's call names with arguments a, for the ACL check
 * (pg_fn.lock_arg): 1 with *key, *len set (buf: room for an advisory
 * name, STORE_NAME_MAX + 64), or 0: none. */
unsigned pgf_lock_key(const struct pgs *s, const struct sql_stmt *st, const struct val *a,
		      char *buf, const char **key, size_t *len);

/* --- pg_query.c --- */

/* Closes the prepared statement name (NULL: every one). */
void pgq_close_prep(struct pgs *s, const char *name);

/* Runs one typed message of a ready session. */
enum conn_step pgq_message(struct pgs *s, const struct pg_msg *m);
/* Runs the next statement of the simple query in progress. */
void pgq_continue(struct pgs *s);
/* Frees statements and portals. */
void pgq_free_all(struct pgs *s);
char pgq_status(const struct pgs *s);

#endif
