/*
 * script_lua: the Lua 5.1 interpreter of EVAL, sandboxed as Redis 7 does,
 * and the conversions between Lua values and replies (struct sv).
 *
 * A script runs to its end in one call of sl_run(), with no I/O: its
 * redis.call()s are answered by the host at once, from the keys the caller
 * read before (gateway/script/script_keys.h). So nothing here ever has to
 * suspend a running script, which Lua 5.1 cannot do across pcall or a
 * metamethod (no yield across a C call boundary): no coroutine tricks, no
 * thread per script, and the event loop never waits on Lua for more than
 * the instruction budget and the deadline allow.
 *
 * The sandbox: the base library without print, loadfile, dofile, load,
 * rawset, getfenv, setfenv, newproxy, collectgarbage, module and require; table,
 * string (no dump), math; os with clock only; no io, package or debug.
 * loadstring refuses bytecode, as does the script itself. Globals are
 * read-only (an assignment, or the read of a global that does not exist,
 * is an error, as in Redis 7); each run gets a fresh global table of its
 * own in front of the shared, read-only libraries, so a run leaves
 * nothing behind for the next. Limits per run: instructions (a count
 * hook), wall-clock time, bytes allocated (a lua_Alloc of our own); once a
 * limit is hit, every further instruction raises again, so a pcall in the
 * script cannot swallow it, and the run is an error whatever it returns.
 *
 * Not here: what the commands do (script_keys), the commit (script_run).
 */
#ifndef LG_SCRIPT_LUA_H
#define LG_SCRIPT_LUA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_SHA_HEX     40
#define SL_BODY_MAX    (256 * 1024) /* bytes of a script */
#define SL_SCRIPTS_MAX 10000	    /* scripts cached */
#define SL_DEPTH_MAX   32	    /* nesting of a reply */
#define SL_ELEMS_MAX   100000	    /* elements of one reply array */
#define SL_ARG_MAX     (512 * 1024) /* bytes of one argument of redis.call */
#define SL_CALL_ARGS   1024	    /* arguments of one redis.call */

/* A reply: what a command answers a script, and what a script answers. */
enum sv_type { SV_NIL, SV_INT, SV_BULK, SV_STATUS, SV_ERROR, SV_ARRAY, SV_BOOL, SV_DOUBLE };

struct sv {
	enum sv_type type;
	int64_t i;    /* INT; BOOL (0, 1) */
	double d;     /* DOUBLE */
	char *s;      /* BULK, STATUS, ERROR: malloc'd, NUL-terminated */
	size_t len;   /* of s */
	struct sv *a; /* ARRAY: n elements, malloc'd */
	size_t n;
};

/* Frees what v holds (not v); v becomes NIL. */
void sv_clear(struct sv *v);
/* Sets v to a copy of s (len bytes) of type t; false on out-of-memory. */
bool sv_set_str(struct sv *v, enum sv_type t, const char *s, size_t len);
/* Sets v to an error "fmt..." (out-of-memory: a static-free fallback). */
void sv_errorf(struct sv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct sl_limits {
	uint64_t max_instructions; /* per run */
	int64_t max_ms;		   /* wall-clock per run */
	size_t max_bytes;	   /* allocated by one run, beyond what the VM had; and the
				      bytes of its reply's elements and strings */
};

/* What a command of a script does: answers argv (argc strings of lens
 * bytes) into *reply (NIL on entry). ro: the script may not write. */
typedef void (*sl_call_fn)(void *host, int argc, const char *const *argv, const size_t *lens,
			   struct sv *reply);

struct sl_vm;

/* A VM; NULL on out-of-memory. */
struct sl_vm *sl_new(const struct sl_limits *lim) __attribute__((warn_unused_result));
void sl_free(struct sl_vm *vm);

/* The SHA1 of body in lower-case hex (SL_SHA_HEX + 1 bytes). */
void sl_sha1_hex(const char *body, size_t len, char *out);

/* Compiles body and caches it under its SHA1 (written to sha, SL_SHA_HEX
 * + 1 bytes). false with a Redis error message in err (errlen bytes): too
 * large, bytecode, a syntax error, the cache full. A "#!lua" first line is
 * read as Redis 7 does: flags=no-writes makes the script read-only. */
bool sl_load(struct sl_vm *vm, const char *body, size_t len, char *sha, char *err, size_t errlen)
	__attribute__((warn_unused_result));

/* The script of sha is cached. */
bool sl_exists(const struct sl_vm *vm, const char *sha, size_t len);
/* The script's body (for the commit's retries, the table's cache). */
const char *sl_body(const struct sl_vm *vm, const char *sha, size_t *len);
/* Forgets every script. */
void sl_flush(struct sl_vm *vm);
size_t sl_count(const struct sl_vm *vm);

struct sl_run {
	const char *sha; /* cached (sl_load) */
	int nkeys, nargs;
	const char *const *keys, *const *args;
	const size_t *key_lens, *arg_lens;
	bool ro; /* EVAL_RO, EVALSHA_RO */
	sl_call_fn call;
	void *host;
	int64_t now_ms; /* TIME, frozen for the run */
};

/* Runs a cached script to its end: *out is its reply (an SV_ERROR for a
 * script that failed, hit a limit or is not cached). */
void sl_exec(struct sl_vm *vm, const struct sl_run *run, struct sv *out);

/* The cached script of sha was loaded with "#!lua flags=no-writes". */
bool sl_script_ro(const struct sl_vm *vm, const char *sha);

struct sl_stats {
	uint64_t runs, errors, killed; /* killed: a limit hit */
	size_t bytes;		       /* the VM's memory now */
};
void sl_stats(const struct sl_vm *vm, struct sl_stats *out);

#endif
