/*
 * log: one line per event, text or JSON, to stderr or a file.
 *
 * Text:  2026-01-01T00:00:00.000Z info  message key=value key="a value"
 * JSON:  {"ts":"2026-01-01T00:00:00.000Z","level":"info","msg":"message",
 *         "key":"value","count":3}
 * Structured fields (log_fields) are JSON keys of their own, so that log
 * pipelines filter on them; in text they follow the message as key=value.
 * The file is reopened by log_reopen() (on SIGHUP, for logrotate). The
 * state is one static sink: logging is process-wide like stderr itself.
 * Not here: the core's event ids and metrics (core/obs).
 */
#ifndef LG_LOG_H
#define LG_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_LVL_DEBUG, LOG_LVL_INFO, LOG_LVL_WARN, LOG_LVL_ERROR };

/* Directs logs to path (NULL or "" = stderr) at min_level, as JSON when
 * json. Returns false (and keeps the previous sink) if path cannot be
 * opened for appending, with the reason (the system's, and what to do)
 * in err. */
bool log_open(const char *path, enum log_level min_level, bool json, char *err, size_t errlen)
	__attribute__((warn_unused_result));

/* Reopens the file (after rotation); false if it cannot, the old sink stays. */
bool log_reopen(void) __attribute__((warn_unused_result));

/* Closes the file, if any; later lines go to stderr. */
void log_close(void);

/* True when a line at level would be written. */
bool log_enabled(enum log_level level);

/* A field of a line: a string (str not NULL) or a number. */
struct log_field {
	const char *key; /* [a-z_]+ */
	const char *str; /* NULL: the field is num */
	long long num;
};
#define LOG_STR(k, v) ((struct log_field){.key = (k), .str = (v)})
#define LOG_NUM(k, v) ((struct log_field){.key = (k), .num = (v)})

/* Writes one line: the message, then the n fields (a field whose str is
 * NULL and whose key starts with '?' is left out: "?token" with num 0). */
void log_fields(enum log_level level, const struct log_field *f, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The line log_fields would write, into out (for tests); its length. */
size_t log_format_line(char *out, size_t outsz, bool json, enum log_level level, const char *ts,
		       const char *msg, const struct log_field *f, size_t n);

/* Writes one line; the message has CR/LF replaced and is JSON-escaped. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
