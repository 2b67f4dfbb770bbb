/*
 * it_handshakes: the connection handshakes of go-redis v9, Jedis 5,
 * Lettuce 6 and StackExchange.Redis 2.x, replayed byte for byte over a raw
 * socket against the real binary ($LG_BIN, embedded store) — none of those
 * clients runs on the test machines (no Go, JVM or .NET). Each case writes
 * its commands as the client does (one write where the client pipelines,
 * one command per round trip where it waits), checks every reply against
 * what leasegate must answer, which is a reply that client accepts, then
 * takes and releases a lock on the same connection.
 *
 * The sequences were read from the clients' sources; each case names the
 * repository and file. Only command names and arguments carried over.
 *
 * A wanted reply is the rendered text of tests/support/rawresp.h, where
 * '*' stands for any run of characters (ids, versions).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/gw.h"
#include "tests/support/rawresp.h"

#define PASSWORD "s3cret-pw"

/* One command and the reply it must get ("*" matches any run). */
struct exchange {
	const char *cmd;
	const char *want;
};

/* Commands written together (one write: a pipeline), then their replies. */
struct step {
	struct exchange x[16];
};

struct handshake {
	const char *requirepass; /* the gateway's --requirepass, or NULL */
	bool no_lock;		 /* a subscription connection: PING, not LOCK.* */
	struct step steps[4];
};

/* Replies the handshakes share. */
#define HELLO3                                                                                     \
	"{\"server\": \"redis\", \"version\": \"7.0.0\", \"proto\": :3, \"id\": :*, "              \
	"\"mode\": \"standalone\", \"role\": \"master\", \"modules\": []}"
#define OK "+OK"

/* Glob with '*' only; every other character is literal. */
static bool glob_match(const char *pat, const char *s)
{
	if (*pat == '\0')
		return *s == '\0';
	if (*pat == '*') {
		for (const char *t = s;; t++) {
			if (glob_match(pat + 1, t))
				return true;
			if (*t == '\0')
				return false;
		}
	}
	return *s == *pat && glob_match(pat + 1, s + 1);
}

static void run_handshake(void **state)
{
	const struct handshake *h = *state;
	struct gw g;
	if (h->requirepass)
		gw_start(&g, NULL, "--requirepass", h->requirepass, NULL);
	else
		gw_start(&g, NULL, NULL);
	struct raw *r = raw_open(g.port);
	char buf[16384];

	for (size_t s = 0; s < sizeof(h->steps) / sizeof(h->steps[0]); s++) {
		const struct exchange *x = h->steps[s].x;
		size_t n = 0, len = 0;
		while (n < sizeof(h->steps[s].x) / sizeof(x[0]) && x[n].cmd)
			n++;
		if (n == 0)
			break;
		for (size_t i = 0; i < n; i++)
			len += raw_encode(buf + len, sizeof(buf) - len, x[i].cmd);
		raw_write(r, buf, len);
		for (size_t i = 0; i < n; i++) {
			const char *got = raw_reply(r, 5000);
			if (!glob_match(x[i].want, got))
				fail_msg("step %zu, %s\n  got:  %s\n  want: %s", s + 1, x[i].cmd,
					 got, x[i].want);
			char shown[64];
			snprintf(shown, sizeof(shown), "%s", got);
			for (char *c = shown; *c; c++)
				if (*c == '\r' || *c == '\n')
					*c = ' ';
			printf("  %-58.58s -> %s\n", x[i].cmd, shown);
		}
	}
	if (h->no_lock) { /* subscribed (RESP2): Redis's pong message */
		raw_expect(r, "PING", "[\"pong\", \"\"]");
	} else {
		long long token = raw_int(r, "LOCK.ACQUIRE handshake-lock 5000");
		assert_true(token > 0);
		raw_expect(r, "LOCK.RELEASE handshake-lock", ":1");
	}
	raw_close(r);
	assert_int_equal(gw_signal(&g, SIGTERM), 0);
}

