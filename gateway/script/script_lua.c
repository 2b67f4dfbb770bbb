/*
 * script_lua: the sandboxed Lua 5.1 of EVAL (see script_lua.h): the VM,
 * its script cache, the redis.* library and the conversions.
 */
#include "gateway/script/script_lua.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOOK_EVERY 1000 /* instructions between two looks at the limits */

struct sl_vm {
	lua_State *L;
	struct sl_limits lim;
	size_t bytes, cap; /* allocated now; the cap of this run (0: none) */
	bool over_mem;	   /* an allocation was refused in this run */
	/* the run in progress */
	const struct sl_run *run;
	uint64_t instructions;
	int64_t deadline_ns;
	const char *killed; /* why the run was stopped, NULL while it runs */
	/* the reply of the redis.call in progress: pushing it may raise (out
	 * of memory, a limit), which skips do_call's clear; the next call and
	 * the end of the run clear it */
	struct sv reply;
	size_t nscripts;
	struct sl_stats stats;
};

/* --- replies --- */

void sv_clear(struct sv *v)
{
	if (v->type == SV_ARRAY) {
		for (size_t i = 0; i < v->n; i++)
			sv_clear(&v->a[i]);
		free(v->a);
	}
	free(v->s);
	*v = (struct sv){.type = SV_NIL};
}

bool sv_set_str(struct sv *v, enum sv_type t, const char *s, size_t len)
{
	char *c = malloc(len + 1);
	if (c == NULL) {
		*v = (struct sv){.type = SV_NIL};
		return false;
	}
	memcpy(c, s, len);
	c[len] = '\0';
	*v = (struct sv){.type = t, .s = c, .len = len};
	return true;
}

void sv_errorf(struct sv *v, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sv_clear(v);
	if (!sv_set_str(v, SV_ERROR, msg, strlen(msg)))
		v->type = SV_ERROR; /* s NULL: the renderer says out of memory */
}

/* --- memory, instructions, time --- */

static void *sl_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct sl_vm *vm = ud;
	if (nsize == 0) {
		free(ptr);
		vm->bytes -= osize;
		return NULL;
	}
	/* only growth can be refused: Lua counts on shrinking to succeed */
	if (nsize > osize && vm->cap > 0 && vm->bytes + (nsize - osize) > vm->cap) {
		vm->over_mem = true;
		return NULL;
	}
	void *p = realloc(ptr, nsize);
	if (p == NULL)
		return NULL;
	vm->bytes = vm->bytes - osize + nsize;
	return p;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct sl_vm *vm_of(lua_State *L)
{
	void *ud;
	lua_getallocf(L, &ud);
	return ud;
}

static void kill_hook(lua_State *L, lua_Debug *ar);

/* Stops the run: from now on every instruction raises (a pcall of the
 * script catches one error, not the next instruction's). */
static void kill_run(lua_State *L, struct sl_vm *vm, const char *why)
{
	vm->killed = why;
	lua_sethook(L, kill_hook, LUA_MASKCOUNT, 1);
	luaL_error(L, "%s", why);
}

static void kill_hook(lua_State *L, lua_Debug *ar)
{
	struct sl_vm *vm = vm_of(L);
	if (vm->killed != NULL) {
		luaL_error(L, "%s", vm->killed);
		return;
	}
	vm->instructions += HOOK_EVERY;
	if (vm->instructions > vm->lim.max_instructions)
		kill_run(L, vm, "the script ran past its instruction budget");
	else if (mono_ns() > vm->deadline_ns)
		kill_run(L, vm, "the script ran past its time limit");
	else if (vm->over_mem)
		kill_run(L, vm, "the script ran past its memory limit");
}

/* --- Lua -> reply --- */

/* A script's reply being converted: the bytes it may still take. Its
 * elements and strings count against the run's memory limit, so a table
 * that holds itself cannot make it grow as its count of paths (the
 * nesting is bounded apart, SL_DEPTH_MAX). */
struct conv {
	size_t left;
	bool over; /* the budget ran out: the whole reply is an error */
};

static void to_sv(lua_State *L, int idx, struct sv *out, struct conv *c, int depth);

