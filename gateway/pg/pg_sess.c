/*
 * pg_sess: the PostgreSQL front-end's connections (see pg_fe.h): the
 * conn_proto ops, the startup packet (SSLRequest, GSSENCRequest,
 * CancelRequest, StartupMessage), authentication through
 * gateway/conn/auth.h, the greeting (ParameterStatus, BackendKeyData),
 * losses told as WARNING notices, and the session's settings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <openssl/crypto.h>

#include "gateway/config.h"
#include "gateway/conn/server.h"
#include "gateway/conn/transport.h"
#include "gateway/obs/log.h"
#include "gateway/pg/pg_cancel.h"
#include "gateway/pg/pg_int.h"

/* --- settings --- */

struct guc_def {
	const char *name;
	const char *def; /* NULL: filled at start of the session */
	bool report;	 /* sent as ParameterStatus when it changes */
	bool readonly;
};

static const struct guc_def gucs[GUC_COUNT] = {
	[GUC_APPLICATION_NAME] = {"application_name", "", true, false},
	[GUC_CLIENT_ENCODING] = {"client_encoding", "UTF8", true, false},
	[GUC_DATESTYLE] = {"DateStyle", "ISO, MDY", true, false},
	[GUC_INTERVALSTYLE] = {"IntervalStyle", "postgres", true, false},
	[GUC_TIMEZONE] = {"TimeZone", "UTC", true, false},
	[GUC_EXTRA_FLOAT_DIGITS] = {"extra_float_digits", "1", false, false},
	[GUC_SEARCH_PATH] = {"search_path", "\"$user\", public", false, false},
	[GUC_LOCK_TIMEOUT] = {"lock_timeout", "0", false, false},
	[GUC_STATEMENT_TIMEOUT] = {"statement_timeout", "0", false, false},
	[GUC_LEASE_MS] = {"leasegate.lease_ms", NULL, false, false},
	[GUC_IDLE_XACT_TIMEOUT] = {"idle_in_transaction_session_timeout", "0", false, false},
	[GUC_STANDARD_CONFORMING_STRINGS] = {"standard_conforming_strings", "on", true, true},
	[GUC_INTEGER_DATETIMES] = {"integer_datetimes", "on", true, true},
	[GUC_SERVER_VERSION] = {"server_version", "15.0", true, true},
	[GUC_SERVER_VERSION_NUM] = {"server_version_num", "150000", false, true},
	[GUC_SERVER_ENCODING] = {"server_encoding", "UTF8", true, true},
	[GUC_IS_SUPERUSER] = {"is_superuser", "off", true, true},
	[GUC_SESSION_AUTHORIZATION] = {"session_authorization", NULL, true, true},
	[GUC_DEFAULT_XACT_READ_ONLY] = {"default_transaction_read_only", "off", true, false},
	[GUC_IN_HOT_STANDBY] = {"in_hot_standby", "off", true, true},
	[GUC_XACT_ISOLATION] = {"transaction_isolation", "read committed", false, false},
	[GUC_DEFAULT_XACT_ISOLATION] = {"default_transaction_isolation", "read committed", false,
					false},
	[GUC_XACT_READ_ONLY] = {"transaction_read_only", "off", false, false},
	[GUC_MAX_IDENTIFIER_LENGTH] = {"max_identifier_length", "63", false, true},
	[GUC_BYTEA_OUTPUT] = {"bytea_output", "hex", false, false},
	[GUC_ROW_SECURITY] = {"row_security", "on", false, false},
	[GUC_TRACEPARENT] = {"leasegate.traceparent", "", false, false},
};

int pgs_guc_find(const char *name)
{
	for (int g = 0; g < GUC_COUNT; g++)
		if (strcasecmp(gucs[g].name, name) == 0)
			return g;
	return -1;
}

const char *pgs_guc_name(int g)
{
	return gucs[g].name;
}

/* A duration setting: an integer of ms, or with a unit (ms, s, min, h,
 * d), as PostgreSQL reads lock_timeout. */
