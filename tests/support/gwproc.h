/*
 * gwproc: leasegate and a serialized moto_server as child processes, with
 * no cmocka, so that benchmarks can use it too (bench/bench_fairness.c);
 * tests/support/gw.c wraps it with the tests' assertions.
 */
#ifndef LG_GWPROC_H
#define LG_GWPROC_H

#include <stdbool.h>
#include <sys/types.h>

/* A TCP port free on 127.0.0.1 right now, or -1: drawn from
 * GP_PORT_LOW .. GP_PORT_LOW + GP_PORT_SPAN - 1, below the kernel's
 * ephemeral ports (tests/support/gw.sh's gw_free_port draws alike). */
#define GP_PORT_LOW  20000
#define GP_PORT_SPAN 12000
int gp_free_port(void);

/* True when something accepts TCP connections on 127.0.0.1:port now. */
bool gp_can_connect(int port);

/* Forks and execs argv (argv[0] the leasegate binary), its stdout and
 * stderr appended to log (/dev/null when NULL). With moto, it runs signed
 * with LG_AK/LG_SK against LG_MOTO's DynamoDB (AWS_REGION us-east-1). With
 * open_files > 0, under that open files limit (soft and hard). Returns the
 * pid, or -1 when it could not fork. */
pid_t gp_spawn(const char *const argv[], const char *log, bool moto, long open_files);

/* Waits up to 10 s for pid to be ready on port (its Redis port, open from
 * the start, answers a PING with something else than -LOADING): 0 once it
 * is, 1 when it exited first (reaped), -1 when the time ran out. */
int gp_wait_ready(pid_t pid, int port);

/* SIGTERM and reap; nothing for pid <= 0. */
void gp_stop(pid_t pid);

/* Starts tests/moto_serial.py (moto applying one request at a time) from
 * tests_dir with signature checking on, then tests/moto_setup.py for its IAM
 * users, as tests/run-integration.sh does; sets LG_MOTO, LG_AK, LG_SK (and
 * LG_DENIED_AK/_SK). Its output goes to log (/dev/null when NULL). Returns
 * its pid, or 0 when it could not start (no python3 with moto and boto3). */
pid_t gp_serial_moto(const char *tests_dir, const char *log);

#endif