/* Takes n bytes of c's budget; false (and c->over) when they are not left. */
static bool conv_take(struct conv *c, size_t n)
{
	if (c->over || n > c->left) {
		c->over = true;
		return false;
	}
	c->left -= n;
	return true;
}

/* A table's field name as a string, or NULL. */
static const char *field_str(lua_State *L, int idx, const char *name, size_t *len)
{
	lua_getfield(L, idx, name); /* raw enough: our tables have no metatables */
	const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, len) : NULL;
	lua_pop(L, 1);
	return s;
}

static void table_to_sv(lua_State *L, int idx, struct sv *out, struct conv *c, int depth)
{
	size_t len;
	const char *s;
	if ((s = field_str(L, idx, "err", &len)) != NULL) {
		if (conv_take(c, len + 1))
			sv_set_str(out, SV_ERROR, s, len);
		return;
	}
	if ((s = field_str(L, idx, "ok", &len)) != NULL) {
		if (conv_take(c, len + 1))
			sv_set_str(out, SV_STATUS, s, len);
		return;
	}
	lua_getfield(L, idx, "double");
	if (lua_type(L, -1) == LUA_TNUMBER) {
		*out = (struct sv){.type = SV_DOUBLE, .d = lua_tonumber(L, -1)};
		lua_pop(L, 1);
		return;
	}
	lua_pop(L, 1);
	size_t n = 0; /* the array part up to the first nil, as Redis */
	for (;; n++) {
		lua_rawgeti(L, idx, (int)n + 1);
		bool end = lua_isnil(L, -1);
		lua_pop(L, 1);
		if (end || n >= SL_ELEMS_MAX)
			break;
	}
	*out = (struct sv){.type = SV_ARRAY};
	if (!conv_take(c, n * sizeof(*out->a)))
		return;
	if (n > 0 && (out->a = calloc(n, sizeof(*out->a))) == NULL) {
		sv_errorf(out, "ERR out of memory converting the script's reply");
		return;
	}
	out->n = n;
	for (size_t i = 0; i < n && !c->over; i++) {
		lua_rawgeti(L, idx, (int)i + 1);
		to_sv(L, lua_gettop(L), &out->a[i], c, depth + 1);
		lua_pop(L, 1);
	}
}