static bool parse_ms(const char *v, size_t len, int64_t *out)
{
	char tmp[64];
	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, v, len);
	tmp[len] = '\0';
	char *end;
	long long n = strtoll(tmp, &end, 10);
	if (end == tmp || n < 0)
		return false;
	while (*end == ' ')
		end++;
	static const struct {
		const char *unit;
		long long ms;
	} units[] = {{"", 1},	     {"ms", 1},	     {"s", 1000},
		     {"min", 60000}, {"h", 3600000}, {"d", 86400000}};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i].unit) == 0) {
			if (n > INT32_MAX / units[i].ms + 1)
				return false;
			*out = n * units[i].ms;
			return *out <= INT32_MAX;
		}
	return false;
}

static void report(struct pgs *s, int g)
{
	if (gucs[g].report && s->st == PGS_READY)
		pg_parameter_status(&s->c.out, gucs[g].name, s->guc[g]);
}

/* Applies the value of a setting leasegate acts on. */
static bool apply(struct pgs *s, int g, const char *v, size_t len)
{
	int64_t ms;
	switch (g) {
	case GUC_LOCK_TIMEOUT:
	case GUC_STATEMENT_TIMEOUT:
		if (!parse_ms(v, len, &ms)) {
			char msg[200];
			snprintf(msg, sizeof(msg), "invalid value for parameter \"%s\": \"%.*s\"",
				 gucs[g].name, (int)(len > 64 ? 64 : len), v);
			pgs_error(s, "22023", msg,
				  "Valid units are \"ms\", \"s\", \"min\", \"h\" and \"d\".");
			return false;
		}
		*(g == GUC_LOCK_TIMEOUT ? &s->lock_timeout_ms : &s->statement_timeout_ms) = ms;
		return true;
	case GUC_LEASE_MS:
		if (!parse_ms(v, len, &ms) || ms < 0) {
			pgs_error(s, "22023", "invalid value for parameter \"leasegate.lease_ms\"",
				  "milliseconds of the lease of locks taken from now on, 0: the "
				  "configured default");
			return false;
		}
		s->lease_ms = ms;
		return true;
	case GUC_TRACEPARENT: {
		/* the client's W3C trace context: the spans of the locks taken
		 * from now on join its trace; '' (RESET) ends that */
		char tp[PG_GUC_VAL];
		snprintf(tp, sizeof(tp), "%.*s", (int)len, v);
		if (len == 0) {
			s->trace.valid = false;
			return true;
		}
		if (!trace_parse_traceparent(tp, &s->trace)) {
			pgs_error(s, "22023",
				  "invalid value for parameter \"leasegate.traceparent\"",
				  "A W3C traceparent: 00-<32 hex digits>-<16 hex digits>-<2 hex "
				  "digits>, or '' for none.");
			return false;
		}
		return true;
	}
	default:
		return true;
	}
}

bool pgs_guc_set(struct pgs *s, int g, const char *val, size_t len, bool local)
{
	if (gucs[g].readonly) {
		char msg[160];
		snprintf(msg, sizeof(msg), "parameter \"%s\" cannot be changed", gucs[g].name);
		pgs_error(s, "55P02", msg, NULL);
		return false;
	}
	if (len >= PG_GUC_VAL)
		len = PG_GUC_VAL - 1;
	if (!apply(s, g, val, len))
		return false;
	if (local && !s->guc_local[g]) {
		memcpy(s->guc_saved[g], s->guc[g], PG_GUC_VAL);
		s->guc_local[g] = true;
	}
	memcpy(s->guc[g], val, len);
	s->guc[g][len] = '\0';
	report(s, g);
	return true;
}

static const char *guc_default(struct pgs *s, int g, char *tmp, size_t n)
{
	if (g == GUC_LEASE_MS) {
		snprintf(tmp, n, "%lld", (long long)s->fe->cfg->default_lease_ms);
		return tmp;
	}
	if (g == GUC_SESSION_AUTHORIZATION)
		return s->user;
	return gucs[g].def;
}

void pgs_guc_reset(struct pgs *s, int g)
{
	char tmp[32];
	if (gucs[g].readonly)
		return;
	const char *d = guc_default(s, g, tmp, sizeof(tmp));
	(void)pgs_guc_set(s, g, d, strlen(d), false);
	s->guc_local[g] = false;
}

