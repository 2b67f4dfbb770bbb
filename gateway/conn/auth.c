/*
 * auth: the process's users, principals, the password check, failures
 * and their slowdown (see auth.h).
 */
#include "gateway/conn/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/crypto.h>

#include "gateway/config.h"
#include "gateway/conn/conn.h"
#include "gateway/conn/server.h"
#include "gateway/obs/log.h"

#define DEFAULT_USER   "default"
#define ACL_FILE_MAX   (16 << 20)
#define SLOW_BUCKETS   1024 /* power of two */
#define SLOW_WAYS      4
#define SLOW_BASE_MS   100
#define SLOW_MAX_MS    5000
#define SLOW_FORGET_MS (10 * 60 * 1000)

/* The failures of one user name from one address (its host, without the
 * port): a success of one user from an address does not forgive the
 * guesses at another's password from there. */
struct slow_entry {
	char host[64];
	char user[ACL_USER_MAX + 1];
	uint32_t failures;
	int64_t last_ms;
};

struct later;

struct auth {
	const struct cfg *cfg;
	struct event_base *base;
	acl_known_fn known;
	void *known_arg;
	struct acl *acl;
	struct auth_pg *pg; /* told of new users, may be NULL */
	/* after a reload: the waits queued under the old rules are checked
	 * again (main.c: lsvc_recheck_waits); may be NULL */
	void (*reloaded)(void *arg);
	void *reloaded_arg;
	uint64_t failures[AUTH_PROTO_COUNT];
	struct later *held; /* answers held back (auth_later), not yet sent */
	struct slow_entry slow[SLOW_BUCKETS][SLOW_WAYS];
};

static const char *const proto_names[AUTH_PROTO_COUNT] = {"redis", "postgresql"};

/* --- the file --- */

/* Reads and parses path; refuses a file holding secrets that group or
 * others may read. */
