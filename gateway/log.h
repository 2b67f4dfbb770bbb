/*
 * log: one line per event, text or JSON, to stderr or a file.
 *
 * Text:  2026-01-01T00:00:00.000Z info  message
 * JSON:  {"ts":"2026-01-01T00:00:00.000Z","level":"info","msg":"message"}
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

/* Writes one line; the message has CR/LF replaced and is JSON-escaped. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