void pgs_guc_xact_end(struct pgs *s)
{
	for (int g = 0; g < GUC_COUNT; g++)
		if (s->guc_local[g]) {
			s->guc_local[g] = false;
			(void)pgs_guc_set(s, g, s->guc_saved[g], strlen(s->guc_saved[g]), false);
		}
}

static void gucs_init(struct pgs *s)
{
	char tmp[32];
	for (int g = 0; g < GUC_COUNT; g++) {
		const char *d = guc_default(s, g, tmp, sizeof(tmp));
		snprintf(s->guc[g], PG_GUC_VAL, "%s", d);
	}
	s->lease_ms = 0; /* the configured default */
}

/* --- errors and notices --- */

void pgs_error(struct pgs *s, const char *sqlstate, const char *msg, const char *hint)
{
	pg_error(&s->c.out, 'E', "ERROR", sqlstate, msg, hint);
}

void pgs_fatal(struct pgs *s, const char *sqlstate, const char *msg)
{
	pg_error(&s->c.out, 'E', "FATAL", sqlstate, msg, NULL);
	conn_close(&s->c, "fatal error");
}

void pgs_notice(struct pgs *s, const char *severity, const char *sqlstate, const char *msg,
		const char *hint)
{
	pg_error(&s->c.out, 'N', severity, sqlstate, msg, hint);
}

/* --- leases --- */

/* A lease of the session was lost: a WARNING at once (the next operation
 * about it answers the error, pg_query.c). */
static void on_lost(void *arg, enum ls_kind kind, const char *name, int64_t token,
		    enum lt_loss reason)
{
	struct pgs *s = arg;
	char msg[STORE_NAME_MAX + 256];
	if (conn_closed(&s->c))
		return;
	snprintf(msg, sizeof(msg), "the lease of lock \"%s\" (fencing token %lld) was lost: %s",
		 name, (long long)token, ls_loss_text(reason));
	pgs_notice(s, "WARNING", "01000", msg,
		   "The lock is no longer held; its next use in this session is an error "
		   "(SQLSTATE 55000).");
	conn_flush(&s->c);
}

static void who(void *arg, struct ls_who *w)
{
	const struct pgs *s = arg;
	w->id = s->c.id;
	snprintf(w->client, sizeof(w->client), "%s", s->c.addr);
	snprintf(w->name, sizeof(w->name), "%s", s->user);
}

static bool may_wait(void *arg, const char *name)
{
	return pgx_may_wait(arg, name);
}

static const struct ls_sess_ops sess_ops = {.lost = on_lost, .who = who, .may_wait = may_wait};

struct lsess *pgs_lsess(struct pgs *s)
{
	if (s->ls != NULL)
		return s->ls;
	if ((s->ls = lsess_new(s->fe->svc, &sess_ops, s)) == NULL)
		pgs_error(s, "53200", "out of memory", NULL);
	else /* LOCK.LIST shows the pid of its cancel key (PQbackendPID) */
		lsess_set_label(s->ls, "pg", s->pid);
	return s->ls;
}

/* --- connection ops --- */

static bool p_open(struct conn *c)
{
	struct pgs *s = pgs_of(c);
	struct pg_fe *fe = (struct pg_fe *)((char *)c->proto - offsetof(struct pg_fe, proto));
	s->fe = fe;
	pg_reader_init(&s->rd, &fe->lim);
	s->st = PGS_STARTUP;
	/* the backend pid is the connection's id, within PostgreSQL's positive
	 * int32 (1..2^31-1, then round again): unique among the sessions of a
	 * gateway unless one outlives 2^31-1 newer connections */
	s->pid = (uint32_t)((c->id - 1) % 0x7fffffffu) + 1;
	if (getrandom(&s->secret, sizeof(s->secret), 0) != sizeof(s->secret))
		s->secret = (uint32_t)(c->id * 2654435761u) ^ (uint32_t)srv_now_ms();
	return true;
}

static size_t p_room(const struct conn *c)
{
	return pg_reader_room(&((const struct pgs *)c)->rd);
}

static bool p_feed(struct conn *c, const char *bytes, size_t len)
{
	return pg_reader_feed(&pgs_of(c)->rd, bytes, len);
}

