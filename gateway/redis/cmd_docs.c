/*
 * cmd_docs: the documentation table and COMMAND INFO / DOCS's shapes
 * (cmd_docs.h).
 */
#include "gateway/redis/cmd_docs.h"

#include <stdio.h>
#include <string.h>

#include "gateway/conn/acl.h"

static const struct cmd_doc docs[] = {
	/* the connection commands clients send */
	{"ping", "Returns PONG, or the message given.", "connection", "O(1)", "fast",
	 "?message:string"},
	{"echo", "Returns the message given.", "connection", "O(1)", "fast", "message:string"},
	{"hello", "Handshakes: the protocol version (2 or 3), authentication, the client name.",
	 "connection", "O(1)", "noauth fast", "?protover:integer ?AUTH:string ?SETNAME:string"},
	{"auth", "Authenticates the connection (--requirepass).", "connection", "O(1)",
	 "noauth fast", "?username:string password:string"},
	{"client", "A container for client connection commands.", "connection", "O(1)", "", ""},
	{"client|id", "Returns the connection's id (the session id of the logs).", "connection",
	 "O(1)", "fast", ""},
	{"client|setname", "Names the connection (the client_name of the logs).", "connection",
	 "O(1)", "fast", "connection-name:string"},
	{"client|getname", "Returns the connection's name.", "connection", "O(1)", "fast", ""},
	{"client|setinfo", "Sets the client library's name or version.", "connection", "O(1)",
	 "fast", "attr:string value:string"},
	{"client|list", "Lists the client connections.", "connection", "O(N) connections", "",
	 "?TYPE:string ?ID:integer"},
	{"client|info", "Returns this connection's line of CLIENT LIST.", "connection", "O(1)", "",
	 ""},
	{"client|help", "Lists the CLIENT subcommands.", "connection", "O(1)", "loading stale", ""},
	{"select", "Selects database 0, the only one.", "connection", "O(1)", "fast",
	 "index:integer"},
	{"role", "Returns master: every replica is a primary of its own.", "server", "O(1)",
	 "noscript loading stale fast", ""},
	{"info", "Returns the server's figures (server, clients, stats, leases, store...).",
	 "server", "O(1)", "loading stale", "*section:string"},
	{"command", "Returns the commands' details (COMMAND INFO of every command).", "server",
	 "O(N) commands", "loading stale", ""},
	{"command|count", "Returns the number of commands.", "server", "O(1)", "loading stale", ""},
	{"command|docs", "Returns the documentation of the commands named, or of all.", "server",
	 "O(N) commands", "loading stale", "*command-name:string"},
	{"command|info", "Returns the details of the commands named, or of all.", "server",
	 "O(N) commands", "loading stale", "*command-name:string"},
	{"command|list", "Returns the names of the commands.", "server", "O(N) commands",
	 "loading stale", "?FILTERBY:string"},
	{"config", "A container for configuration commands.", "server", "O(1)", "", ""},
	{"config|get", "Returns configuration parameters matching the patterns.", "server",
	 "O(N) parameters", "admin noscript loading stale", "*parameter:pattern"},
	{"config|resetstat", "Accepted; resets nothing.", "server", "O(1)",
	 "admin noscript loading stale", ""},
	{"config|help", "Lists the CONFIG subcommands.", "server", "O(1)", "loading stale", ""},
	{"quit", "Closes the connection, releasing its leases.", "connection", "O(1)",
	 "noauth fast", ""},
	{"reset", "Resets the connection: releases its leases, clears its name.", "connection",
	 "O(1)", "noauth fast", ""},
	/* users and ACLs (aclcmds.c) */
	{"acl", "A container for the ACL commands.", "server", "O(1)", "", ""},
	{"acl|whoami", "Returns the user this connection is authenticated as.", "server", "O(1)",
	 "noscript loading stale", ""},
	{"acl|list", "Lists the users and their rules (password digests, never passwords).",
	 "server", "O(N) users", "admin noscript loading stale", ""},
	{"acl|users", "Lists the user names.", "server", "O(N) users",
	 "admin noscript loading stale", ""},
	{"acl|cat", "Lists the ACL categories, or the commands of one.", "server", "O(1)",
	 "noscript loading stale", "?category:string"},
	{"acl|load", "Reloads the users from --aclfile (all or nothing).", "server", "O(N) users",
	 "admin noscript loading stale", ""},
	{"acl|help", "Lists the ACL subcommands.", "server", "O(1)", "loading stale", ""},
	/* leases and leader elections */
	{"lock.acquire",
	 "Takes a lease on a lock: its fencing token, or nil when held elsewhere (or after WAIT).",
	 "generic", "O(1)", "write",
	 "name:key lease-ms:integer ?WAIT:integer ?HOLDER:string ?DETACH ?TRACEPARENT:string"},
	{"lock.renew", "Renews a lease of the lock: 1 renewed, 0 no such lease.", "generic", "O(1)",
	 "write", "name:key ?token:integer"},
	{"lock.release", "Releases a lease of the lock: 1 released, 0 no such lease.", "generic",
	 "O(1)", "write", "name:key ?token:integer"},
	{"lock.state", "Returns the lock's item: held, holder, lease-ms, fencing-token, mine.",
	 "generic", "O(1)", "readonly", "name:key"},
	{"lock.transact",
	 "Writes DynamoDB items in one transaction with a check that the lease still holds.",
	 "generic", "O(N) items", "write", "name:key token:integer items-json:string"},
	{"lock.check", "Returns 1 while the lease (name, token) holds the lock now, else 0.",
	 "generic", "O(1)", "readonly", "name:key token:integer"},
	{"leader.campaign", "Campaigns for leadership: the term's fencing token once leading.",
	 "generic", "O(1)", "write",
	 "name:key lease-ms:integer ?WAIT:integer ?HOLDER:string ?TRACEPARENT:string"},
	{"leader.resign", "Ends this connection's term and hands the lock on.", "generic", "O(1)",
	 "write", "name:key"},
	{"leader.watch", "Returns the current leader, at once or when it changes.", "generic",
	 "O(1)", "readonly", "name:key ?AFTER:integer ?TIMEOUT:integer"},
	{"leader.transact", "LOCK.TRANSACT under this connection's current term of the lock.",
	 "generic", "O(N) items", "write", "name:key items-json:string"},
	/* the operators' lock commands (admincmds.c) */
	{"lock.list",
	 "Lists this replica's leases, terms and waits; with TABLE, a page of the table's lock "
	 "items, as SCAN.",
	 "generic", "O(N) locks", "readonly",
	 "?TABLE ?CURSOR:string ?MATCH:pattern ?COUNT:integer"},
	{"lock.force-release",
	 "Releases whatever holds the lock, on whatever replica; its holder answers -LOST forced.",
	 "generic", "O(1)", "write", "name:key"},
	/* the key commands of Redis lock libraries, acting on locks */
	{"set", "SET key value NX PX ms takes a lock for a lock library; other forms refused.",
	 "string", "O(1)", "write denyoom", "key:key value:string ?NX ?PX:integer ?EX:integer"},
	{"get", "Returns the lock library value of a lock held through SET.", "string", "O(1)",
	 "readonly fast", "key:key"},
	{"del", "Releases locks held through SET.", "keyspace", "O(N) keys", "write", "*key:key"},
	{"pexpire", "Sets a lock's lease in milliseconds.", "keyspace", "O(1)", "write fast",
	 "key:key milliseconds:integer"},
	{"expire", "Sets a lock's lease in seconds.", "keyspace", "O(1)", "write fast",
	 "key:key seconds:integer"},
	{"pttl", "Returns a lock's lease left in milliseconds.", "keyspace", "O(1)",
	 "readonly fast", "key:key"},
	{"ttl", "Returns a lock's lease left in seconds.", "keyspace", "O(1)", "readonly fast",
	 "key:key"},
	{"evalsha", "Runs a cached Lua script over the lock keyspace by its SHA1.", "scripting",
	 "O(1)", "noscript", "sha1:string numkeys:integer *key:key *arg:string"},
	{"eval", "Runs a Lua script over the lock keyspace, as one transaction.", "scripting",
	 "O(1)", "noscript", "script:string numkeys:integer *key:key *arg:string"},
	{"evalsha_ro", "Runs a cached Lua script that only reads, by its SHA1.", "scripting",
	 "O(1)", "noscript", "sha1:string numkeys:integer *key:key *arg:string"},
	{"eval_ro", "Runs a Lua script that only reads the lock keyspace.", "scripting", "O(1)",
	 "noscript", "script:string numkeys:integer *key:key *arg:string"},
	{"script", "A container for script commands.", "scripting", "O(1)", "", ""},
	{"script|load", "Compiles and caches a Lua script: its SHA1.", "scripting", "O(1)",
	 "noscript stale", "script:string"},
	{"script|exists", "Says which SHA1s name cached scripts.", "scripting", "O(N) scripts",
	 "noscript", "*sha1:string"},
	{"script|flush", "Forgets the cached scripts.", "scripting", "O(1)", "noscript",
	 "?ASYNC ?SYNC"},
	{"script|kill", "NOTBUSY: a script runs within its command.", "scripting", "O(1)",
	 "noscript", ""},
	{"script|help", "Lists the SCRIPT subcommands.", "scripting", "O(1)", "loading stale", ""},
};

