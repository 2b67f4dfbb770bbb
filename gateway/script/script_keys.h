/*
 * script_keys: the lock keyspace as a script (or a transaction) sees it —
 * the commands of redis.call over the keys read before the run, with the
 * writes buffered, and the commit those reads and writes make.
 *
 * A key is a lock: it exists while a lease holds it; its string value is
 * the holder's identity (the item's owner without the "d:" of a lease
 * taken by value, as GET outside scripts shows it), its TTL what remains
 * of the lease. How long a lease remains:
 *   - written by a script: its expAt (wall clock, epoch ms), valid
 *     while the item's rvn is the one the script wrote (expRvn), against
 *     the run's frozen now;
 *   - written by the lease core (LOCK.ACQUIRE, SET NX PX outside
 *     scripts, renewals): what this replica's lease core says
 *     (lt_item_remaining_ms: the lease, less how long this replica has
 *     seen the same rvn).
 * A script may write a key that is absent or held by value (SET outside
 * scripts, a script's SET); a lease a session took with LOCK.ACQUIRE is
 * read-only to scripts. Every write needs an expiry within the gateway's
 * lease bounds: a lock that never ends is no lease.
 *
 * Commands: GET, SET (NX XX PX EX PXAT EXAT KEEPTTL GET), DEL, UNLINK,
 * EXISTS, PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT (NX XX GT LT), PTTL, TTL,
 * PEXPIRETIME, EXPIRETIME, TYPE, MGET, MSET, MSETNX, GETRANGE, INCR,
 * HSET, HGET, HINCRBY, HEXISTS, HDEL, HLEN, HGETALL, TIME, PING.
 * Anything else is an error naming the command. Every key must be one of
 * KEYS.
 *
 * A hash on a lock key (Redisson-style reentrant locks: holder -> count)
 * is at most SK_FIELDS_MAX fields of SK_FIELD_MAX printable bytes each
 * (no space, quote or backslash), kept in the item (lock_item.hash); the
 * item's owner is "h:" and the SHA1 of its field names, so a hash that
 * changes holder (its fields) gets the next fence, and one whose counts
 * change keeps it. A key a command creates without an expiry (HSET,
 * HINCRBY, INCR, MSET) must get one (PEXPIRE...) before the script ends:
 * sk_finish refuses the run otherwise.
 */
#ifndef LG_SCRIPT_KEYS_H
/* What a key held shared (LOCK.ACQUIRE ... SHARED | LIMIT n, PostgreSQL's
 * pg_advisory_lock_shared), or promised to the readers an exclusive
 * release admitted, reads as in a script: alive, this value, no expiry
 * (PTTL -1), and never written by a script. */
#define SK_SHARED_VALUE "leasegate:shared"
#define LG_SCRIPT_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/store/store.h"
#include "core/store/store_kv.h"
#include "gateway/script/script_lua.h"

#define SK_VALUE_MAX  (STORE_ID_MAX - 2) /* bytes of a value: the owner less "d:" */
#define SK_HASHED     "h:"		 /* the owner prefix of a hash on a lock key */
#define SK_KEYS_MAX   STORE_KV_MAX_OPS
#define SK_FIELDS_MAX 8	 /* fields of a hash on a lock key */
#define SK_FIELD_MAX  64 /* bytes of a field's name, and of its value */

struct sk_field {
	char name[SK_FIELD_MAX + 1], value[SK_FIELD_MAX + 1];
};

struct sk_key {
	const char *name; /* NUL-terminated, the caller's */
	size_t len;
	struct lock_item item; /* as read */
	bool not_lock;	       /* the item is another application's */
	/* at the start of the run */
	bool alive0, writable0, script_exp0;
	char value0[STORE_ID_MAX + 1];
	int64_t expires0; /* epoch ms while alive */
	bool hash0;	  /* held as a hash (owner "h:...") at the start */
	/* now */
	bool alive;
	char value[STORE_ID_MAX + 1];
	int64_t expires_at; /* 0 while alive: no expiry yet (HSET, INCR, MSET) */
	bool hash;	    /* alive as a hash: its fields */
	struct sk_field fields[SK_FIELDS_MAX];
	int nfields;
	bool touched, dirty;
	char new_rvn[33], new_owner[STORE_ID_MAX + 1]; /* the commit's */
	char new_hash[STORE_HASH_MAX + 1];
};

/* PUBLISH of a script: sent after its commit (sr_config.publish). */
#define SK_PUBS_MAX	 64	     /* messages of one run */
#define SK_PUB_BYTES_MAX (64 * 1024) /* bytes of their channels and messages */

struct sk_pub {
	const char *channel, *message; /* in pub_buf: NUL-terminated each */
	size_t channel_len, message_len;
};

struct sk_space {
	struct sk_key *keys;
	int n;
	/* PUBLISH: how many subscribers a channel has on this replica now
	 * (NULL: none anywhere), and the messages of the run; pubs and
	 * pub_buf are malloc'd, freed by sk_space_free (sk_reset empties) */
	size_t (*subscribers)(void *arg, const char *channel, size_t len);
	void *sub_arg;
	struct sk_pub pubs[SK_PUBS_MAX];
	int npubs;
	char *pub_buf;
	size_t pub_len;
	int64_t now;		/* wall clock of the run, epoch ms */
	bool ro;		/* EVAL_RO: writes refused */
	int64_t min_ms, max_ms; /* the lease bounds of a write */
	bool writes;		/* a write command ran */
};

/* Fills key k from the item read at its name (item may show none);
 * remaining_ms: the lease core's view of a lease it wrote. */
void sk_key_init(struct sk_key *k, const char *name, const struct lock_item *item,
		 int64_t remaining_ms, int64_t now);

/* Undoes a run's reads and writes: the keys as read, no message. */
void sk_reset(struct sk_space *sp);
/* Frees what the run kept (its messages). */
void sk_space_free(struct sk_space *sp);

/* sl_call_fn: one command of a script (host: the struct sk_space). */
void sk_call(void *host, int argc, const char *const *argv, const size_t *lens, struct sv *reply);

/* The keys of a command of the keyspace: true with argv[*first],
 * argv[*first + *step]... up to argv[*last] the keys (*first 0: none);
 * false when argv[0] is no command of the keyspace. For MULTI, which
 * prefetches the keys of its queue. */
bool sk_cmd_keys(int argc, const char *const *argv, const size_t *lens, int *first, int *last,
		 int *step);

/* The run may commit: every key alive and written has an expiry. false
 * with the error in *err (NIL on entry). */
bool sk_finish(const struct sk_space *sp, struct sv *err);

/* The commands of the keyspace, for messages: "GET, SET, ...". */
const char *sk_cmd_names(void);

/* True when key now (read later) is the version then was (as read for
 * WATCH): the same item, alive or not as then. A lease of the lease core
 * renewed by its heartbeats counts as the same; any write of a script or a
 * command (a new owner, fence, lease, a script's new version) does not. */
bool sk_same(const struct sk_key *then, const struct sk_key *now);

/* The commit of the run: one op per key touched, into ops (room for
 * sp->n), *n of them; commit_now is the wall clock at the commit (keys
 * seen alive by their expiry must outlive it). 0 ops: nothing to commit
 * (nothing touched, or one key read and nothing written: a single read is
 * its own serialization point). */
void sk_commit_ops(struct sk_space *sp, int64_t commit_now, struct store_kv_op *ops, unsigned *n);

#endif