static size_t p_buffered(const struct conn *c)
{
	const struct pgs *s = (const struct pgs *)c;
	return pg_reader_buffered(&s->rd) + (s->in_query ? 1 : 0);
}

/* The greeting once authenticated. */
static void ready(struct pgs *s)
{
	struct buf *o = &s->c.out;
	pg_auth_ok(o);
	s->st = PGS_READY;
	for (int g = 0; g < GUC_COUNT; g++)
		if (gucs[g].report)
			pg_parameter_status(o, gucs[g].name, s->guc[g]);
	pg_backend_key(o, s->pid, s->secret);
	pg_ready(o, 'I');
	free(s->scram);
	s->scram = NULL;
	log_msg(LOG_LVL_DEBUG, "pg session %llu %s: user %s database %s",
		(unsigned long long)s->c.id, s->c.addr, s->user, s->database);
}

static void auth_failed(struct pgs *s)
{
	char msg[128];
	snprintf(msg, sizeof(msg), "password authentication failed for user \"%s\"", s->user);
	pgs_fatal(s, "28P01", msg);
}

/* A refused authentication: SCRAM's own reason when it gave one (the
 * mechanism, the channel binding), else the usual message. */
static void auth_refused(struct pgs *s)
{
	if (s->scram == NULL || s->scram->why == NULL) {
		auth_failed(s);
		return;
	}
	log_msg(LOG_LVL_INFO, "pg session %llu %s: user \"%s\" refused: %s",
		(unsigned long long)s->c.id, s->c.addr, s->user, s->scram->why);
	pgs_fatal(s, s->scram->sqlstate, s->scram->why);
}

struct cancel_key {
	uint32_t pid, secret;
	bool matched;
};

/* The session of the key's pid (public: LOCK.LIST shows it) if the secret
 * is its own, compared in constant time. */
static void cancel_one(struct conn *c, void *arg)
{
	struct cancel_key *k = arg;
	struct pgs *s = pgs_of(c);
	if (s->pid != k->pid || s->st != PGS_READY ||
	    CRYPTO_memcmp(&s->secret, &k->secret, sizeof(k->secret)) != 0)
		return;
	k->matched = true;
	if (s->ls != NULL)
		ls_cancel(s->ls, "canceling statement due to user request");
}

/* A CancelRequest: tried unless its source address is over the gate's
 * count of wrong keys (pg_cancel.h); one that matches no session counts. */
static void cancel_request(struct pgs *s, const struct pg_msg *m)
{
	struct pg_cur cur = pg_cur_of(m);
	struct cancel_key k = {0};
	char host[sizeof(s->c.addr)];
	snprintf(host, sizeof(host), "%s", s->c.addr);
	char *colon = strrchr(host, ':'); /* "address:port" */
	if (colon != NULL)
		*colon = '\0';
	k.pid = (uint32_t)pg_get_i32(&cur);
	k.secret = (uint32_t)pg_get_i32(&cur);
	int64_t now = srv_now_ms();
	if (cur.bad || !pgc_allow(s->fe->cancels, host, now))
		return;
	srv_foreach(s->fe->srv, &s->fe->proto, cancel_one, &k);
	if (!k.matched)
		pgc_failed(s->fe->cancels, host, now);
}

/* SSLRequest (ssl) or GSSENCRequest on a plaintext session: 'S' and the
 * TLS handshake when TLS is on, else 'N' and the client goes on in the
 * clear (or leaves). */
