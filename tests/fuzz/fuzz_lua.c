/*
 * fuzz_lua: libFuzzer target for the sandboxed Lua of EVAL
 * (gateway/script/script_lua.c) — hostile scripts.
 *
 * The input is a script. It is loaded (a syntax error or bytecode is an
 * error reply) and run with small limits (instructions, time, memory)
 * against a host whose redis.call answers by the command's first letter
 * (nil, an integer, a bulk, a status, an error, a nested array), so the
 * conversions both ways are fuzzed too. Contracts checked: every run
 * answers (a reply or an error, never a crash or a leak under ASan), and
 * the VM still runs a plain script afterwards, with its libraries intact
 * (a script cannot change what the next one sees).
 * Build and run: `make fuzz` (FUZZ_SECONDS), seeds in
 * tests/fuzz/corpus/fuzz_lua.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/script/script_lua.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
	if (!ok)
		abort(); /* a broken contract is the finding */
}

static void host(void *h, int argc, const char *const *argv, const size_t *lens, struct sv *r)
{
	switch (lens[0] > 0 ? argv[0][0] : 0) {
	case 'i':
		*r = (struct sv){.type = SV_INT, .i = (int64_t)lens[argc - 1]};
		break;
	case 'b':
		sv_set_str(r, SV_BULK, argv[argc - 1], lens[argc - 1]);
		break;
	case 's':
		sv_set_str(r, SV_STATUS, "OK", 2);
		break;
	case 'e':
		sv_errorf(r, "ERR no %.*s", (int)(lens[0] > 16 ? 16 : lens[0]), argv[0]);
		break;
	case 'a': {
		struct sv *a = calloc(2, sizeof(*a));
		if (a == NULL)
			break;
		a[0] = (struct sv){.type = SV_INT, .i = argc};
		sv_set_str(&a[1], SV_BULK, "x", 1);
		*r = (struct sv){.type = SV_ARRAY, .a = a, .n = 2};
		break;
	}
	default:
		break; /* nil */
	}
}

static struct sl_vm *vm;

static void run(const char *body, size_t len, struct sv *out)
{
	char sha[SL_SHA_HEX + 1], err[256];
	*out = (struct sv){.type = SV_NIL};
	if (!sl_load(vm, body, len, sha, err, sizeof(err))) {
		sv_errorf(out, "%s", err);
		return;
	}
	static const char *const keys[] = {"k1", "k2"};
	static const size_t lens[] = {2, 2};
	struct sl_run r = {.sha = sha,
			   .nkeys = 2,
			   .nargs = 2,
			   .keys = keys,
			   .args = keys,
			   .key_lens = lens,
			   .arg_lens = lens,
			   .call = host};
	sl_exec(vm, &r, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (vm == NULL) {
		static const struct sl_limits lim = {
			.max_instructions = 50000, .max_ms = 50, .max_bytes = 2 << 20};
		vm = sl_new(&lim);
		check(vm != NULL);
	}
	struct sv out;
	run((const char *)data, size, &out);
	check(out.type != SV_ERROR || out.s == NULL || out.len == strlen(out.s));
	sv_clear(&out);
	static const char probe[] = "return string.rep('a', 2) .. tostring(#KEYS) .. "
				    "type(redis.call) .. math.floor(1.5)";
	run(probe, sizeof(probe) - 1, &out);
	check(out.type == SV_BULK && strcmp(out.s, "aa2function1") == 0);
	sv_clear(&out);
	if (sl_count(vm) > 1000)
		sl_flush(vm); /* the cache of every input would grow without end */
	return 0;
}