/* A Lua number as Redis gives it: an integer, the fraction cut off. */
static int64_t num_to_int(lua_Number d)
{
	if (isnan(d))
		return 0;
	if (d >= 9223372036854775807.0)
		return INT64_MAX;
	if (d <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}

static void to_sv(lua_State *L, int idx, struct sv *out, struct conv *c, int depth)
{
	*out = (struct sv){.type = SV_NIL};
	if (depth > SL_DEPTH_MAX || !lua_checkstack(L, 4)) {
		sv_errorf(out, "ERR reached lua stack limit");
		return;
	}
	size_t len;
	const char *s;
	switch (lua_type(L, idx)) {
	case LUA_TSTRING:
		s = lua_tolstring(L, idx, &len);
		if (!conv_take(c, len + 1))
			break;
		if (!sv_set_str(out, SV_BULK, s, len))
			sv_errorf(out, "ERR out of memory converting the script's reply");
		break;
	case LUA_TNUMBER:
		*out = (struct sv){.type = SV_INT, .i = num_to_int(lua_tonumber(L, idx))};
		break;
	case LUA_TBOOLEAN:
		*out = (struct sv){.type = SV_BOOL, .i = lua_toboolean(L, idx)};
		break;
	case LUA_TTABLE:
		table_to_sv(L, idx, out, c, depth);
		break;
	default: /* nil, functions, userdata...: nil, as Redis */
		break;
	}
}

/* The value on top of L's stack as the run's reply *out, at most max_bytes
 * of elements and strings; a larger one is an error, whole. */
static void reply_to_sv(lua_State *L, size_t max_bytes, struct sv *out)
{
	struct conv c = {.left = max_bytes};
	to_sv(L, lua_gettop(L), out, &c, 0);
	if (c.over) {
		sv_clear(out);
		sv_errorf(out, "ERR the script's reply is larger than its memory limit (%zu bytes)",
			  max_bytes);
	}
}

/* --- reply -> Lua --- */

static void push_sv(lua_State *L, const struct sv *v, int depth)
{
	luaL_checkstack(L, 4, "reply too deep");
	switch (v->type) {
	case SV_INT:
		lua_pushnumber(L, (lua_Number)v->i);
		break;
	case SV_BULK:
		lua_pushlstring(L, v->s != NULL ? v->s : "", v->len);
		break;
	case SV_STATUS:
	case SV_ERROR:
		lua_createtable(L, 0, 1);
		lua_pushlstring(L, v->s != NULL ? v->s : "ERR out of memory", v->s ? v->len : 17);
		lua_setfield(L, -2, v->type == SV_STATUS ? "ok" : "err");
		break;
	case SV_ARRAY:
		lua_createtable(L, (int)v->n, 0);
		for (size_t i = 0; i < v->n && depth < SL_DEPTH_MAX; i++) {
			push_sv(L, &v->a[i], depth + 1);
			lua_rawseti(L, -2, (int)i + 1);
		}
		break;
	case SV_BOOL:
		lua_pushboolean(L, (int)v->i);
		break;
	case SV_DOUBLE:
		lua_pushnumber(L, v->d);
		break;
	case SV_NIL:
	default:
		lua_pushboolean(L, 0); /* a nil reply is false, as Redis */
		break;
	}
}

/* --- the redis library --- */

/* redis.call and redis.pcall: the arguments as strings (numbers converted
 * as Lua does), to the host; raise (call) or return (pcall) an error. */
static int do_call(lua_State *L, bool raise)
{
	struct sl_vm *vm = vm_of(L);
	int argc = lua_gettop(L);
	if (argc == 0)
		return luaL_error(L,
				  "Please specify at least one argument for this redis lib call");
	if (argc > SL_CALL_ARGS)
		return luaL_error(L, "Too many arguments for a redis lib call (at most %d)",
				  SL_CALL_ARGS);
	const char *argv[SL_CALL_ARGS];
	size_t lens[SL_CALL_ARGS];
	for (int i = 0; i < argc; i++) {
		int t = lua_type(L, i + 1);
		if (t != LUA_TSTRING && t != LUA_TNUMBER)
			return luaL_error(
				L, "Lua redis lib command arguments must be strings or integers");
		argv[i] = lua_tolstring(L, i + 1, &lens[i]);
		if (lens[i] > SL_ARG_MAX)
			return luaL_error(L, "an argument of a redis lib call is over %d bytes",
					  SL_ARG_MAX);
	}
	sv_clear(&vm->reply);
	vm->run->call(vm->run->host, argc, argv, lens, &vm->reply);
	push_sv(L, &vm->reply, 0);
	bool err = vm->reply.type == SV_ERROR;
	sv_clear(&vm->reply);
	if (err && raise)
		return lua_error(L); /* the {err=...} table, as Redis 7 raises it */
	return 1;
}

static int l_call(lua_State *L)
{
	return do_call(L, true);
}

static int l_pcall(lua_State *L)
{
	return do_call(L, false);
}

static int reply_table(lua_State *L, const char *field)
{
	luaL_checktype(L, 1, LUA_TSTRING);
	lua_createtable(L, 0, 1);
	lua_pushvalue(L, 1);
	lua_setfield(L, -2, field);
	return 1;
}

static int l_error_reply(lua_State *L)
{
	return reply_table(L, "err");
}

static int l_status_reply(lua_State *L)
{
	return reply_table(L, "ok");
}

void sl_sha1_hex(const char *body, size_t len, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (!EVP_Digest(body, len, md, &n, EVP_sha1(), NULL) || n * 2 != SL_SHA_HEX) {
		memset(out, '0', SL_SHA_HEX);
		out[SL_SHA_HEX] = '\0';
		return;
	}
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static int l_sha1hex(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	char hex[SL_SHA_HEX + 1];
	sl_sha1_hex(s, len, hex);
	lua_pushstring(L, hex);
	return 1;
}

static int l_true(lua_State *L)
{
	lua_pushboolean(L, 1);
	return 1;
}

static int l_nothing(lua_State *L)
{
	return 0;
}

/* redis.setresp(2|3): accepted; replies reach the script in RESP2's
 * shapes (the commands of the lock keyspace answer nothing RESP3 would
 * shape otherwise). */
static int l_setresp(lua_State *L)
{
	lua_Integer v = luaL_checkinteger(L, 1);
	if (v != 2 && v != 3)
		return luaL_error(L, "RESP version must be 2 or 3.");
	return 0;
}

static const luaL_Reg redis_lib[] = {
	{"call", l_call},
	{"pcall", l_pcall},
	{"error_reply", l_error_reply},
	{"status_reply", l_status_reply},
	{"sha1hex", l_sha1hex},
	{"log", l_nothing},
	{"setresp", l_setresp},
	{"set_repl", l_nothing},
	{"replicate_commands", l_true},
	{"breakpoint", l_nothing},
	{"debug", l_nothing},
	{NULL, NULL},
};

static const struct {
	const char *name;
	int value;
} redis_consts[] = {
	{"LOG_DEBUG", 0},   {"LOG_VERBOSE", 1},	 {"LOG_NOTICE", 2},
	{"LOG_WARNING", 3}, {"REPL_NONE", 0},	 {"REPL_AOF", 1},
	{"REPL_SLAVE", 2},  {"REPL_REPLICA", 2}, {"REPL_ALL", 3},
};

static void make_readonly(lua_State *L);

/* loadstring without bytecode (Redis 7 refuses it: the Lua 5.1 loader of
 * bytecode trusts its input). */
static int l_loadstring(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);
	const char *name = luaL_optstring(L, 2, s);
	if (len > 0 && s[0] == LUA_SIGNATURE[0]) {
		lua_pushnil(L);
		lua_pushstring(L, "loading bytecode is not allowed");
		return 2;
	}
	if (luaL_loadbuffer(L, s, len, name) != 0) {
		lua_pushnil(L);
		lua_insert(L, -2);
		return 2;
	}
	/* the chunk reads the caller's globals, never the VM's own table
	 * (which loadbuffer gives it, and which is writable) */
	lua_Debug ar;
	bool got = false;
	if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "f", &ar)) {
		if (!lua_iscfunction(L, -1)) {
			lua_getfenv(L, -1);
			lua_remove(L, -2);
			got = true;
		} else {
			lua_pop(L, 1);
		}
	}
	if (!got) {
		lua_getfield(L, LUA_REGISTRYINDEX, "sl_globals");
		make_readonly(L);
	}
	lua_setfenv(L, -2);
	return 1;
}