const struct cmd_doc *cmd_doc_find(const char *parent, const char *sub)
{
	char name[160];
	snprintf(name, sizeof(name), "%s%s%s", parent, sub ? "|" : "", sub ? sub : "");
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		if (strcmp(docs[i].name, name) == 0)
			return &docs[i];
	return NULL;
}

/* The words of a space-separated list, one at a time: its count first. */
static size_t words(const char *s)
{
	size_t n = 0;
	for (const char *p = s; p && *p;) {
		p += strspn(p, " ");
		if (*p == '\0')
			break;
		n++;
		p += strcspn(p, " ");
	}
	return n;
}

/* Adds each word of s as a status reply, prefixed with pre. */
static void add_words(struct buf *out, const char *s, const char *pre)
{
	for (const char *p = s; p && *p;) {
		p += strspn(p, " ");
		size_t len = strcspn(p, " ");
		if (len == 0)
			break;
		char w[64];
		snprintf(w, sizeof(w), "%s%.*s", pre, (int)len, p);
		resp_add_simple(out, w, strlen(w));
		p += len;
	}
}

static size_t nsubs(const struct cmd_def *d)
{
	size_t n = 0;
	for (const struct cmd_def *s = d->subs; s && s->name; s++)
		n++;
	return n;
}

/* The ACL categories of d (its own, from the dispatch table). */
static size_t ncats(uint32_t acl)
{
	size_t n = 0;
	for (const struct acl_cat_def *c = acl_cats; c->name; c++)
		n += (acl & c->bit) != 0;
	return n;
}

