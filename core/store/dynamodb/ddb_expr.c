/*
 * ddb_expr: see ddb_expr.h.
 */
#include "core/store/dynamodb/ddb_expr.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void ddb_add_str(cJSON *into, const char *name, const char *type, const char *s)
{
	cJSON *o = cJSON_AddObjectToObject(into, name);
	if (o != NULL)
		cJSON_AddStringToObject(o, type, s);
}

void ddb_add_num(cJSON *into, const char *name, int64_t v)
{
	char n[24];
	snprintf(n, sizeof(n), "%" PRId64, v);
	ddb_add_str(into, name, "N", n);
}

bool ddb_uses(const char *text, const char *p)
{
	size_t n = strlen(p);
	for (const char *at = text; (at = strstr(at, p)) != NULL; at += n) {
		char next = at[n];
		if (!(next == '_' || (next >= 'a' && next <= 'z') || (next >= '0' && next <= '9')))
			return true;
	}
	return false;
}

const cJSON *ddb_batch_items(const cJSON *root, const char *table)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "Responses"), table);
	return cJSON_IsArray(items) ? items : NULL;
}