static int l_os_clock(lua_State *L)
{
	lua_pushnumber(L, ((lua_Number)clock()) / (lua_Number)CLOCKS_PER_SEC);
	return 1;
}

/* --- the sandbox --- */

static const char *const removed_base[] = {
	"loadfile", "dofile",	      "load",	"rawset",  "getfenv", "setfenv",
	"newproxy", "collectgarbage", "module", "require", "gcinfo",  NULL,
};

/* A read-only view of the table at the top: an empty table whose
 * metatable reads the original and refuses writes; replaces it. */
static int ro_newindex(lua_State *L)
{
	return luaL_error(L, "Attempt to modify a readonly table");
}

static void make_readonly(lua_State *L)
{
	lua_newtable(L);	  /* proxy */
	lua_createtable(L, 0, 3); /* its metatable */
	lua_pushvalue(L, -3);	  /* the original */
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, ro_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable"); /* getmetatable/setmetatable refused */
	lua_setmetatable(L, -2);
	lua_remove(L, -2); /* the original */
}

/* Globals the script reads that do not exist are an error (Redis 7). */
static int env_index(lua_State *L)
{
	lua_pushvalue(L, 2);
	lua_rawget(L, lua_upvalueindex(1));
	if (!lua_isnil(L, -1))
		return 1;
	const char *k = lua_tostring(L, 2);
	return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
			  k != NULL ? k : "?");
}

static int env_newindex(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	return luaL_error(L,
			  "Attempt to modify a readonly table: script attempted to set "
			  "global variable '%s'",
			  k != NULL ? k : "?");
}

