/*
 * bench_lockcycle: lock cycles per second against a Redis-protocol server
 * — an acquire then a release of the same name — the one thing
 * redis-benchmark cannot express (its commands are independent).
 *
 *   leasegate: LOCK.ACQUIRE <name> 30000   then  LOCK.RELEASE <name>
 *   redis:     SET <name> 1 NX PX 30000    then  DEL <name>
 *
 * Like redis-benchmark: `clients` connections, each sending `pipeline`
 * commands at once and waiting for all their replies before the next batch;
 * commands alternate acquire/release, so with pipeline 1 a release is sent
 * once its acquire is answered, and with pipeline 16 one write carries 8
 * whole cycles. Names are random in [0, keyspace), as __rand_int__ with
 * -r; two clients drawing the same name at once make one acquire refused
 * (counted, not an error). Runs for `seconds`, then prints one line:
 *
 *   cycles_per_s <f> ops_per_s <f> cycles <n> refused <n> errors <n>
 *
 * Errors (an error reply or a reply of the wrong type) make it exit 1.
 *
 *   build/bench/bench_lockcycle PORT lock|redis [clients] [pipeline] [seconds] [keyspace]
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#define MAX_CLIENTS  1024
#define MAX_PIPELINE 256

struct conn {
	int fd;
	redisReader *rd;
	unsigned long seq; /* commands sent: even = acquire, odd = release */
	long name;	   /* the name of the cycle in progress */
	int outstanding;   /* replies still due for the batch */
	char out[MAX_PIPELINE * 96];
	size_t len, off; /* bytes of out, sent */
};

static bool lock_mode;
static long keyspace = 100000;
static unsigned long long cycles, refused, errors;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("connect");
		exit(2);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* Appends the next command of c's sequence to its output. */
static void add_command(struct conn *c)
{
	char name[32], *p = c->out + c->len;
	size_t room = sizeof(c->out) - c->len;
	int n;
	if (c->seq % 2 == 0)
		c->name = random() % keyspace;
	int nl = snprintf(name, sizeof(name), "lock:%ld", c->name);
	if (c->seq % 2 == 0 && lock_mode)
		n = snprintf(p, room, "*3\r\n$12\r\nLOCK.ACQUIRE\r\n$%d\r\n%s\r\n$5\r\n30000\r\n",
			     nl, name);
	else if (c->seq % 2 == 0)
		n = snprintf(p, room,
			     "*6\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\n1\r\n$2\r\nNX\r\n$2\r\nPX\r\n"
			     "$5\r\n30000\r\n",
			     nl, name);
	else if (lock_mode)
		n = snprintf(p, room, "*2\r\n$12\r\nLOCK.RELEASE\r\n$%d\r\n%s\r\n", nl, name);
	else
		n = snprintf(p, room, "*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n", nl, name);
	c->len += (size_t)n;
	c->seq++;
	c->outstanding++;
}

static void batch(struct conn *c, int pipeline)
{
	c->len = c->off = 0;
	for (int i = 0; i < pipeline; i++)
		add_command(c);
}

/* Checks one reply; release replies complete a cycle. */
static void on_reply(struct conn *c, redisReply *r, unsigned long cmd_seq)
{
	bool acquire = cmd_seq % 2 == 0;
	if (r->type == REDIS_REPLY_ERROR) {
		if (errors++ < 5)
			fprintf(stderr, "error reply: %s\n", r->str);
	} else if (acquire && r->type == REDIS_REPLY_NIL) {
		refused++;
	} else if (acquire &&
		   (lock_mode ? r->type == REDIS_REPLY_INTEGER : r->type == REDIS_REPLY_STATUS)) {
		/* acquired */
	} else if (!acquire && r->type == REDIS_REPLY_INTEGER) {
		cycles++;
	} else if (errors++ < 5) {
		fprintf(stderr, "unexpected reply type %d to %s\n", r->type,
			acquire ? "an acquire" : "a release");
	}
	freeReplyObject(r);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr,
			"usage: %s PORT lock|redis [clients] [pipeline] [seconds] [keyspace]\n",
			argv[0]);
		return 2;
	}
	int port = atoi(argv[1]);
	lock_mode = strcmp(argv[2], "lock") == 0;
	int nclients = argc > 3 ? atoi(argv[3]) : 50;
	int pipeline = argc > 4 ? atoi(argv[4]) : 1;
	double seconds = argc > 5 ? atof(argv[5]) : 2.0;
	keyspace = argc > 6 ? atol(argv[6]) : 100000;
	if (nclients < 1 || nclients > MAX_CLIENTS || pipeline < 1 || pipeline > MAX_PIPELINE ||
	    keyspace < 1) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	srandom((unsigned)getpid());
	struct conn *cs = calloc((size_t)nclients, sizeof(*cs));
	struct pollfd *pf = calloc((size_t)nclients, sizeof(*pf));
	for (int i = 0; i < nclients; i++) {
		cs[i].fd = dial(port);
		cs[i].rd = redisReaderCreate();
		batch(&cs[i], pipeline);
	}
	double start = now_s(), stop = start + seconds, end = start;
	unsigned long long counted = 0, counted_ops = 0, ops = 0;
	bool stopping = false;
	int busy = nclients;
	while (busy > 0) {
		for (int i = 0; i < nclients; i++) {
			pf[i].fd = cs[i].outstanding > 0 ? cs[i].fd : -1;
			pf[i].events = POLLIN | (cs[i].off < cs[i].len ? POLLOUT : 0);
		}
		if (poll(pf, (nfds_t)nclients, 1000) < 0 && errno != EINTR) {
			perror("poll");
			return 2;
		}
		double t = now_s();
		if (!stopping && t >= stop) {
			stopping = true;
			end = t;
			counted = cycles;
			counted_ops = ops;
		}
		for (int i = 0; i < nclients; i++) {
			struct conn *c = &cs[i];
			if (pf[i].fd < 0)
				continue;
			if ((pf[i].revents & POLLOUT) && c->off < c->len) {
				ssize_t w =
					send(c->fd, c->out + c->off, c->len - c->off, MSG_NOSIGNAL);
				if (w > 0)
					c->off += (size_t)w;
				else if (errno != EAGAIN) {
					perror("send");
					return 2;
				}
			}
			if (!(pf[i].revents & (POLLIN | POLLERR | POLLHUP)))
				continue;
			char buf[65536];
			ssize_t r = recv(c->fd, buf, sizeof(buf), 0);
			if (r == 0 || (r < 0 && errno != EAGAIN)) {
				fprintf(stderr, "connection %d closed by the server\n", i);
				return 2;
			}
			if (r < 0)
				continue;
			redisReaderFeed(c->rd, buf, (size_t)r);
			void *reply;
			while (c->outstanding > 0 &&
			       redisReaderGetReply(c->rd, &reply) == REDIS_OK && reply != NULL) {
				unsigned long cmd_seq = c->seq - (unsigned long)c->outstanding;
				c->outstanding--;
				ops++;
				on_reply(c, reply, cmd_seq);
			}
			if (c->outstanding == 0) {
				if (stopping)
					busy--;
				else
					batch(c, pipeline);
			}
		}
	}
	/* a connection stopped mid-cycle holds its lock: closing releases it */
	for (int i = 0; i < nclients; i++) {
		close(cs[i].fd);
		redisReaderFree(cs[i].rd);
	}
	double el = end - start;
	printf("cycles_per_s %.0f ops_per_s %.0f cycles %llu refused %llu errors %llu\n",
	       (double)counted / el, (double)counted_ops / el, counted, refused, errors);
	free(cs);
	free(pf);
	return errors ? 1 : 0;
}
