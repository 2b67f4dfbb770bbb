/*
 * tls: the server's one TLS context, shared by every listener that speaks
 * TLS (the Redis TLS port, the PostgreSQL port after an SSLRequest), built
 * from the --tls-* options: certificate chain, key, client CA, protocol
 * versions, ciphers. SIGHUP rebuilds it from the same files: new sessions
 * get the new one, live sessions keep the context they started with
 * (OpenSSL counts its references). A rebuild that fails keeps the old one.
 *
 * It also counts handshakes, for INFO and /metrics.
 *
 * Not here: moving bytes (transport_tls.c), what a front-end asks of
 * client certificates (conn_proto.tls_client_cert).
 */
#ifndef LG_TLS_H
#define LG_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfg;
struct tls_srv;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct x509_st X509;

struct tls_stats {
	uint64_t handshakes;	     /* completed */
	uint64_t handshake_failures; /* a TLS error before the handshake completed */
	uint64_t reloads, reload_failures;
};

/* The context of *cfg (kept by pointer: it must outlive the result).
 * NULL with a message in err naming the option and the file (an unreadable
 * file, a key that does not match the certificate, a bad protocol name). */
struct tls_srv *tls_srv_new(const struct cfg *cfg, char *err, size_t errlen)
	__attribute__((warn_unused_result));

/* Rereads the certificate, key and CA files. false with err when they do
 * not make a context: the previous one stays in use. */
bool tls_srv_reload(struct tls_srv *t, char *err, size_t errlen)
	__attribute__((warn_unused_result));

/* The context new sessions start with; the caller does not own it. */
SSL_CTX *tls_srv_ctx(const struct tls_srv *t);

/* Whether the context has a CA to check client certificates with. */
bool tls_srv_has_ca(const struct tls_srv *t);

/* "subject, serial S, expires DATE" of the certificate in use. */
void tls_srv_describe(const struct tls_srv *t, char *out, size_t len);

/* For the transport: a handshake ended (ok: completed; else failed). */
void tls_srv_count(struct tls_srv *t, bool ok);

void tls_srv_stats(const struct tls_srv *t, struct tls_stats *st);

/* The tls-server-end-point channel binding data of cert (RFC 5929 section
 * 4.1, as PostgreSQL computes it for SCRAM-SHA-256-PLUS): the hash of its
 * DER encoding, by the hash of its signature algorithm, SHA-256 for MD5
 * and SHA-1. Returns the hash's length (at most 64 bytes, into out), 0
 * when the signature algorithm names no hash (Ed25519, Ed448): no
 * channel binding then. */
size_t tls_cert_end_point(X509 *cert, unsigned char out[64]);

void tls_srv_free(struct tls_srv *t);

#endif
