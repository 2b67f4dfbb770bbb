/*
 * pg_query: the query flows of the PostgreSQL front-end — simple query
 * (several statements per string, one ReadyForQuery; an error skips the
 * rest), extended query (Parse/Bind/Describe/Execute/Close/Flush/Sync,
 * named and unnamed statements and portals; an error skips to Sync). Each
 * statement runs in pg_exec.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/config.h"
#include "gateway/pg/pg_int.h"

/* --- simple query --- */

static void end_query(struct pgs *s)
{
	if (!s->q_any)
		pg_empty_query(&s->c.out);
	s->in_query = false;
	pgx_ready(s);
}

void pgq_continue(struct pgs *s)
{
	struct sql_stmt st;
	for (;;) {
		if (!sql_next(s->q, s->qlen, &s->qpos, &st)) {
			end_query(s);
			return;
		}
		if (st.kind != SQL_EMPTY)
			break;
	}
	s->q_any = true;
	pgx_run(s, &st, NULL);
}

static void simple_query(struct pgs *s, const struct pg_msg *m)
{
	struct pg_cur cur = pg_cur_of(m);
	const char *q = pg_get_str(&cur);
	if (q == NULL) {
		pgs_fatal(s, "08P01", "invalid Query message");
		return;
	}
	size_t n = strlen(q);
	if (cur.left != 0) { /* bytes past the text's NUL: PostgreSQL's pq_getmsgend */
		pgs_error(s, "08P01", "invalid message format", NULL);
		if (s->in_block)
			s->failed = true;
		pg_ready(&s->c.out, pgq_status(s));
		return;
	}
	if (s->qcap < n + 1) {
		char *b = realloc(s->q, n + 1);
		if (b == NULL) {
			pgs_error(s, "53200", "out of memory", NULL);
			pg_ready(&s->c.out, pgq_status(s));
			return;
		}
		s->q = b;
		s->qcap = n + 1;
	}
	unsigned limit = (unsigned)s->fe->cfg->max_args;
	if (sql_count(q, n, limit) > limit) {
		char msg[96];
		snprintf(msg, sizeof(msg), "too many statements in one query (--max-args: %u)",
			 limit);
		pgs_error(s, "54000", msg, "Send them in several queries.");
		if (s->in_block)
			s->failed = true;
		pg_ready(&s->c.out, pgq_status(s));
		return;
	}
	memcpy(s->q, q, n + 1);
	s->qlen = n;
	s->qpos = 0;
	s->q_any = false;
	s->in_query = true;
	s->skip_sync = false;
	pgq_continue(s);
}

/* --- extended query --- */

