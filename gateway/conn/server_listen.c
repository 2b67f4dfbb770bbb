/*
 * server_listen: the registry's listeners (see server.h): TCP on an
 * address and port, a Unix socket at a path (a stale one replaced, made
 * with --unixsocketperm), their ports, and their end.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/listener.h>

#include "gateway/config.h"
#include "gateway/conn/server_int.h"
#include "gateway/conn/transport.h"
#include "gateway/obs/log.h"

/* The next free listener slot bound to proto, or NULL (with err). */
static struct listener *new_listener(struct srv *srv, const struct conn_proto *proto, char *err,
				     size_t errlen)
{
	if (srv->nlisteners == SRV_MAX_LISTENERS) {
		snprintf(err, errlen, "too many listeners (at most %d)", SRV_MAX_LISTENERS);
		return NULL;
	}
	struct listener *li = &srv->listeners[srv->nlisteners];
	memset(li, 0, sizeof(*li));
	li->srv = srv;
	li->proto = proto;
	li->transport = &transport_plain;
	return li;
}

bool srv_listen_tcp(struct srv *srv, const char *bind, int64_t port, const struct conn_proto *proto,
		    char *err, size_t errlen)
{
	return srv_listen_tcp_on(srv, bind, port, proto, &transport_plain, err, errlen);
}

bool srv_listen_tcp_on(struct srv *srv, const char *bind, int64_t port,
		       const struct conn_proto *proto, const struct transport *t, char *err,
		       size_t errlen)
{
	struct listener *li = new_listener(srv, proto, err, errlen);
	if (li == NULL)
		return false;
	li->transport = t;
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *res = NULL;
	char sport[16];
	snprintf(sport, sizeof(sport), "%lld", (long long)port);
	int rc = getaddrinfo(bind, sport, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "--bind %s: %s", bind, gai_strerror(rc));
		return false;
	}
	li->l = evconnlistener_new_bind(srv->base, srv_accept_cb, li,
					LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE |
						LEV_OPT_CLOSE_ON_EXEC,
					511, res->ai_addr, (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (!li->l) {
		int saved = errno; /* callers tell EADDRINUSE from the rest */
		if (saved == EADDRINUSE)
			snprintf(err, errlen,
				 "cannot listen on %s:%lld: port %lld is in use by another process",
				 bind, (long long)port, (long long)port);
		else
			snprintf(err, errlen, "cannot listen on %s:%lld: %s", bind, (long long)port,
				 strerror(saved));
		errno = saved;
		return false;
	}
	evconnlistener_set_error_cb(li->l, srv_accept_error_cb);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(evconnlistener_get_fd(li->l), (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET)
			li->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			li->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	srv->nlisteners++;
	return true;
}

/* What is at a Unix socket's path before we listen there: nothing, or a
 * socket nobody answers on (the leftover of a run that did not stop
 * cleanly), which is removed. Anything else stays, and the start fails. */
static bool clear_unix_path(const struct sockaddr_un *sun, char *err, size_t errlen)
{
	const char *path = sun->sun_path;
	struct stat st;
	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return true;
		snprintf(err, errlen, "--unixsocket %s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen,
			 "--unixsocket %s: the path exists and is not a socket: not replaced "
			 "(remove it, or choose another path)",
			 path);
		return false;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "--unixsocket %s: %s", path, strerror(errno));
		return false;
	}
	int rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	int e = errno;
	close(fd);
	if (rc == 0) {
		snprintf(err, errlen,
			 "--unixsocket %s: another process is listening on this socket: not "
			 "replaced (stop it, or choose another path)",
			 path);
		return false;
	}
	if (e != ECONNREFUSED) {
		snprintf(err, errlen,
			 "--unixsocket %s: cannot tell whether the socket is in use "
			 "(%s): not replaced",
			 path, strerror(e));
		return false;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "--unixsocket %s: cannot remove the stale socket: %s", path,
			 strerror(errno));
		return false;
	}
	log_msg(LOG_LVL_INFO, "--unixsocket %s: removed a stale socket (nobody answered on it)",
		path);
	return true;
}

bool srv_listen_unix(struct srv *srv, const char *path, const struct conn_proto *proto, char *err,
		     size_t errlen)
{
	struct listener *li = new_listener(srv, proto, err, errlen);
	if (li == NULL)
		return false;
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "--unixsocket %s: path too long", path);
		return false;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (!clear_unix_path(&sun, err, errlen))
		return false;
	/* The file is made with --unixsocketperm from the start (no moment
	 * with the umask's wider mode); the loop has no other thread yet
	 * that makes files. */
	mode_t perm = (mode_t)srv->cfg->unixsocketperm & 0777;
	mode_t old = umask(~perm & 0777);
	li->l = evconnlistener_new_bind(srv->base, srv_accept_cb, li,
					LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 511,
					(struct sockaddr *)&sun, sizeof(sun));
	int e = errno;
	umask(old);
	if (!li->l) {
		snprintf(err, errlen, "cannot listen on unix socket %s: %s", path, strerror(e));
		return false;
	}
	struct stat st;
	if (chmod(path, perm) != 0 || stat(path, &st) != 0) {
		snprintf(err, errlen, "--unixsocketperm %o on %s: %s", (unsigned)perm, path,
			 strerror(errno));
		evconnlistener_free(li->l);
		unlink(path);
		return false;
	}
	li->dev = st.st_dev;
	li->ino = st.st_ino;
	evconnlistener_set_error_cb(li->l, srv_accept_error_cb);
	snprintf(li->path, sizeof(li->path), "%s", path);
	srv->nlisteners++;
	return true;
}

void srv_stop_listening(struct srv *srv)
{
	for (size_t i = 0; i < srv->nlisteners; i++) {
		struct listener *li = &srv->listeners[i];
		evconnlistener_free(li->l);
		/* only the socket we made: another process may have one there now */
		struct stat st;
		if (li->path[0] && lstat(li->path, &st) == 0 && st.st_dev == li->dev &&
		    st.st_ino == li->ino)
			unlink(li->path);
	}
	srv->nlisteners = 0;
}

int srv_port_on(const struct srv *srv, const struct conn_proto *proto, const struct transport *t)
{
	for (size_t i = 0; i < srv->nlisteners; i++)
		if (srv->listeners[i].proto == proto && srv->listeners[i].transport == t &&
		    srv->listeners[i].port != 0)
			return srv->listeners[i].port;
	return 0;
}

int srv_port(const struct srv *srv, const struct conn_proto *proto)
{
	return srv_port_on(srv, proto, &transport_plain);
}
