/*
 * ddbpeek: see ddbpeek.h.
 */
#include "tests/support/ddbpeek.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* The reader: argv table; one request a line on stdin, one JSON answer a
 * line on stdout ("item PK", "sessions ID", "watch PK", "watched",
 * "delete PK", "kill PK BY"). */
static const char reader_py[] =
	"import os, sys, json, time, threading, boto3\n"
	"t = sys.argv[1]\n"
	"def client():\n"
	"    return boto3.client('dynamodb', endpoint_url=os.environ['LG_MOTO'],\n"
	"        region_name='us-east-1', aws_access_key_id=os.environ['LG_AK'],\n"
	"        aws_secret_access_key=os.environ['LG_SK'])\n"
	"d = client()\n"
	"ks = []\n"
	"def schema():\n"
	"    if not ks:\n"
	"        ks.extend(d.describe_table(TableName=t)['Table']['KeySchema'])\n"
	"    return [e['AttributeName'] for e in ks]\n"
	"def key(pk):\n"
	"    schema()\n"
	"    return {e['AttributeName']: {'S': pk if e['KeyType'] == 'HASH' else 'LOCK'}\n"
	"            for e in ks}\n"
	"def item(c, pk):\n"
	"    i = c.get_item(TableName=t, Key=key(pk), ConsistentRead=True).get('Item', {})\n"
	"    return {a: v for a, v in i.items() if a not in schema()}\n"
	"def sessions(rid):\n"
	"    schema()\n"
	"    out, kw = [], {}\n"
	"    pkn = [e['AttributeName'] for e in ks if e['KeyType'] == 'HASH'][0]\n"
	"    while True:\n"
	"        r = d.scan(TableName=t, ConsistentRead=True, **kw)\n"
	"        out += [i[pkn]['S'] for i in r['Items']\n"
	"                if i[pkn]['S'].startswith('SESSION#' + rid + '#')]\n"
	"        if 'LastEvaluatedKey' not in r:\n"
	"            return sorted(out)\n"
	"        kw = {'ExclusiveStartKey': r['LastEvaluatedKey']}\n"
	"w = {'stop': None}\n"
	"def ms():\n"
	"    return int(time.monotonic() * 1000)\n"
	"def watch(pk, seen, stop):\n"
	"    c, last = client(), -1\n"
	"    while not stop.is_set():\n"
	"        sent = ms()\n"
	"        rvn = item(c, pk).get('rvn', {}).get('S', '')\n"
	"        now = ms()\n"
	"        with lock:\n"
	"            if rvn != seen['rvn']:\n"
	"                seen['changes'] += seen['first_seen_ms'] >= 0\n"
	"                seen.update(rvn=rvn, first_seen_ms=now, landed_after_ms=last)\n"
	"        last = sent\n"
	"        stop.wait(0.05)\n"
	"lock = threading.Lock()\n"
	"for line in sys.stdin:\n"
	"    op, _, arg = line.strip().partition(' ')\n"
	"    if op == 'item':\n"
	"        a = item(d, arg)\n"
	"    elif op == 'delete':\n"
	"        d.delete_item(TableName=t, Key=key(arg))\n"
	"        a = 'ok'\n"
	"    elif op == 'kill':\n"
	"        pk, _, by = arg.partition(' ')\n"
	"        r = item(d, pk).get('rvn', {}).get('S', '')\n"
	"        try:\n"
	"            d.update_item(TableName=t, Key=key(pk), UpdateExpression='SET dead = :by',\n"
	"                ConditionExpression='rvn = :r AND attribute_not_exists(dead)',\n"
	"                ExpressionAttributeValues={':by': {'S': by}, ':r': {'S': r}})\n"
	"            a = r\n"
	"        except d.exceptions.ConditionalCheckFailedException:\n"
	"            a = None\n"
	"    elif op == 'sessions':\n"
	"        a = sessions(arg)\n"
	"    elif op == 'watch':\n"
	"        schema()  # read here, not by two threads at once\n"
	"        if w['stop']:\n"
	"            w['stop'].set()\n"
	"        w['seen'] = {'rvn': None, 'first_seen_ms': -1, 'landed_after_ms': -1,\n"
	"                     'changes': 0}\n"
	"        w['stop'] = threading.Event()\n"
	"        threading.Thread(target=watch, args=(arg, w['seen'], w['stop']),\n"
	"                         daemon=True).start()\n"
	"        while True:\n"
	"            with lock:\n"
	"                if w['seen']['first_seen_ms'] >= 0:\n"
	"                    break\n"
	"            time.sleep(0.01)\n"
	"        a = 'ok'\n"
	"    elif op == 'watched':\n"
	"        with lock:\n"
	"            a = dict(w['seen']) if w['stop'] else None\n"
	"    else:\n"
	"        a = 'unknown ' + op\n"
	"    print(json.dumps(a), flush=True)\n";