static void open_lib(lua_State *L, const char *name, lua_CFunction open)
{
	lua_pushcfunction(L, open);
	lua_pushstring(L, name);
	lua_call(L, 1, 0);
}

/* The libraries into the registry's "sl_globals" (the read-only table the
 * runs' globals read through), LUA_GLOBALSINDEX left for C only. */
static void build_globals(lua_State *L)
{
	open_lib(L, "", luaopen_base);
	open_lib(L, LUA_TABLIBNAME, luaopen_table);
	open_lib(L, LUA_STRLIBNAME, luaopen_string);
	open_lib(L, LUA_MATHLIBNAME, luaopen_math);
	lua_newtable(L); /* the scripts' globals */
	int g = lua_gettop(L);
	static const char *const base_kept[] = {
		"assert",   "error",  "ipairs",	  "next",	  "pairs",	  "pcall",
		"rawequal", "rawget", "select",	  "tonumber",	  "tostring",	  "type",
		"unpack",   "xpcall", "_VERSION", "getmetatable", "setmetatable", NULL};
	for (int i = 0; base_kept[i] != NULL; i++) {
		lua_getglobal(L, base_kept[i]);
		lua_setfield(L, g, base_kept[i]);
	}
	lua_pushcfunction(L, l_loadstring);
	lua_setfield(L, g, "loadstring");
	static const char *const libs[] = {LUA_TABLIBNAME, LUA_STRLIBNAME, LUA_MATHLIBNAME, NULL};
	for (int i = 0; libs[i] != NULL; i++) {
		lua_getglobal(L, libs[i]);
		if (strcmp(libs[i], LUA_STRLIBNAME) == 0) {
			lua_pushnil(L);
			lua_setfield(L, -2, "dump");
		}
		make_readonly(L);
		lua_setfield(L, g, libs[i]);
	}
	lua_createtable(L, 0, 1); /* os: clock only */
	lua_pushcfunction(L, l_os_clock);
	lua_setfield(L, -2, "clock");
	make_readonly(L);
	lua_setfield(L, g, "os");
	lua_newtable(L);
	luaL_register(L, NULL, redis_lib);
	for (size_t i = 0; i < sizeof(redis_consts) / sizeof(redis_consts[0]); i++) {
		lua_pushinteger(L, redis_consts[i].value);
		lua_setfield(L, -2, redis_consts[i].name);
	}
	make_readonly(L);
	lua_setfield(L, g, "redis");
	lua_pushvalue(L, g);
	lua_setfield(L, g, "_G"); /* the table itself: runs see it read-only through env */
	lua_setfield(L, LUA_REGISTRYINDEX, "sl_globals");
	/* strings' methods: ("x"):rep(3) reads the real string table through
	 * the string metatable; hide that metatable from getmetatable */
	lua_pushliteral(L, "");
	lua_getmetatable(L, -1);
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_pop(L, 2);
	for (int i = 0; removed_base[i] != NULL; i++) { /* and from C's globals */
		lua_pushnil(L);
		lua_setglobal(L, removed_base[i]);
	}
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, "sl_scripts");
}

struct sl_vm *sl_new(const struct sl_limits *lim)
{
	struct sl_vm *vm = calloc(1, sizeof(*vm));
	if (vm == NULL)
		return NULL;
	vm->lim = *lim;
	vm->L = lua_newstate(sl_alloc, vm);
	if (vm->L == NULL) {
		free(vm);
		return NULL;
	}
	build_globals(vm->L);
	return vm;
}

void sl_free(struct sl_vm *vm)
{
	if (vm == NULL)
		return;
	lua_close(vm->L);
	free(vm);
}

/* --- the cache --- */

/* Pushes the cache entry of sha (a table {f=function, body=string,
 * ro=bool}) or nil. */
static void push_entry(lua_State *L, const char *sha, size_t len)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "sl_scripts");
	lua_pushlstring(L, sha, len);
	lua_rawget(L, -2);
	lua_remove(L, -2);
}

