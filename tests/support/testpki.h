/*
 * testpki: certificates for the TLS tests, made by OpenSSL at test time in
 * a scratch directory (no private key is checked in): a CA, a server
 * certificate signed by it (SANs 127.0.0.1, localhost and a Kubernetes
 * Service name), a client certificate signed by it, a key that belongs to
 * none of them, and the server key encrypted with a passphrase.
 */
#ifndef LG_TESTPKI_H
#define LG_TESTPKI_H

#include <stdbool.h>

#define TESTPKI_SVC "leasegate.default.svc.cluster.local"

struct testpki {
	char dir[64];
	char ca[128], cert[128], key[128], other_key[128], enc_key[128];
	char client_cert[128], client_key[128];
	void *ca_key, *ca_cert; /* EVP_PKEY *, X509 * */
};

/* Makes the directory and every file (server serial 0x1001, CN "server
 * one"). Fails the test on any error. */
void testpki_make(struct testpki *p);

/* Writes a new server certificate and key (for a reload) to p->cert and
 * p->key: subject CN=cn, serial. */
void testpki_server(struct testpki *p, const char *cn, long serial);

/* Removes the files and the directory. */
void testpki_free(struct testpki *p);

#endif