static struct pg_prep *find_prep(struct pgs *s, const char *name)
{
	for (struct pg_prep *p = s->preps; p; p = p->next)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static struct pg_portal *find_portal(struct pgs *s, const char *name)
{
	for (struct pg_portal *p = s->portals; p; p = p->next)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static void portal_free_mem(struct pg_portal *po)
{
	if (po == NULL)
		return;
	free(po->params);
	free(po->data);
	free(po->rfmt);
	free(po);
}

/* A portal with room for np parameters, len bytes of values and nr
 * result formats: the spare if there is one. NULL: out of memory. */
static struct pg_portal *portal_get(struct pgs *s, unsigned np, size_t len, unsigned nr)
{
	struct pg_portal *po = s->spare;
	s->spare = NULL;
	if (po == NULL && (po = calloc(1, sizeof(*po))) == NULL)
		return NULL;
	if (po->params_cap < np || po->params == NULL) {
		struct pg_val *p = realloc(po->params, (np ? np : 1) * sizeof(*p));
		if (p == NULL)
			goto fail;
		po->params = p;
		po->params_cap = np ? np : 1;
	}
	if (po->data_cap < len || po->data == NULL) {
		char *d = realloc(po->data, len ? len : 1);
		if (d == NULL)
			goto fail;
		po->data = d;
		po->data_cap = len ? len : 1;
	}
	if (po->rfmt_cap < nr || po->rfmt == NULL) {
		int16_t *f = realloc(po->rfmt, (nr ? nr : 1) * sizeof(*f));
		if (f == NULL)
			goto fail;
		po->rfmt = f;
		po->rfmt_cap = nr ? nr : 1;
	}
	po->next = NULL;
	po->prep = NULL;
	po->name[0] = '\0';
	po->nparams = po->nrfmt = 0;
	return po;
fail:
	portal_free_mem(po);
	return NULL;
}

/* Done with po (not linked): kept as the spare, or freed. */
static void portal_put(struct pgs *s, struct pg_portal *po)
{
	if (s->spare == NULL && po->data_cap <= 64 * 1024)
		s->spare = po;
	else
		portal_free_mem(po);
}

static void free_portal(struct pgs *s, struct pg_portal *po)
{
	for (struct pg_portal **pp = &s->portals; *pp; pp = &(*pp)->next)
		if (*pp == po) {
			*pp = po->next;
			s->nportals -= po->name[0] != '\0';
			break;
		}
	portal_put(s, po);
}

static void free_prep(struct pgs *s, struct pg_prep *p)
{
	for (struct pg_portal *po = s->portals, *nx; po; po = nx) {
		nx = po->next;
		if (po->prep == p)
			free_portal(s, po);
	}
	for (struct pg_prep **pp = &s->preps; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			s->npreps -= p->name[0] != '\0';
			break;
		}
	free(p->text);
	free(p->types);
	free(p);
}

/* Closes the statement name (NULL: every one). */
void pgq_close_prep(struct pgs *s, const char *name)
{
	for (struct pg_prep *p = s->preps, *nx; p; p = nx) {
		nx = p->next;
		if (name == NULL || strcmp(p->name, name) == 0)
			free_prep(s, p);
	}
}

void pgq_free_all(struct pgs *s)
{
	while (s->portals)
		free_portal(s, s->portals);
	while (s->preps)
		free_prep(s, s->preps);
	portal_free_mem(s->spare);
	s->spare = NULL;
}

static void parse_msg(struct pgs *s, const struct pg_msg *m)
{
	struct pg_cur cur = pg_cur_of(m);
	const char *name = pg_get_str(&cur);
	const char *q = pg_get_str(&cur);
	int16_t nt = pg_get_i16(&cur);
	if (cur.bad || nt < 0 || (uint32_t)nt > s->fe->lim.max_params) {
		pgx_error(s, "08P01", "invalid Parse message", NULL);
		return;
	}
	if (name[0] != '\0' && find_prep(s, name) != NULL) {
		char msg[120];
		snprintf(msg, sizeof(msg), "prepared statement \"%.60s\" already exists", name);
		pgx_error(s, "42P05", msg, NULL);
		return;
	}
	if (strlen(name) >= sizeof(((struct pg_prep *)0)->name)) {
		pgx_error(s, "42602", "statement name too long", NULL);
		return;
	}
	if (name[0] != '\0' && s->npreps >= (unsigned)s->fe->cfg->max_prepared) {
		char msg[160];
		snprintf(msg, sizeof(msg),
			 "too many prepared statements in this session (%u, leasegate's "
			 "--max-prepared-statements)",
			 s->npreps);
		pgx_error(s, "54000", msg, "Close (or DEALLOCATE) prepared statements first.");
		return;
	}
	struct pg_prep *p = calloc(1, sizeof(*p));
	size_t qn = strlen(q);
	if (p == NULL || (p->text = malloc(qn + 1)) == NULL) {
		free(p);
		pgx_error(s, "53200", "out of memory", NULL);
		return;
	}
	memcpy(p->text, q, qn + 1);
	snprintf(p->name, sizeof(p->name), "%s", name);
	size_t pos = 0;
	if (!sql_next(p->text, qn, &pos, &p->st))
		p->st.kind = SQL_EMPTY;
	struct sql_stmt extra;
	while (sql_next(p->text, qn, &pos, &extra))
		if (extra.kind != SQL_EMPTY) {
			free(p->text);
			free(p);
			pgx_error(s, "42601",
				  "cannot insert multiple commands into a prepared statement",
				  NULL);
			return;
		}
	p->ntypes = (unsigned)nt > (unsigned)p->st.nparams ? (unsigned)nt : (unsigned)p->st.nparams;
	p->types = calloc(p->ntypes ? p->ntypes : 1, sizeof(uint32_t));
	if (p->types == NULL) {
		free(p->text);
		free(p);
		pgx_error(s, "53200", "out of memory", NULL);
		return;
	}
	for (int i = 0; i < nt; i++)
		p->types[i] = (uint32_t)pg_get_i32(&cur);
	if (cur.bad) {
		free(p->types);
		free(p->text);
		free(p);
		pgx_error(s, "08P01", "invalid Parse message", NULL);
		return;
	}
	/* what cannot run fails here, as on PostgreSQL, with its own error
	 * (never as a statement of no parameters: asyncpg would then say
	 * "the server expects 0 arguments") */
	if (p->st.kind == SQL_UNSUPPORTED ||
	    (p->st.kind == SQL_SELECT && !pgv_check_call(s, &p->st, p->types, (unsigned)nt))) {
		if (p->st.kind == SQL_UNSUPPORTED)
			pgx_unsupported(s, &p->st);
		free(p->types);
		free(p->text);
		free(p);
		return;
	}
	for (unsigned i = 0; i < p->ntypes; i++)
		if (p->types[i] == 0 || p->types[i] == PG_OID_UNKNOWN)
			p->types[i] = p->st.kind == SQL_SELECT || p->st.kind == SQL_CATALOG
					      ? pgx_param_type(&p->st, (int)i + 1)
					      : PG_OID_TEXT;
	if (name[0] == '\0') {
		struct pg_prep *old = find_prep(s, "");
		if (old != NULL)
			free_prep(s, old);
	}
	p->next = s->preps;
	s->preps = p;
	s->npreps += name[0] != '\0';
	pg_parse_complete(&s->c.out);
}

/* Parameter i's format code among Bind's nf codes (fmts: 2 * nf bytes,
 * big-endian): none, text for all; one, for all; else one each. Bytes read
 * unsigned: a plain char may be signed, and shifting a negative one is
 * undefined. */
static int16_t param_format(const char *fmts, int16_t nf, int i)
{
	if (nf == 0 || (nf > 1 && i >= nf))
		return 0;
	const unsigned char *u = (const unsigned char *)fmts + (nf == 1 ? 0 : 2 * i);
	return (int16_t)((uint16_t)u[0] << 8 | u[1]);
}

static void bind_msg(struct pgs *s, const struct pg_msg *m)
{
	struct pg_cur cur = pg_cur_of(m);
	const char *pname = pg_get_str(&cur);
	const char *sname = pg_get_str(&cur);
	int16_t nf = pg_get_i16(&cur);
	const char *fmts = nf > 0 ? pg_get_bytes(&cur, (size_t)nf * 2) : NULL;
	int16_t np = pg_get_i16(&cur);
	char msg[160];
	if (cur.bad || nf < 0 || np < 0 || (uint32_t)np > s->fe->lim.max_params) {
		pgx_error(s, "08P01", "invalid Bind message", NULL);
		return;
	}
	struct pg_prep *prep = find_prep(s, sname);
	if (prep == NULL) {
		snprintf(msg, sizeof(msg), "prepared statement \"%.60s\" does not exist", sname);
		pgx_error(s, "26000", msg, NULL);
		return;
	}
	if (nf > 1 && nf != np) {
		snprintf(msg, sizeof(msg),
			 "bind message has %d parameter formats but %d parameters", nf, np);
		pgx_error(s, "08P01", msg, NULL);
		return;
	}
	if ((unsigned)np != prep->ntypes) {
		snprintf(msg, sizeof(msg),
			 "bind message supplies %d parameters, but prepared statement \"%.60s\" "
			 "requires %u",
			 np, sname, prep->ntypes);
		pgx_error(s, "08P01", msg, NULL);
		return;
	}
	if (pname[0] != '\0' && find_portal(s, pname) != NULL) {
		snprintf(msg, sizeof(msg), "portal \"%.60s\" already exists", pname);
		pgx_error(s, "42P03", msg, NULL);
		return;
	}
	if (strlen(pname) >= sizeof(((struct pg_portal *)0)->name)) {
		pgx_error(s, "42602", "portal name too long", NULL);
		return;
	}
	if (pname[0] != '\0' && s->nportals >= (unsigned)s->fe->cfg->max_portals) {
		snprintf(msg, sizeof(msg),
			 "too many portals in this session (%u, leasegate's --max-portals)",
			 s->nportals);
		pgx_error(s, "54000", msg, "Close portals first.");
		return;
	}
	/* the values, copied (the reader's buffer moves): at most the
	 * message's length; result formats counted after them */
	struct pg_portal *po = portal_get(s, (unsigned)np, m->len, 16);
	if (po == NULL)
		goto oom;
	memcpy(po->name, pname, strlen(pname) + 1);
	po->prep = prep;
	po->nparams = (unsigned)np;
	size_t used = 0;
	for (int i = 0; i < np; i++) {
		int32_t len = pg_get_i32(&cur);
		struct pg_val *v = &po->params[i];
		v->fmt = param_format(fmts, nf, i);
		v->len = len;
		if (len < -1) { /* as PostgreSQL: no length but -1 (NULL) is negative */
			portal_put(s, po);
			pgx_error(s, "08P01", "insufficient data left in message", NULL);
			return;
		}
		if (v->fmt != 0 && v->fmt != 1) { /* as PostgreSQL: a NULL's too */
			portal_put(s, po);
			snprintf(msg, sizeof(msg), "unsupported format code: %d", v->fmt);
			pgx_error(s, "22023", msg, NULL);
			return;
		}
		if (len == -1) {
			v->p = NULL;
			continue;
		}
		const char *b = pg_get_bytes(&cur, (size_t)len);
		if (b == NULL)
			break;
		memcpy(po->data + used, b, (size_t)len);
		v->p = po->data + used;
		used += (size_t)len;
	}
	int16_t nr = pg_get_i16(&cur);
	if (cur.bad || nr < 0 || (uint32_t)nr > s->fe->lim.max_params) {
		portal_put(s, po);
		pgx_error(s, "08P01", "invalid Bind message", NULL);
		return;
	}
	if ((unsigned)nr > po->rfmt_cap) {
		int16_t *f = realloc(po->rfmt, (size_t)nr * sizeof(*f));
		if (f == NULL) {
			portal_put(s, po);
			goto oom;
		}
		po->rfmt = f;
		po->rfmt_cap = (unsigned)nr;
	}
	po->nrfmt = (unsigned)nr;
	for (int i = 0; i < nr; i++)
		po->rfmt[i] = pg_get_i16(&cur);
	struct pg_col cols[SQL_MAX_COLS];
	unsigned ncols = pgx_columns(&prep->st, NULL, cols);
	if (nr > 1 && (unsigned)nr != ncols) {
		portal_put(s, po);
		snprintf(msg, sizeof(msg),
			 "bind message has %d result formats but query has %u columns", nr, ncols);
		pgx_error(s, "08P01", msg, NULL);
		return;
	}
	if (pname[0] == '\0') {
		struct pg_portal *old = find_portal(s, "");
		if (old != NULL)
			free_portal(s, old);
	}
	po->next = s->portals;
	s->portals = po;
	s->nportals += pname[0] != '\0';
	pg_bind_complete(&s->c.out);
	return;
oom:
	pgx_error(s, "53200", "out of memory", NULL);
}

/* a result has SQL_MAX_COLS columns at most: a function's too */
_Static_assert(PG_FN_MAX_COLS <= SQL_MAX_COLS, "result columns");

static void describe_msg(struct pgs *s, const struct pg_msg *m)
{
	struct pg_cur cur = pg_cur_of(m);
	const char *kind = pg_get_bytes(&cur, 1);
	const char *name = pg_get_str(&cur);
	struct pg_col cols[SQL_MAX_COLS];
	char msg[120];
	if (cur.bad || (kind[0] != 'S' && kind[0] != 'P')) {
		pgx_error(s, "08P01", "invalid Describe message", NULL);
		return;
	}
	if (kind[0] == 'S') {
		struct pg_prep *p = find_prep(s, name);
		if (p == NULL) {
			snprintf(msg, sizeof(msg), "prepared statement \"%.60s\" does not exist",
				 name);
			pgx_error(s, "26000", msg, NULL);
			return;
		}
		pg_param_description(&s->c.out, p->ntypes, p->types);
		unsigned n = pgx_columns(&p->st, NULL, cols);
		if (n)
			pg_row_description(&s->c.out, n, cols);
		else
			pg_no_data(&s->c.out);
		return;
	}
	struct pg_portal *po = find_portal(s, name);
	if (po == NULL) {
		snprintf(msg, sizeof(msg), "portal \"%.60s\" does not exist", name);
		pgx_error(s, "34000", msg, NULL);
		return;
	}
	unsigned n = pgx_columns(&po->prep->st, po, cols);
	if (n)
		pg_row_description(&s->c.out, n, cols);
	else
		pg_no_data(&s->c.out);
}

static void execute_msg(struct pgs *s, const struct pg_msg *m)
{
	struct pg_cur cur = pg_cur_of(m);
	const char *name = pg_get_str(&cur);
	(void)pg_get_i32(&cur); /* max rows: every result has one row at most */
	if (cur.bad) {
		pgx_error(s, "08P01", "invalid Execute message", NULL);
		return;
	}
	struct pg_portal *po = find_portal(s, name);
	char msg[120];
	if (po == NULL) {
		snprintf(msg, sizeof(msg), "portal \"%.60s\" does not exist", name);
		pgx_error(s, "34000", msg, NULL);
		return;
	}
	for (unsigned i = 0; i < po->nrfmt; i++) /* as PostgreSQL: when rows are sent */
		if (po->rfmt[i] != 0 && po->rfmt[i] != 1) {
			snprintf(msg, sizeof(msg), "unsupported format code: %d", po->rfmt[i]);
			pgx_error(s, "22023", msg, NULL);
			return;
		}
	pgx_run(s, &po->prep->st, po);
}

static void close_msg(struct pgs *s, const struct pg_msg *m)
{
	struct pg_cur cur = pg_cur_of(m);
	const char *kind = pg_get_bytes(&cur, 1);
	const char *name = pg_get_str(&cur);
	if (cur.bad || (kind[0] != 'S' && kind[0] != 'P')) {
		pgx_error(s, "08P01", "invalid Close message", NULL);
		return;
	}
	if (kind[0] == 'S') {
		struct pg_prep *p = find_prep(s, name);
		if (p != NULL)
			free_prep(s, p);
	} else {
		struct pg_portal *po = find_portal(s, name);
		if (po != NULL)
			free_portal(s, po);
	}
	pg_close_complete(&s->c.out);
}

static void sync_msg(struct pgs *s)
{
	s->skip_sync = false;
	struct pg_portal *unnamed = find_portal(s, "");
	if (unnamed != NULL)
		free_portal(s, unnamed);
	pgx_ready(s);
}

enum conn_step pgq_message(struct pgs *s, const struct pg_msg *m)
{
	if (s->skip_sync && m->type != 'S' && m->type != 'X' && m->type != 'Q')
		return CONN_STEP_RAN; /* after an error, until Sync */
	switch (m->type) {
	case 'Q':
		simple_query(s, m);
		break;
	case 'P':
		parse_msg(s, m);
		break;
	case 'B':
		bind_msg(s, m);
		break;
	case 'D':
		describe_msg(s, m);
		break;
	case 'E':
		execute_msg(s, m);
		break;
	case 'C':
		close_msg(s, m);
		break;
	case 'S':
		sync_msg(s);
		break;
	case 'H':
		conn_flush(&s->c);
		break;
	case 'X':
		conn_close(&s->c, "client terminated");
		return CONN_STEP_STOP;
	case 'F':
		pgx_error(s, "0A000", "leasegate serves locks only: the function call protocol",
			  NULL);
		break;
	case 'd':
	case 'c':
	case 'f':
		break; /* COPY data with no COPY: ignored, as PostgreSQL does */
	default: {
		char msg[64];
		snprintf(msg, sizeof(msg), "invalid frontend message type %d",
			 (int)(unsigned char)m->type);
		pgs_fatal(s, "08P01", msg);
		return CONN_STEP_STOP;
	}
	}
	if (s->c.state == CONN_CLOSING)
		return CONN_STEP_STOP;
	return CONN_STEP_RAN;
}