/* One COMMAND INFO entry: name, arity, flags, first key, last key, step,
 * ACL categories, tips, key specs, subcommands. Keys and categories are
 * the dispatch table's own (what the ACL check uses): the lock name is
 * the key. */
static void info_entry(struct buf *out, enum resp_proto proto, const struct cmd_def *d,
		       const char *parent)
{
	const struct cmd_doc *doc =
		parent ? cmd_doc_find(parent, d->name) : cmd_doc_find(d->name, NULL);
	char name[160];
	snprintf(name, sizeof(name), "%s%s%s", parent ? parent : "", parent ? "|" : "", d->name);
	resp_add_array(out, 10);
	resp_add_cstr(out, name);
	resp_add_int(out, d->arity);
	const char *flags = doc ? doc->flags : "";
	bool movable = d->key_last == CMD_KEYS_NUMKEYS;
	resp_add_set(out, proto, words(flags) + (movable ? 1 : 0));
	add_words(out, flags, "");
	if (movable)
		resp_add_simple(out, "movablekeys", 11);
	int first = movable ? 0 : d->key;
	int last = movable || d->key == 0 ? 0 : d->key_last == CMD_KEYS_REST ? -1 : d->key;
	resp_add_int(out, first);
	resp_add_int(out, last);
	resp_add_int(out, first ? 1 : 0);
	resp_add_set(out, proto, ncats(d->acl));
	for (const struct acl_cat_def *c = acl_cats; c->name; c++)
		if (d->acl & c->bit) {
			char w[64];
			snprintf(w, sizeof(w), "@%s", c->name);
			resp_add_simple(out, w, strlen(w));
		}
	resp_add_array(out, 0); /* tips */
	resp_add_array(out, 0); /* key specs: first/last/step say it */
	resp_add_array(out, nsubs(d));
	for (const struct cmd_def *s = d->subs; s && s->name; s++)
		info_entry(out, proto, s, d->name);
}