void peek_open(struct ddbpeek *p, const char *table)
{
	char path[512];
	int in[2], out[2];
	snprintf(path, sizeof(path), "%s/ddbpeek.py",
		 getenv("LG_WORK") ? getenv("LG_WORK") : "/tmp");
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(reader_py, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execlp("python3", "python3", path, table, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->to = fdopen(in[1], "w");
	p->from = fdopen(out[0], "r");
	assert_non_null(p->to);
	assert_non_null(p->from);
}

void peek_close(struct ddbpeek *p)
{
	if (p->pid <= 0)
		return;
	fclose(p->to);
	fclose(p->from);
	kill(p->pid, SIGTERM);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

/* Sends one request and parses its answer (a line of JSON). */
static cJSON *ask(struct ddbpeek *p, const char *op, const char *arg)
{
	static char line[1 << 16];
	assert_true(p->pid > 0);
	fprintf(p->to, "%s %s\n", op, arg);
	fflush(p->to);
	if (fgets(line, sizeof(line), p->from) == NULL)
		fail_msg("ddbpeek: no answer to %s %s (see the test's stderr)", op, arg);
	cJSON *j = cJSON_Parse(line);
	if (j == NULL)
		fail_msg("ddbpeek: %s %s answered %s", op, arg, line);
	return j;
}

cJSON *peek_item(struct ddbpeek *p, const char *pk)
{
	cJSON *j = ask(p, "item", pk);
	assert_true(cJSON_IsObject(j));
	return j;
}

/* item[attr][type] when it is a string, else NULL. */
static const char *typed(const cJSON *item, const char *attr, const char *type)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, attr);
	const cJSON *s = v != NULL ? cJSON_GetObjectItemCaseSensitive(v, type) : NULL;
	return cJSON_IsString(s) ? s->valuestring : NULL;
}

const char *peek_str(const cJSON *item, const char *attr)
{
	return typed(item, attr, "S");
}

long long peek_num(const cJSON *item, const char *attr)
{
	const char *n = typed(item, attr, "N");
	return n != NULL ? atoll(n) : -1;
}

void peek_delete(struct ddbpeek *p, const char *pk)
{
	cJSON *j = ask(p, "delete", pk);
	assert_true(cJSON_IsString(j));
	assert_string_equal(j->valuestring, "ok");
	cJSON_Delete(j);
}

bool peek_kill(struct ddbpeek *p, const char *pk, const char *by)
{
	char arg[512];
	snprintf(arg, sizeof(arg), "%s %s", pk, by);
	cJSON *j = ask(p, "kill", arg);
	bool ok = cJSON_IsString(j);
	cJSON_Delete(j);
	return ok;
}

cJSON *peek_sessions(struct ddbpeek *p, const char *replica_id)
{
	cJSON *j = ask(p, "sessions", replica_id);
	assert_true(cJSON_IsArray(j));
	return j;
}

void peek_watch(struct ddbpeek *p, const char *pk)
{
	cJSON *j = ask(p, "watch", pk);
	assert_true(cJSON_IsString(j));
	assert_string_equal(j->valuestring, "ok");
	cJSON_Delete(j);
}

void peek_watched(struct ddbpeek *p, struct peek_seen *out)
{
	cJSON *j = ask(p, "watched", "-");
	if (!cJSON_IsObject(j))
		fail_msg("ddbpeek: nothing watched");
	const cJSON *rvn = cJSON_GetObjectItemCaseSensitive(j, "rvn");
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(j, "first_seen_ms");
	const cJSON *after = cJSON_GetObjectItemCaseSensitive(j, "landed_after_ms");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, "changes");
	assert_true(cJSON_IsString(rvn) && cJSON_IsNumber(at) && cJSON_IsNumber(after) &&
		    cJSON_IsNumber(n));
	snprintf(out->rvn, sizeof(out->rvn), "%s", rvn->valuestring);
	out->first_seen_ms = (long long)at->valuedouble;
	out->landed_after_ms = (long long)after->valuedouble;
	out->changes = n->valueint;
	cJSON_Delete(j);
}