static struct acl *load_file(const struct auth *a, char *err, size_t errlen)
{
	const char *path = a->cfg->aclfile;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "bad value for --aclfile: cannot read %s: %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > ACL_FILE_MAX) {
		snprintf(err, errlen,
			 "bad value for --aclfile: %s is not a file of at most %d bytes", path,
			 ACL_FILE_MAX);
		close(fd);
		return NULL;
	}
	char *text = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (text != NULL && got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (text == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	struct acl *acl = acl_reparse(text, got, path, a->cfg->requirepass, a->acl, a->known,
				      a->known_arg, err, errlen);
	OPENSSL_cleanse(text, got);
	free(text);
	if (acl != NULL && acl_has_secrets(acl) && (st.st_mode & 077) != 0) {
		snprintf(err, errlen,
			 "%s holds passwords and is accessible by group or others (mode %04o): "
			 "refused, as ssh refuses such a key; chmod 600 %s",
			 path, (unsigned)(st.st_mode & 07777), path);
		acl_free(acl);
		return NULL;
	}
	return acl;
}

struct auth *auth_new(const struct cfg *cfg, struct event_base *base, acl_known_fn known,
		      void *known_arg, char *err, size_t errlen)
{
	struct auth *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->cfg = cfg;
	a->base = base;
	a->known = known;
	a->known_arg = known_arg;
	if (cfg->aclfile[0])
		a->acl = load_file(a, err, errlen);
	else if ((a->acl = acl_default(cfg->requirepass)) == NULL)
		snprintf(err, errlen, "out of memory");
	if (a->acl == NULL) {
		free(a);
		return NULL;
	}
	return a;
}

void auth_free(struct auth *a)
{
	if (a == NULL)
		return;
	auth_flush_held(a);
	acl_free(a->acl);
	free(a);
}

bool auth_has_file(const struct auth *a)
{
	return a->cfg->aclfile[0] != '\0';
}

const struct acl *auth_acl(const struct auth *a)
{
	return a->acl;
}

uint64_t auth_failures(const struct auth *a, enum auth_proto proto)
{
	return a->failures[proto];
}

void auth_set_pg(struct auth *a, struct auth_pg *pg)
{
	a->pg = pg;
	if (pg != NULL)
		auth_pg_set_acl(pg, auth_has_file(a) ? a->acl : NULL);
}

void auth_on_reload(struct auth *a, void (*fn)(void *arg), void *arg)
{
	a->reloaded = fn;
	a->reloaded_arg = arg;
}

struct reload {
	const struct acl *acl;
	unsigned closed;
};

/* Points c at its user's new rules, or closes it. */
static void repoint(struct conn *c, void *arg)
{
	struct reload *r = arg;
	if (!c->authenticated || conn_closed(c))
		return;
	const struct acl_user *u = acl_find(r->acl, c->user, strlen(c->user));
	if (u == NULL && c->acl_fallback)
		u = acl_find(r->acl, DEFAULT_USER, strlen(DEFAULT_USER));
	if (u == NULL || !acl_user_on(u)) {
		c->acl = NULL;
		c->authenticated = false;
		r->closed++;
		conn_close(c, "its user was removed or disabled by an ACL reload");
		return;
	}
	c->acl = u;
}

bool auth_reload(struct auth *a, struct srv *srv, char *err, size_t errlen)
{
	if (!auth_has_file(a)) {
		snprintf(err, errlen, "no --aclfile to load");
		return false;
	}
	struct acl *acl = load_file(a, err, errlen);
	if (acl == NULL)
		return false;
	struct reload r = {acl, 0};
	if (srv != NULL)
		srv_foreach(srv, NULL, repoint, &r);
	acl_free(a->acl);
	a->acl = acl;
	if (a->pg != NULL)
		auth_pg_set_acl(a->pg, acl);
	if (a->reloaded != NULL)
		a->reloaded(a->reloaded_arg);
	log_msg(LOG_LVL_INFO, "ACL file %s loaded: %u users%s", a->cfg->aclfile, acl_count(acl),
		r.closed ? ", connections of removed or disabled users closed" : "");
	return true;
}

/* --- principals --- */

struct auth *auth_of(const struct conn *c)
{
	return c->srv != NULL ? srv_auth(c->srv) : NULL;
}

/* Without a registry's users (unit tests): default, every right. */
static const struct acl *fallback(void)
{
	static struct acl *all;
	if (all == NULL)
		all = acl_default(NULL);
	return all;
}

static const struct acl *users_of(const struct conn *c)
{
	const struct auth *a = auth_of(c);
	return a != NULL ? a->acl : fallback();
}

static const struct acl_user *default_user(const struct conn *c)
{
	const struct acl *acl = users_of(c);
	return acl != NULL ? acl_find(acl, DEFAULT_USER, strlen(DEFAULT_USER)) : NULL;
}

bool auth_default_nopass(const struct conn *c, const struct cfg *cfg)
{
	if (auth_of(c) == NULL)
		return cfg->requirepass[0] == '\0';
	const struct acl_user *u = default_user(c);
	return u != NULL && acl_user_nopass(u);
}

void auth_start(struct conn *c, const struct cfg *cfg)
{
	const struct acl_user *u = default_user(c);
	c->acl_fallback = false;
	c->authenticated = u != NULL && acl_user_on(u) && auth_default_nopass(c, cfg);
	c->acl = c->authenticated ? u : NULL;
	c->auth_since_ms = c->last_cmd_ms; /* --auth-timeout counts from here */
	snprintf(c->user, sizeof(c->user), "%s", c->authenticated ? DEFAULT_USER : "");
}

/* Compares in time independent of where the first difference is. */
static bool secret_equal(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	unsigned char d = alen != blen;
	for (size_t i = 0; i < alen; i++)
		d |= (unsigned char)(a[i] ^ b[blen ? i % blen : 0]);
	return d == 0;
}

bool auth_login(struct conn *c, const struct cfg *cfg, const char *user, const char *pass,
		size_t passlen)
{
	const char *name = user != NULL ? user : DEFAULT_USER;
	const struct acl_user *u = acl_find(users_of(c), name, strlen(name));
	bool ok;
	if (auth_of(c) == NULL) /* no users: default and --requirepass */
		ok = u != NULL && strcmp(name, DEFAULT_USER) == 0 &&
		     (cfg->requirepass[0] == '\0' || secret_equal(pass, passlen, cfg->requirepass));
	else
		ok = u != NULL && acl_user_on(u) && acl_password_ok(u, pass, passlen);
	auth_note(c, AUTH_REDIS, name, ok);
	if (!ok)
		return false;
	c->authenticated = true;
	c->acl = u;
	c->acl_fallback = false;
	snprintf(c->user, sizeof(c->user), "%s", name);
	return true;
}

bool auth_protected_nopass(const struct conn *c, const struct cfg *cfg, const char *user)
{
	const char *name = user != NULL ? user : DEFAULT_USER;
	if (!cfg->protected_mode || c->local || auth_of(c) == NULL)
		return false;
	const struct acl_user *u = acl_find(users_of(c), name, strlen(name));
	return u != NULL && acl_user_on(u) && acl_user_nopass(u);
}

bool auth_pg_login(struct conn *c, const char *user)
{
	const struct acl *acl = users_of(c);
	const struct acl_user *u = NULL;
	const struct auth *a = auth_of(c);
	if (a != NULL && auth_has_file(a))
		u = acl_find(acl, user, strlen(user));
	c->acl_fallback = u == NULL;
	if (u == NULL)
		u = acl_find(acl, DEFAULT_USER, strlen(DEFAULT_USER));
	if (u == NULL || (!c->acl_fallback && !acl_user_on(u)))
		return false;
	c->authenticated = true;
	c->acl = u;
	snprintf(c->user, sizeof(c->user), "%s", user);
	return true;
}

/* --- failures --- */

/* c's host: its address without the port. */
static void host_of(const struct conn *c, char *out, size_t len)
{
	snprintf(out, len, "%s", c->addr);
	char *colon = strrchr(out, ':');
	if (colon != NULL && colon != out)
		*colon = '\0';
}

/* FNV-1a of host, a NUL, then user (so "a"+"bc" is not "ab"+"c"). */
static uint32_t slow_hash(const char *host, const char *user)
{
	uint32_t h = 2166136261u;
	for (const char *s = host;; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
		if (*s == '\0')
			break;
	}
	for (const char *s = user; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/* The entry of (host, user) (made when make is true: the bucket's oldest
 * goes), NULL if none. Entries idle past SLOW_FORGET_MS count as none. */
static struct slow_entry *slow_find(struct auth *a, const char *host, const char *user, bool make,
				    int64_t now)
{
	struct slow_entry *b = a->slow[slow_hash(host, user) & (SLOW_BUCKETS - 1)];
	struct slow_entry *oldest = &b[0];
	for (int i = 0; i < SLOW_WAYS; i++) {
		struct slow_entry *e = &b[i];
		if (e->failures > 0 && now - e->last_ms > SLOW_FORGET_MS)
			e->failures = 0;
		if (e->failures > 0 && strcmp(e->host, host) == 0 && strcmp(e->user, user) == 0)
			return e;
		if (e->failures == 0 || (oldest->failures > 0 && e->last_ms < oldest->last_ms))
			oldest = e;
	}
	if (!make)
		return NULL;
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->host, sizeof(oldest->host), "%s", host);
	snprintf(oldest->user, sizeof(oldest->user), "%s", user);
	return oldest;
}

/* The name failures are counted under: a user name longer than any user
 * is cut (no such user exists: its guesses still count, under the cut). */
static const char *slow_user(const char *user)
{
	return user != NULL ? user : DEFAULT_USER;
}

int64_t auth_delay_ms(const struct conn *c, const char *user)
{
	struct auth *a = auth_of(c);
	char host[64], name[ACL_USER_MAX + 1];
	if (a == NULL || a->cfg->auth_max_delay_ms == 0)
		return 0;
	int64_t max = a->cfg->auth_max_delay_ms;
	host_of(c, host, sizeof(host));
	snprintf(name, sizeof(name), "%s", slow_user(user));
	const struct slow_entry *e = slow_find(a, host, name, false, srv_now_ms());
	if (e == NULL || e->failures == 0)
		return 0;
	int64_t ms = SLOW_BASE_MS;
	for (uint32_t i = 1; i < e->failures && ms < max; i++)
		ms *= 2;
	return ms < max ? ms : max;
}

void auth_note(struct conn *c, enum auth_proto proto, const char *user, bool ok)
{
	struct auth *a = auth_of(c);
	char host[64], name[ACL_USER_MAX + 1];
	if (a == NULL)
		return;
	host_of(c, host, sizeof(host));
	snprintf(name, sizeof(name), "%s", slow_user(user));
	int64_t now = srv_now_ms();
	struct slow_entry *e = slow_find(a, host, name, !ok, now);
	if (ok) {
		if (e != NULL)
			e->failures = 0;
		return;
	}
	a->failures[proto]++;
	if (e->failures < UINT32_MAX)
		e->failures++;
	e->last_ms = now;
	log_msg(LOG_LVL_WARN,
		"authentication failed: user \"%.63s\" from %s over %s (%u failures "
		"of this user from this address)",
		user, c->addr, proto_names[proto], e->failures);
}

struct later {
	struct auth *a; /* NULL: no registry's users (its list) */
	struct later *prev, *next;
	struct conn *c;
	struct event *ev;
	void (*fn)(struct conn *c, void *arg);
	void *arg;
};

/* Runs l's answer and forgets l. */
static void later_end(struct later *l)
{
	if (l->a != NULL) {
		if (l->prev)
			l->prev->next = l->next;
		else
			l->a->held = l->next;
		if (l->next)
			l->next->prev = l->prev;
	}
	l->fn(l->c, l->arg);
	conn_unref(l->c);
	event_free(l->ev);
	free(l);
}

static void later_fire(evutil_socket_t fd, short what, void *arg)
{
	later_end(arg);
}

bool auth_later(struct conn *c, int64_t ms, void (*fn)(struct conn *c, void *arg), void *arg)
{
	struct later *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return false;
	l->ev = evtimer_new(srv_base(c->srv), later_fire, l);
	if (l->ev == NULL) {
		free(l);
		return false;
	}
	l->a = auth_of(c);
	l->c = c;
	l->fn = fn;
	l->arg = arg;
	if (l->a != NULL) {
		l->next = l->a->held;
		if (l->next)
			l->next->prev = l;
		l->a->held = l;
	}
	conn_ref(c);
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
	evtimer_add(l->ev, &tv);
	return true;
}

void auth_flush_held(struct auth *a)
{
	while (a != NULL && a->held != NULL)
		later_end(a->held);
}