/* ---- go-redis v9 ---- */

/*
 * go-redis v9.16 (redis/go-redis, redis.go baseClient.initConn; commands.go
 * Hello, ClientSetInfo; maintnotifications/config.go), default Options
 * (Protocol 3, DB 0, no name, MaintNotifications "auto"):
 *   hello 3 [auth <user|default> <pass>] [setname <name>]   alone, waits
 *   (the SELECT/READONLY/CLIENT SETNAME pipeline is empty with defaults)
 *   client maint_notifications on moving-endpoint-type internal-ip  (v9.15+,
 *     RESP3 only; an error reply disables the feature, only a network
 *     error is fatal)
 *   client setinfo LIB-NAME go-redis(<suffix>,<go version>)  } one pipeline;
 *   client setinfo LIB-VER <version>                         } errors ignored
 * HELLO must answer a map; an error reply makes it fall back to RESP2 (and
 * AUTH), a non-RESP answer is fatal.
 */
static const struct handshake go_redis = {
	.steps = {
		{{{"hello 3", HELLO3}}},
		{{{"client maint_notifications on moving-endpoint-type internal-ip",
		   "-ERR unknown subcommand 'maint_notifications'. Try CLIENT HELP."}}},
		{{{"client setinfo LIB-NAME go-redis(,go1.24.4)", OK},
		  {"client setinfo LIB-VER 9.16.0", OK}}},
	}};

/* The same with Options.Password (and ClientName): HELLO carries both. */
static const struct handshake go_redis_auth = {
	.requirepass = PASSWORD,
	.steps = {
		{{{"hello 3 auth default " PASSWORD " setname orders-api", HELLO3}}},
		{{{"client setname orders-api", OK}}},
		{{{"client maint_notifications on moving-endpoint-type internal-ip",
		   "-ERR unknown subcommand 'maint_notifications'. Try CLIENT HELP."}}},
		{{{"client setinfo LIB-NAME go-redis(,go1.24.4)", OK},
		  {"client setinfo LIB-VER 9.16.0", OK}}},
	}};

/* ---- Jedis 5 ---- */

/*
 * Jedis 5.x (redis/jedis, src/main/java/redis/clients/jedis/Connection.java
 * initializeFromClientConfig / helloOrAuth), DefaultJedisClientConfig: no
 * protocol set (RESP2, so no HELLO), no password. CLIENT SETINFO goes out
 * as one fire-and-forget batch, read with getMany: 5.0 threw on an error
 * that contains neither UNKNOWN nor NOAUTH, 5.1+ ignores them all.
 */
static const struct handshake jedis = {
	.steps = {
		{{{"CLIENT SETINFO LIB-NAME jedis", OK}, {"CLIENT SETINFO LIB-VER 5.2.0", OK}}},
	}};

/* .protocol(RedisProtocol.RESP3): HELLO 3 first, its map read by getOne(). */
static const struct handshake jedis_resp3 = {
	.steps = {
		{{{"HELLO 3", HELLO3}}},
		{{{"CLIENT SETINFO LIB-NAME jedis", OK}, {"CLIENT SETINFO LIB-VER 5.2.0", OK}}},
	}};

/* .password(p), RESP2: AUTH p (must answer OK: getStatusCodeReply throws on
 * an error), then the batch. */
static const struct handshake jedis_auth = {
	.requirepass = PASSWORD,
	.steps = {
		{{{"AUTH " PASSWORD, OK}}},
		{{{"CLIENT SETINFO LIB-NAME jedis", OK}, {"CLIENT SETINFO LIB-VER 5.2.0", OK}}},
	}};

/* ---- Lettuce 6 ---- */

