/*
 * ls_fixture: the lease-session tests' fixture (see ls_fixture.c).
 */
#ifndef LG_LS_FIXTURE_H
#define LG_LS_FIXTURE_H

#include "gateway/lease/lsess.h"
#include "tests/support/lt_fixture.h"

#define LSF_LEASE 3000

/* max_name 8, max_leases 3, max_lease_ms 60000, default_lease_ms 5000 */
extern const struct ls_limits lsf_limits;

struct lsf_box {
	int calls;
	struct ls_result last;
};

struct lsf_lost_log {
	int n;
	enum ls_kind kind;
	char name[64];
	int64_t token;
	enum lt_loss reason;
};

struct lsf_env {
	struct fx *f;
	struct lsvc *svc;
	struct lsess *s[4];
	struct lsf_lost_log lost[4];
};

void lsf_got(void *arg, const struct ls_result *r);
int lsf_setup(void **state);
int lsf_teardown(void **state);
struct ls_acquire_req lsf_req_of(const char *name, int64_t lease_ms, int64_t wait_ms);
int64_t lsf_take(struct lsf_env *e, int i, const char *name, enum ls_scope scope, bool reentrant);
bool lsf_held(struct lsf_env *e, const char *name);
enum ls_status lsf_release(struct lsf_env *e, int i, const char *name, int64_t token,
			   enum ls_scope scope);
enum ls_status lsf_renew(struct lsf_env *e, int i, const char *name, int64_t token,
			 struct ls_result *out);
void lsf_set_value(void *arg, int64_t v);
void lsf_delete_item(struct lsf_env *e, const char *name);
void lsf_lose_by_delete(struct lsf_env *e, const char *name);

#endif
