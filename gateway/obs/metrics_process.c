/*
 * metrics_process: the process_* metrics every Prometheus client library
 * exports (CPU time, resident memory, descriptors, start time), read from
 * getrusage, getrlimit and Linux's /proc. A figure that cannot be read is
 * left out, never written as 0.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gateway/obs/metrics.h"

static void gauge(struct buf *out, const char *name, const char *type, const char *help, double v)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, v);
}

/* Descriptors open now: the entries of /proc/self/fd, less the one the
 * listing itself holds. */
static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return -1;
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

/* The boot time (seconds since the epoch), from /proc/stat's btime. */
static long long boot_time(void)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	long long bt = -1;
	while (f != NULL && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return bt;
}

/* The start time in clock ticks after boot: field 22 of /proc/self/stat,
 * counted after the command name's closing parenthesis (the name may hold
 * spaces). */
static long long start_ticks(void)
{
	char text[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	if (f == NULL)
		return -1;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	char *p = strrchr(text, ')');
	long long ticks = -1;
	/* after ")": state (3) ... starttime (22): skip 19 fields */
	for (int field = 3; p != NULL && field <= 22; field++) {
		p = strchr(p + 1, ' ');
		if (p != NULL && field == 22 && sscanf(p + 1, "%lld", &ticks) != 1)
			ticks = -1;
	}
	return ticks;
}

void metrics_process(struct buf *out)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		gauge(out, "process_cpu_seconds_total", "counter",
		      "User and system CPU time spent in seconds.",
		      (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long vm = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f != NULL && fscanf(f, "%llu %llu", &vm, &rss) == 2 && page > 0) {
		gauge(out, "process_resident_memory_bytes", "gauge",
		      "Resident memory size in bytes.", (double)rss * (double)page);
		gauge(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
		      (double)vm * (double)page);
	}
	if (f != NULL)
		fclose(f);
	long fds = open_fds();
	if (fds >= 0)
		gauge(out, "process_open_fds", "gauge", "Number of open file descriptors.",
		      (double)fds);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		gauge(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
		      (double)rl.rlim_cur);
	long long bt = boot_time(), ticks = start_ticks();
	long hz = sysconf(_SC_CLK_TCK);
	if (bt >= 0 && ticks >= 0 && hz > 0)
		gauge(out, "process_start_time_seconds", "gauge",
		      "Start time of the process since unix epoch in seconds.",
		      (double)bt + (double)ticks / (double)hz);
}