/*
 * Lettuce 6.3+ (redis/lettuce, src/main/java/io/lettuce/core/RedisHandshake.java;
 * LettuceVersion.java), ClientOptions without a protocol version:
 * tryHandshakeResp3 sends HELLO 3 [AUTH user pass] [SETNAME name] and falls
 * back to RESP2 (AUTH or PING) only on "ERR unknown command" or NOPROTO;
 * any other error fails the connection. The map's id, version, mode and
 * role are read. Then one write of CLIENT SETINFO lib-name Lettuce /
 * lib-ver <version>: fatal on error in 6.3, fire-and-forget from 6.4.
 */
static const struct handshake lettuce = {.steps = {
						 {{{"HELLO 3", HELLO3}}},
						 {{{"CLIENT SETINFO lib-name Lettuce", OK},
						   {"CLIENT SETINFO lib-ver 6.5.5.RELEASE", OK}}},
					 }};

/* RedisURI with a password (no user name): HELLO carries AUTH default. */
static const struct handshake lettuce_auth = {
	.requirepass = PASSWORD,
	.steps = {
		{{{"HELLO 3 AUTH default " PASSWORD, HELLO3}}},
		{{{"CLIENT SETINFO lib-name Lettuce", OK},
		  {"CLIENT SETINFO lib-ver 6.5.5.RELEASE", OK}}},
	}};

/* ProtocolVersion.RESP2: PING first (pingBeforeActivateConnection, on by
 * default), then the SETINFO batch. */
static const struct handshake lettuce_resp2 = {
	.steps = {
		{{{"PING", "+PONG"}}},
		{{{"CLIENT SETINFO lib-name Lettuce", OK},
		  {"CLIENT SETINFO lib-ver 6.5.5.RELEASE", OK}}},
	}};

/* ---- StackExchange.Redis 2.x ---- */

/*
 * StackExchange.Redis 2.7/2.8 (StackExchange/StackExchange.Redis,
 * src/StackExchange.Redis/ServerEndPoint.cs HandshakeAsync,
 * AutoConfigureAsync, GetTracerMessage; Configuration/DefaultOptionsProvider.cs
 * for the defaults: client name "<machine>(SE.Redis-v<ver>)", assumed
 * version 3.0.0 so "slave-read-only", KeepAlive 60 s so no CONFIG GET
 * timeout, tie-breaker key __Booksleeve_TieBreak, channel
 * __Booksleeve_MasterChanged). Everything is fire-and-forget in one flush;
 * the connection is up when the tracer, ECHO <multiplexer guid>, comes back
 * as that same bulk string. The other replies only configure it: an error
 * (unknown SENTINEL, CLUSTER) is dropped, but a reply of the wrong type is
 * a protocol failure. GET of the tie-breaker key reads a lock's value
 * (leasegate's GET, for lock libraries): nil, no tie-breaker. CLIENT ID
 * is in the current source, not in the 2.5/2.6 one; SETINFO came in 2.7
 * (PR #2414). Older 2.x send a subset.
 * The interactive connection:
 */
#define SE_NAME "CLIENT SETNAME build-agent-7(SE.Redis-v2.8.16.12844)"
#define SE_GUID "4f7f0a56-3f0c-4b0e-9d2e-5c1b8a9e2d11"
static const struct handshake stackexchange = {
	.steps = {
		{{{SE_NAME, OK},
		  {"CLIENT SETINFO lib-name SE.Redis", OK},
		  {"CLIENT SETINFO lib-ver 2.8.16.12844", OK},
		  {"CLIENT ID", ":*"},
		  {"CONFIG GET slave-read-only", "[]"},
		  {"CONFIG GET databases", "[\"databases\", \"1\"]"},
		  {"SENTINEL MASTERS",
		   "-ERR unknown command 'SENTINEL', with args beginning with: 'MASTERS' "},
		  {"INFO replication", "\"# Replication\r\nrole:master\r\n*"},
		  {"INFO server",
		   "\"# Server\r\nredis_version:7.0.0\r\n*redis_mode:standalone\r\n*"},
		  {"CLUSTER NODES",
		   "-ERR unknown command 'CLUSTER', with args beginning with: 'NODES' "},
		  {"GET __Booksleeve_TieBreak", "nil"},
		  {"ECHO " SE_GUID, "\"" SE_GUID "\""}}},
	}};