static enum conn_step encryption_request(struct pgs *s, bool ssl)
{
	/* Bytes sent behind the request came before any answer: they cannot
	 * be trusted to the encrypted session, nor read as the next plaintext
	 * message (CVE-2021-23214): refused, as PostgreSQL does. */
	if (pg_reader_buffered(&s->rd) > 0) {
		log_msg(LOG_LVL_INFO, "pg session %llu %s: data received after the %s request",
			(unsigned long long)s->c.id, s->c.addr, ssl ? "SSL" : "GSSENC");
		pgs_fatal(s, "08P01",
			  ssl ? "received unencrypted data after SSL request"
			      : "received unencrypted data after GSSAPI encryption request");
		return CONN_STEP_STOP;
	}
	if (!ssl || s->fe->tls == CFG_PG_TLS_OFF) {
		buf_raw(&s->c.out, "N", 1);
		return CONN_STEP_RAN;
	}
	buf_raw(&s->c.out, "S", 1);
	if (!conn_set_transport(&s->c, &transport_tls)) {
		log_msg(LOG_LVL_WARN, "pg session %llu %s: cannot start TLS",
			(unsigned long long)s->c.id, s->c.addr);
		conn_abort(&s->c, "cannot start TLS");
		return CONN_STEP_STOP;
	}
	return CONN_STEP_RAN;
}

static enum conn_step startup(struct pgs *s, const struct pg_msg *m)
{
	struct pg_startup su;
	const char *err;
	if ((m->code == PG_SSL_REQUEST || m->code == PG_GSSENC_REQUEST) && !conn_encrypted(&s->c))
		return encryption_request(s, m->code == PG_SSL_REQUEST);
	if (m->code == PG_CANCEL_REQUEST) {
		cancel_request(s, m);
		conn_close(&s->c, "cancel request");
		return CONN_STEP_STOP;
	}
	if (m->code >> 16 != 3) {
		char msg[128];
		snprintf(msg, sizeof(msg),
			 "unsupported frontend protocol %u.%u: server supports 3.0 to 3.0",
			 m->code >> 16, m->code & 0xffff);
		pgs_fatal(s, "0A000", msg);
		return CONN_STEP_STOP;
	}
	if (!pg_parse_startup(m, s->fe->lim.max_params, &su, &err)) {
		pgs_fatal(s, "08P01", err);
		return CONN_STEP_STOP;
	}
	pg_reader_typed(&s->rd);
	const char *user = pg_startup_get(&su, "user");
	if (user == NULL || *user == '\0') {
		pgs_fatal(s, "28000", "no PostgreSQL user name specified in startup packet");
		return CONN_STEP_STOP;
	}
	const char *db = pg_startup_get(&su, "database");
	snprintf(s->user, sizeof(s->user), "%s", user);
	snprintf(s->database, sizeof(s->database), "%s", db && *db ? db : user);
	if (s->fe->tls == CFG_PG_TLS_REQUIRED && !conn_encrypted(&s->c)) {
		/* as a hostssl-only pg_hba.conf refuses it */
		char msg[400];
		const char *colon = strrchr(s->c.addr, ':');
		int hostlen = colon ? (int)(colon - s->c.addr) : (int)strlen(s->c.addr);
		snprintf(msg, sizeof(msg),
			 "no pg_hba.conf entry for host \"%.*s\", user \"%s\", database \"%s\", no "
			 "encryption (leasegate --pg-tls required: connect with sslmode=require or "
			 "verify-full)",
			 hostlen, s->c.addr, s->user, s->database);
		pgs_fatal(s, "28000", msg);
		return CONN_STEP_STOP;
	}
	const char *loading = "the lock store is not open yet";
	if (s->fe->ready != NULL && !s->fe->ready(s->fe->ready_arg, &loading)) {
		char msg[1600];
		snprintf(msg, sizeof(msg), "the database system is starting up: %s", loading);
		pgs_fatal(s, "57P03", msg);
		return CONN_STEP_STOP;
	}
	enum auth_pg_method method = auth_pg_method_for(s->fe->auth, s->user);
	if (s->fe->cfg->protected_mode && method == AUTH_PG_TRUST && !s->c.local) {
		char msg[1200];
		srv_protected_text(msg, sizeof(msg), "PostgreSQL users",
				   "--pg-password or --pg-users");
		srv_note_protected(s->fe->srv, &s->c);
		log_msg(LOG_LVL_DEBUG, "pg session %llu %s: refused by protected mode",
			(unsigned long long)s->c.id, s->c.addr);
		pgs_fatal(s, "28000", msg);
		return CONN_STEP_STOP;
	}
	gucs_init(s);
	const char *unknown[PG_MAX_STARTUP_PARAMS];
	unsigned nunknown = 0;
	for (unsigned i = 0; i < su.n; i++) {
		if (strncmp(su.key[i], "_pq_.", 5) == 0) {
			unknown[nunknown++] = su.key[i];
			continue;
		}
		int g = pgs_guc_find(su.key[i]);
		if (g >= 0 && !gucs[g].readonly && g != GUC_LOCK_TIMEOUT &&
		    g != GUC_STATEMENT_TIMEOUT && g != GUC_LEASE_MS)
			snprintf(s->guc[g], PG_GUC_VAL, "%s", su.val[i]);
	}
	if ((m->code & 0xffff) != 0 || nunknown > 0)
		pg_negotiate_version(&s->c.out, PG_PROTO_30, nunknown, unknown);
	const char *why =
		auth_pg_why_not(s->fe->auth, s->user, auth_pg_cleartext_ok(s->fe->auth, &s->c));
	if (why != NULL) {
		char msg[600];
		log_msg(LOG_LVL_WARN, "pg session %llu %s: user \"%s\" refused: %s",
			(unsigned long long)s->c.id, s->c.addr, s->user, why);
		snprintf(msg, sizeof(msg), "user \"%s\" cannot log in here: %s", s->user, why);
		pgs_fatal(s, "28000", msg);
		return CONN_STEP_STOP;
	}
	switch (method) {
	case AUTH_PG_TRUST:
		if (!auth_pg_login(&s->c, s->user)) {
			auth_note(&s->c, AUTH_PG, s->user, false);
			auth_failed(s);
			return CONN_STEP_STOP;
		}
		ready(s);
		break;
	case AUTH_PG_SCRAM: {
		s->scram = calloc(1, sizeof(*s->scram));
		if (s->scram == NULL) {
			pgs_fatal(s, "53200", "out of memory");
			return CONN_STEP_STOP;
		}
		unsigned char cb[AUTH_SCRAM_CB_MAX];
		const char *mechs[2];
		size_t nmech = auth_scram_mechs(transport_tls_end_point(&s->c, cb), mechs);
		pg_auth_sasl(&s->c.out, mechs, nmech);
		s->st = PGS_SASL_INIT;
		break;
	}
	case AUTH_PG_MD5:
		if (getrandom(s->md5salt, 4, 0) != 4)
			memcpy(s->md5salt, &s->secret, 4);
		pg_auth_md5(&s->c.out, s->md5salt);
		s->st = PGS_MD5;
		break;
	case AUTH_PG_PASSWORD:
		pg_auth_cleartext(&s->c.out);
		s->st = PGS_PASSWORD;
		break;
	}
	return CONN_STEP_RAN;
}

