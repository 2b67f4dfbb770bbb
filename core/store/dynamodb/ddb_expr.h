/*
 * ddb_expr: pieces of DynamoDB expressions' JSON that the request
 * builders of shared names (ddb_shared.c) and sessions (ddb_session.c)
 * share: typed attribute values, and whether an expression text uses a
 * placeholder (so that only the names and values it uses are sent:
 * DynamoDB refuses unused ones).
 */
#ifndef LG_DDB_EXPR_H
#define LG_DDB_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* into[name] = {type: s}, e.g. {"S": "abc"}. */
void ddb_add_str(cJSON *into, const char *name, const char *type, const char *s);
/* into[name] = {"N": "<v>"}. */
void ddb_add_num(cJSON *into, const char *name, int64_t v);
/* Does the expression text use the placeholder p ("#f", ":r") as a whole
 * token (not "#fb" for "#f")? */
bool ddb_uses(const char *text, const char *p);

/* The items a BatchGetItem answer (root) gives for table: its Responses'
 * array, or NULL when root is no such answer. */
const cJSON *ddb_batch_items(const cJSON *root, const char *table);

#endif