bool sl_exists(const struct sl_vm *vm, const char *sha, size_t len)
{
	if (len != SL_SHA_HEX)
		return false;
	char low[SL_SHA_HEX];
	for (size_t i = 0; i < len; i++)
		low[i] = (char)(sha[i] >= 'A' && sha[i] <= 'F' ? sha[i] + 32 : sha[i]);
	push_entry(vm->L, low, len);
	bool found = !lua_isnil(vm->L, -1);
	lua_pop(vm->L, 1);
	return found;
}

const char *sl_body(const struct sl_vm *vm, const char *sha, size_t *len)
{
	push_entry(vm->L, sha, strlen(sha));
	const char *body = NULL;
	if (lua_istable(vm->L, -1)) {
		lua_getfield(vm->L, -1, "body");
		body = lua_tolstring(vm->L, -1, len); /* kept alive by the cache */
		lua_pop(vm->L, 1);
	}
	lua_pop(vm->L, 1);
	return body;
}

bool sl_script_ro(const struct sl_vm *vm, const char *sha)
{
	push_entry(vm->L, sha, strlen(sha));
	bool ro = false;
	if (lua_istable(vm->L, -1)) {
		lua_getfield(vm->L, -1, "ro");
		ro = lua_toboolean(vm->L, -1);
		lua_pop(vm->L, 1);
	}
	lua_pop(vm->L, 1);
	return ro;
}

void sl_flush(struct sl_vm *vm)
{
	lua_newtable(vm->L);
	lua_setfield(vm->L, LUA_REGISTRYINDEX, "sl_scripts");
	vm->nscripts = 0;
	lua_gc(vm->L, LUA_GCCOLLECT, 0);
}

size_t sl_count(const struct sl_vm *vm)
{
	return vm->nscripts;
}

/* The "#!lua" line of Redis 7: its flags (no-writes: read-only; others
 * accepted), and where the code starts (the line kept blank, so that line
 * numbers stay). false with err on another engine. */
static bool shebang(const char *body, size_t len, bool *ro, size_t *skip, char *err, size_t errlen)
{
	*ro = false;
	*skip = 0;
	if (len < 2 || body[0] != '#' || body[1] != '!')
		return true;
	const char *nl = memchr(body, '\n', len);
	size_t line = nl != NULL ? (size_t)(nl - body) : len;
	if (line < 5 || memcmp(body + 2, "lua", 3) != 0 || (line > 5 && body[5] != ' ')) {
		snprintf(err, errlen, "ERR Unexpected engine in script shebang: only lua is known");
		return false;
	}
	const char *flags = memmem(body, line, "flags=", 6);
	if (flags != NULL) {
		const char *f = flags + 6, *end = body + line;
		*ro = memmem(f, (size_t)(end - f), "no-writes", 9) != NULL;
	}
	*skip = line; /* the newline stays */
	return true;
}

bool sl_load(struct sl_vm *vm, const char *body, size_t len, char *sha, char *err, size_t errlen)
{
	lua_State *L = vm->L;
	sl_sha1_hex(body, len, sha);
	if (sl_exists(vm, sha, SL_SHA_HEX))
		return true;
	if (len > SL_BODY_MAX) {
		snprintf(err, errlen, "ERR a script is at most %d bytes", SL_BODY_MAX);
		return false;
	}
	if (vm->nscripts >= SL_SCRIPTS_MAX) {
		snprintf(err, errlen,
			 "ERR the script cache holds its most scripts (%d): SCRIPT FLUSH it",
			 SL_SCRIPTS_MAX);
		return false;
	}
	bool ro;
	size_t skip;
	if (!shebang(body, len, &ro, &skip, err, errlen))
		return false;
	if (len > skip && body[skip] == LUA_SIGNATURE[0]) {
		snprintf(err, errlen,
			 "ERR Error compiling script: loading bytecode is not allowed");
		return false;
	}
	vm->cap = vm->bytes + vm->lim.max_bytes; /* compiling is bounded too */
	vm->over_mem = false;
	int rc = luaL_loadbuffer(L, body + skip, len - skip, "@user_script");
	vm->cap = 0;
	if (rc != 0) {
		const char *m = lua_tostring(L, -1);
		snprintf(err, errlen, "ERR Error compiling script (new function): %s",
			 m != NULL ? m : "out of memory");
		lua_pop(L, 1);
		return false;
	}
	lua_createtable(L, 0, 3);
	lua_insert(L, -2);
	lua_setfield(L, -2, "f");
	lua_pushlstring(L, body, len);
	lua_setfield(L, -2, "body");
	lua_pushboolean(L, ro);
	lua_setfield(L, -2, "ro");
	lua_getfield(L, LUA_REGISTRYINDEX, "sl_scripts");
	lua_pushstring(L, sha);
	lua_pushvalue(L, -3);
	lua_rawset(L, -3);
	lua_pop(L, 2);
	vm->nscripts++;
	return true;
}