/* The verdict of an authentication (s->auth_ok): the greeting, or the
 * error and the close. false when closed. */
static bool answer_auth(struct pgs *s)
{
	if (!s->auth_ok) {
		auth_refused(s);
		return false;
	}
	if (s->auth_final != NULL)
		pg_auth_sasl_final(&s->c.out, s->auth_final, strlen(s->auth_final));
	free(s->auth_final);
	s->auth_final = NULL;
	ready(s);
	return true;
}

/* The verdict held back by an address's past failures, now. */
static void answer_later(struct conn *c, void *arg)
{
	if (!conn_closed(c) && answer_auth(pgs_of(c)))
		conn_resume(c);
}

/* A password message ('p') while authenticating. */
static enum conn_step password(struct pgs *s, const struct pg_msg *m)
{
	struct pg_cur cur = pg_cur_of(m);
	char out[AUTH_SCRAM_MAX_MSG];
	bool ok = false;
	/* read before the check, which changes it: success waits too */
	int64_t delay = auth_delay_ms(&s->c, s->user);
	if (m->type != 'p') {
		pgs_fatal(s, "08P01", "expected password response");
		return CONN_STEP_STOP;
	}
	switch (s->st) {
	case PGS_SASL_INIT: {
		const char *mech = pg_get_str(&cur);
		int32_t n = pg_get_i32(&cur);
		const char *data = n >= 0 ? pg_get_bytes(&cur, (size_t)n) : NULL;
		if (cur.bad || data == NULL) {
			pgs_fatal(s, "08P01", "malformed SASL message");
			return CONN_STEP_STOP;
		}
		unsigned char cb[AUTH_SCRAM_CB_MAX];
		struct auth_scram_chan chan = {mech, cb, transport_tls_end_point(&s->c, cb)};
		if (!auth_scram_first(s->fe->auth, s->scram, s->user, &chan, data, (size_t)n, NULL,
				      out, sizeof(out))) {
			auth_refused(s);
			return CONN_STEP_STOP;
		}
		pg_auth_sasl_continue(&s->c.out, out, strlen(out));
		s->st = PGS_SASL_FINAL;
		return CONN_STEP_RAN;
	}
	case PGS_SASL_FINAL:
		ok = auth_scram_final(s->scram, m->body, m->len, out, sizeof(out));
		break;
	case PGS_MD5: {
		const char *resp = pg_get_str(&cur);
		ok = resp != NULL && auth_pg_md5_check(s->fe->auth, s->user, s->md5salt, resp);
		break;
	}
	case PGS_PASSWORD: {
		const char *pw = pg_get_str(&cur);
		ok = pw != NULL && auth_pg_password_check(s->fe->auth, s->user, pw);
		break;
	}
	default:
		break;
	}
	ok = ok && auth_pg_login(&s->c, s->user);
	auth_note(&s->c, AUTH_PG, s->user, ok);
	s->auth_ok = ok;
	free(s->auth_final);
	s->auth_final = s->st == PGS_SASL_FINAL && ok ? strdup(out) : NULL;
	if (ok && s->st == PGS_SASL_FINAL && s->auth_final == NULL) {
		pgs_fatal(s, "53200", "out of memory");
		return CONN_STEP_STOP;
	}
	if (delay > 0 && auth_later(&s->c, delay, answer_later, NULL)) {
		conn_suspend(&s->c);
		return CONN_STEP_RAN;
	}
	return answer_auth(s) ? CONN_STEP_RAN : CONN_STEP_STOP;
}