/* The subscription connection (RESP2): no auto-configuration; the tracer,
 * then SUBSCRIBE to the master-changed channel (Pub/Sub of this replica,
 * issue 28; an error would be dropped: fire-and-forget); its heartbeat
 * PING is then answered as Redis answers a subscribed connection. */
static const struct handshake stackexchange_sub = {
	.no_lock = true,
	.steps = {
		{{{SE_NAME, OK},
		  {"CLIENT SETINFO lib-name SE.Redis", OK},
		  {"CLIENT SETINFO lib-ver 2.8.16.12844", OK},
		  {"CLIENT ID", ":*"},
		  {"ECHO " SE_GUID, "\"" SE_GUID "\""},
		  {"SUBSCRIBE __Booksleeve_MasterChanged",
		   "[\"subscribe\", \"__Booksleeve_MasterChanged\", :1]"}}},
	}};

/* password=...: AUTH heads the same batch (DemandOK; a failure shows as
 * the tracer's NOAUTH). */
static const struct handshake stackexchange_auth = {
	.requirepass = PASSWORD,
	.steps = {
		{{{"AUTH " PASSWORD, OK},
		  {SE_NAME, OK},
		  {"CLIENT SETINFO lib-name SE.Redis", OK},
		  {"CLIENT SETINFO lib-ver 2.8.16.12844", OK},
		  {"CLIENT ID", ":*"},
		  {"ECHO " SE_GUID, "\"" SE_GUID "\""}}},
	}};

/* protocol=resp3 (2.7+): HELLO 3 SETNAME <name> heads the batch (its map
 * sets the protocol, version and server type), then the same commands,
 * answered in RESP3 (CONFIG GET a map, INFO a verbatim string). */
static const struct handshake stackexchange_resp3 = {
	.steps = {
		{{{"HELLO 3 SETNAME build-agent-7(SE.Redis-v2.8.16.12844)", HELLO3},
		  {SE_NAME, OK},
		  {"CLIENT SETINFO lib-name SE.Redis", OK},
		  {"CLIENT SETINFO lib-ver 2.8.16.12844", OK},
		  {"CLIENT ID", ":*"},
		  {"CONFIG GET slave-read-only", "{}"},
		  {"CONFIG GET databases", "{\"databases\": \"1\"}"},
		  {"SENTINEL MASTERS",
		   "-ERR unknown command 'SENTINEL', with args beginning with: 'MASTERS' "},
		  {"INFO replication", "\"txt:# Replication\r\nrole:master\r\n*"},
		  {"INFO server", "\"txt:# Server\r\nredis_version:7.0.0\r\n*"},
		  {"CLUSTER NODES",
		   "-ERR unknown command 'CLUSTER', with args beginning with: 'NODES' "},
		  {"GET __Booksleeve_TieBreak", "nil"},
		  {"ECHO " SE_GUID, "\"" SE_GUID "\""}}},
	}};

#define CASE(name, h)                                                                              \
	{                                                                                          \
#name, run_handshake, NULL, gw_teardown, (void *)&(h)                              \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CASE(go_redis_v9, go_redis),
		CASE(go_redis_v9_password_name, go_redis_auth),
		CASE(jedis_5, jedis),
		CASE(jedis_5_resp3, jedis_resp3),
		CASE(jedis_5_password, jedis_auth),
		CASE(lettuce_6, lettuce),
		CASE(lettuce_6_password, lettuce_auth),
		CASE(lettuce_6_resp2, lettuce_resp2),
		CASE(stackexchange_redis_2_interactive, stackexchange),
		CASE(stackexchange_redis_2_subscription, stackexchange_sub),
		CASE(stackexchange_redis_2_password, stackexchange_auth),
		CASE(stackexchange_redis_2_resp3, stackexchange_resp3),
	};
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("client handshakes", tests, NULL, NULL) != 0;
}
