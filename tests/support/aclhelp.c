/*
 * aclhelp: ACL files and /metrics for the ACL integration tests (see
 * aclhelp.h).
 */
#include "tests/support/aclhelp.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

void acl_path(char *out, size_t n, const char *name)
{
	const char *dir = getenv("TMPDIR");
	snprintf(out, n, "%s/lg-%s-%d.acl", dir && *dir ? dir : "/tmp", name, (int)getpid());
}

void acl_write(const char *path, const char *text, mode_t mode)
{
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(tmp, mode), 0);
	assert_int_equal(rename(tmp, path), 0);
}

static char body[256 * 1024];
static size_t body_len;

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	size_t k = size * n;
	if (body_len + k >= sizeof(body))
		return 0;
	memcpy(body + body_len, p, k);
	body_len += k;
	body[body_len] = '\0';
	return k;
}

const char *acl_metrics(int port)
{
	char url[128];
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	body_len = 0;
	body[0] = '\0';
	CURL *c = curl_easy_init();
	assert_non_null(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	CURLcode rc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK)
		fail_msg("GET %s: %s", url, curl_easy_strerror(rc));
	return body;
}

long long acl_metric(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return atoll(p + n + 1);
	return -1;
}