static enum conn_step p_step(struct conn *c)
{
	struct pgs *s = pgs_of(c);
	struct pg_msg m;
	if (s->in_query) {
		pgq_continue(s);
		return CONN_STEP_RAN;
	}
	enum pg_rstatus rs = pg_reader_next(&s->rd, &m);
	if (rs == PG_NEED_MORE)
		return CONN_STEP_IDLE;
	if (rs == PG_ERROR) {
		const char *e = pg_reader_error(&s->rd);
		log_msg(LOG_LVL_DEBUG, "pg session %llu %s: %s", (unsigned long long)c->id, c->addr,
			e);
		pgs_fatal(s, strcmp(e, "out of memory") == 0 ? "53200" : "08P01", e);
		return CONN_STEP_STOP;
	}
	switch (s->st) {
	case PGS_STARTUP:
		return startup(s, &m);
	case PGS_READY:
		return pgq_message(s, &m);
	default:
		return password(s, &m);
	}
}

/* --timeout: nothing held (no advisory lock, no transaction open) */
static bool p_idle(const struct conn *c)
{
	const struct pgs *s = (const struct pgs *)c;
	return s->st == PGS_READY && !s->in_block && !s->in_query &&
	       (s->ls == NULL || lsess_count(s->ls) == 0);
}

/* PostgreSQL's own words for the two timeouts */
static void p_expire(struct conn *c, enum conn_expiry why)
{
	if (why == CONN_EXPIRE_AUTH)
		pgs_fatal(pgs_of(c), "57014", "canceling authentication due to timeout");
	else
		pgs_fatal(pgs_of(c), "57P05", "terminating connection due to idle-session timeout");
}

static void p_close(struct conn *c)
{
	struct pgs *s = pgs_of(c);
	if (s->ls != NULL) { /* advisory locks end with the session */
		lsess_free(s->ls);
		s->ls = NULL;
	}
}

static void p_free(struct conn *c)
{
	struct pgs *s = pgs_of(c);
	pg_reader_free(&s->rd);
	pgq_free_all(s);
	free(s->q);
	free(s->scram);
	free(s->auth_final);
}