void cmd_doc_info(struct buf *out, enum resp_proto proto, const struct cmd_def *d)
{
	info_entry(out, proto, d, NULL);
}

/* One argument of a spec word: "name:type", "?TOKEN:type", "*name:type",
 * "?TOKEN" (a flag). */
static void add_argument(struct buf *out, enum resp_proto proto, const char *w, size_t len)
{
	bool optional = w[0] == '?', multiple = w[0] == '*';
	if (optional || multiple) {
		w++;
		len--;
	}
	const char *colon = memchr(w, ':', len);
	size_t nlen = colon ? (size_t)(colon - w) : len;
	bool token = nlen > 0 && w[0] >= 'A' && w[0] <= 'Z';
	char name[64], type[32], tok[64];
	snprintf(tok, sizeof(tok), "%.*s", (int)nlen, w);
	for (size_t i = 0; i < nlen && i < sizeof(name) - 1; i++)
		name[i] = (char)(tok[i] >= 'A' && tok[i] <= 'Z' ? tok[i] + 32 : tok[i]);
	name[nlen < sizeof(name) ? nlen : sizeof(name) - 1] = '\0';
	snprintf(type, sizeof(type), "%.*s", colon ? (int)(len - nlen - 1) : 0,
		 colon ? colon + 1 : "");
	if (!colon)
		snprintf(type, sizeof(type), "pure-token");
	size_t pairs = 2 + (token ? 1 : 0) + (optional || multiple ? 1 : 0);
	resp_add_map(out, proto, pairs);
	resp_add_cstr(out, "name");
	resp_add_cstr(out, name);
	resp_add_cstr(out, "type");
	resp_add_cstr(out, type);
	if (token) {
		resp_add_cstr(out, "token");
		resp_add_cstr(out, tok);
	}
	if (optional || multiple) {
		resp_add_cstr(out, "flags");
		resp_add_set(out, proto, 1);
		resp_add_simple(out, optional ? "optional" : "multiple", optional ? 8 : 8);
	}
}

static void docs_map(struct buf *out, enum resp_proto proto, const struct cmd_def *d,
		     const char *parent)
{
	const struct cmd_doc *doc =
		parent ? cmd_doc_find(parent, d->name) : cmd_doc_find(d->name, NULL);
	size_t subs = nsubs(d);
	size_t nargs = doc ? words(doc->args) : 0;
	resp_add_map(out, proto, 4 + (nargs ? 1 : 0) + (subs ? 1 : 0));
	resp_add_cstr(out, "summary");
	resp_add_cstr(out, doc ? doc->summary : "");
	resp_add_cstr(out, "since");
	resp_add_cstr(out, "0.1.0");
	resp_add_cstr(out, "group");
	resp_add_cstr(out, doc ? doc->group : "server");
	resp_add_cstr(out, "complexity");
	resp_add_cstr(out, doc ? doc->complexity : "O(1)");
	if (nargs) {
		resp_add_cstr(out, "arguments");
		resp_add_array(out, nargs);
		for (const char *p = doc->args; *p;) {
			p += strspn(p, " ");
			size_t len = strcspn(p, " ");
			if (len == 0)
				break;
			add_argument(out, proto, p, len);
			p += len;
		}
	}
	if (subs) {
		resp_add_cstr(out, "subcommands");
		resp_add_map(out, proto, subs);
		for (const struct cmd_def *s = d->subs; s && s->name; s++) {
			char name[160];
			snprintf(name, sizeof(name), "%s|%s", d->name, s->name);
			resp_add_cstr(out, name);
			docs_map(out, proto, s, d->name);
		}
	}
}

void cmd_doc_docs(struct buf *out, enum resp_proto proto, const struct cmd_def *d)
{
	resp_add_cstr(out, d->name);
	docs_map(out, proto, d, NULL);
}