/* --- running --- */

/* A fresh global table for one run: KEYS, ARGV, and the shared globals
 * read through it; pushed. */
static void push_env(lua_State *L, const struct sl_run *r)
{
	lua_createtable(L, 0, 2);
	lua_createtable(L, r->nkeys, 0);
	for (int i = 0; i < r->nkeys; i++) {
		lua_pushlstring(L, r->keys[i], r->key_lens[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "KEYS");
	lua_createtable(L, r->nargs, 0);
	for (int i = 0; i < r->nargs; i++) {
		lua_pushlstring(L, r->args[i], r->arg_lens[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "ARGV");
	lua_createtable(L, 0, 3); /* its metatable */
	lua_getfield(L, LUA_REGISTRYINDEX, "sl_globals");
	lua_pushcclosure(L, env_index, 1);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, env_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, -2);
}

/* The error a failed run answers, from the value Lua raised. */
static void run_error(lua_State *L, struct sl_vm *vm, const char *sha, struct sv *out)
{
	if (vm->killed != NULL) {
		sv_errorf(out, "BUSY %s (script %s): it was stopped and wrote nothing", vm->killed,
			  sha);
		return;
	}
	if (lua_istable(L, -1)) { /* a redis.call error, or error({err=...}) */
		size_t len;
		const char *e = field_str(L, lua_gettop(L), "err", &len);
		if (e != NULL) {
			sv_set_str(out, SV_ERROR, e, len);
			return;
		}
	}
	const char *m = lua_tostring(L, -1);
	if (m == NULL)
		m = vm->over_mem ? "not enough memory" : "an error that is no string";
	sv_errorf(out, "ERR %s script: %s", m, sha);
}

void sl_exec(struct sl_vm *vm, const struct sl_run *r, struct sv *out)
{
	lua_State *L = vm->L;
	*out = (struct sv){.type = SV_NIL};
	push_entry(L, r->sha, strlen(r->sha));
	if (!lua_istable(L, -1)) {
		lua_pop(L, 1);
		sv_errorf(out, "NOSCRIPT No matching script. Please use EVAL.");
		return;
	}
	lua_getfield(L, -1, "f");
	lua_remove(L, -2);
	push_env(L, r);
	lua_setfenv(L, -2);
	vm->run = r;
	vm->instructions = 0;
	vm->killed = NULL;
	vm->over_mem = false;
	vm->deadline_ns = mono_ns() + vm->lim.max_ms * 1000000;
	vm->cap = vm->bytes + vm->lim.max_bytes;
	lua_sethook(L, kill_hook, LUA_MASKCOUNT, HOOK_EVERY);
	int rc = lua_pcall(L, 0, 1, 0);
	lua_sethook(L, NULL, 0, 0);
	vm->stats.runs++;
	if (rc != 0 || vm->killed != NULL || vm->over_mem) {
		if (vm->over_mem && vm->killed == NULL)
			vm->killed = "the script ran past its memory limit";
		run_error(L, vm, r->sha, out);
		vm->stats.errors++;
		vm->stats.killed += vm->killed != NULL;
	} else {
		reply_to_sv(L, vm->lim.max_bytes, out);
	}
	lua_pop(L, 1);
	sv_clear(&vm->reply);
	vm->cap = 0;
	vm->run = NULL;
	vm->killed = NULL;
	lua_gc(L, LUA_GCSTEP, 0); /* the run's garbage, a step at a time */
}

void sl_stats(const struct sl_vm *vm, struct sl_stats *out)
{
	*out = vm->stats;
	out->bytes = vm->bytes;
}