struct pg_fe *pg_fe_new(struct srv *srv, const struct cfg *cfg, struct lsvc *svc,
			const struct auth_pg *auth)
{
	struct pg_fe *fe = calloc(1, sizeof(*fe));
	if (fe == NULL)
		return NULL;
	fe->srv = srv;
	fe->cfg = cfg;
	fe->svc = svc;
	fe->auth = auth;
	fe->lim = pg_default_limits;
	fe->lim.max_msg = (uint32_t)(cfg->max_query_buffer < (1LL << 30) ? cfg->max_query_buffer
									 : (1LL << 30));
	fe->lim.max_params = (uint32_t)cfg->max_args;
	buf_init(&fe->refusal, 0);
	pg_error(&fe->refusal, 'E', "FATAL", "53300", "sorry, too many clients already", NULL);
	if (buf_failed(&fe->refusal) || (fe->cancels = pgc_new()) == NULL) {
		buf_free(&fe->refusal);
		free(fe);
		return NULL;
	}
	fe->proto = (struct conn_proto){
		.name = "pg",
		.size = sizeof(struct pgs),
		.open = p_open,
		.room = p_room,
		.feed = p_feed,
		.buffered = p_buffered,
		.step = p_step,
		.close = p_close,
		.free = p_free,
		.idle = p_idle,
		.expire = p_expire,
		.refusal = fe->refusal.buf,
		.refusal_len = fe->refusal.len,
		/* as PostgreSQL with ssl_ca_file: asked for, checked if sent */
		.tls_client_cert = CONN_CERT_OPTIONAL,
	};
	/* --pg-tls applies once a certificate is configured (cfg_tls) */
	fe->tls = cfg_tls(cfg) && srv_tls(srv) != NULL ? (enum cfg_pg_tls)cfg->pg_tls
						       : CFG_PG_TLS_OFF;
	return fe;
}

bool pg_fe_listen(struct pg_fe *fe, char *err, size_t errlen)
{
	char why[400];
	if (srv_listen_tcp(fe->srv, fe->cfg->bind, fe->cfg->pg_port, &fe->proto, why, sizeof(why)))
		return true;
	/* the default port, held by PostgreSQL or another gateway: a free one
	 * instead, named in the log ("PostgreSQL protocol on ..."), rather
	 * than no start; a port given explicitly stops the start */
	if (errno == EADDRINUSE && !cfg_given(fe->cfg, "pg-port") &&
	    srv_listen_tcp(fe->srv, fe->cfg->bind, 0, &fe->proto, why, sizeof(why))) {
		log_msg(LOG_LVL_WARN,
			"the default PostgreSQL port %lld is in use (a PostgreSQL server, or "
			"another "
			"leasegate?): PostgreSQL protocol on a free port instead; give --pg-port "
			"to "
			"choose one",
			(long long)fe->cfg->pg_port);
		return true;
	}
	/* 5432 is PostgreSQL's own port: say what to do when one runs here */
	snprintf(err, errlen,
		 "bad value for --pg-port: %s (a PostgreSQL server on this port? choose another "
		 "--pg-port, or 0 to turn the PostgreSQL port off)",
		 why);
	return false;
}

void pg_fe_set_gate(struct pg_fe *fe, bool (*is_ready)(void *arg, const char **why), void *arg)
{
	fe->ready = is_ready;
	fe->ready_arg = arg;
}

int pg_fe_port(const struct pg_fe *fe)
{
	return srv_port(fe->srv, &fe->proto);
}

static void terminate_one(struct conn *c, void *arg)
{
	struct pgs *s = pgs_of(c);
	if (s->st != PGS_READY || conn_state(c) != CONN_OPEN)
		return; /* starting up (closed by the shutdown), or in a statement */
	pgs_fatal(s, "57P01", "terminating connection due to administrator command");
	(*(size_t *)arg)++;
}

size_t pg_fe_terminate(struct pg_fe *fe)
{
	size_t n = 0;
	if (fe != NULL)
		srv_foreach(fe->srv, &fe->proto, terminate_one, &n);
	return n;
}

void pg_fe_free(struct pg_fe *fe)
{
	if (fe == NULL)
		return;
	buf_free(&fe->refusal);
	pgc_free(fe->cancels);
	free(fe);
}
