/*
 * tls: the shared server context and its reload (see tls.h).
 *
 * Every file is opened with fopen() first, so that an unreadable one is
 * reported with the system's reason and the option that names it, before
 * OpenSSL's own (less legible) error queue is read.
 */
#include "gateway/conn/tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "gateway/config.h"

struct tls_srv {
	const struct cfg *cfg;
	SSL_CTX *ctx;
	bool has_ca;
	struct tls_stats st;
};

/* OpenSSL's last error as text ("" when none), clearing the queue. */
static const char *ossl_reason(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();
	buf[0] = '\0';
	if (e != 0)
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

static bool readable(const char *opt, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, errlen, "bad value for --%s: cannot read %s: %s", opt, path,
			 strerror(errno));
		return false;
	}
	fclose(f);
	return true;
}

/* --tls-protocols: a space-separated list of versions; the others are
 * turned off (as Redis does, with SSL_OP_NO_*). */
static bool set_protocols(SSL_CTX *ctx, const char *list, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		uint64_t off;
	} versions[] = {
		{"TLSv1", SSL_OP_NO_TLSv1},
		{"TLSv1.1", SSL_OP_NO_TLSv1_1},
		{"TLSv1.2", SSL_OP_NO_TLSv1_2},
		{"TLSv1.3", SSL_OP_NO_TLSv1_3},
	};
	enum { NV = sizeof(versions) / sizeof(versions[0]) };
	bool on[NV] = {false};
	bool any = false;
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		size_t n = strcspn(p, " ,");
		if (n == 0)
			break;
		bool known = false;
		for (size_t i = 0; i < NV; i++)
			if (strlen(versions[i].name) == n &&
			    strncasecmp(p, versions[i].name, n) == 0)
				on[i] = known = any = true;
		if (!known) {
			snprintf(err, errlen,
				 "bad value for --tls-protocols: unknown protocol '%.*s' (TLSv1, "
				 "TLSv1.1, TLSv1.2, TLSv1.3)",
				 (int)n, p);
			return false;
		}
		p += n;
	}
	if (!any) {
		snprintf(err, errlen, "bad value for --tls-protocols: no protocol given");
		return false;
	}
	uint64_t off = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3;
	for (size_t i = 0; i < NV; i++)
		if (!on[i])
			off |= versions[i].off;
	SSL_CTX_set_options(ctx, off);
	return true;
}

/* An encrypted key is refused: OpenSSL's default would ask for its
 * passphrase on the terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *arg)
{
	return 0;
}

/* A context from the files of cfg, or NULL with err. */
static SSL_CTX *build(const struct cfg *cfg, char *err, size_t errlen)
{
	char why[256];
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (ctx == NULL) {
		snprintf(err, errlen, "TLS: cannot make a context: %s",
			 ossl_reason(why, sizeof(why)));
		return NULL;
	}
	/* A client that closes its socket without close_notify (redis-cli
	 * does) has closed, not failed: OpenSSL 3 reports that as an error,
	 * which libevent 2.1 cannot tell from a real one. A request cut short
	 * is incomplete whatever the reason, so nothing is lost. */
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
					 SSL_OP_CIPHER_SERVER_PREFERENCE |
					 SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
				      SSL_MODE_RELEASE_BUFFERS);
	/* resumed sessions with client certificates need an id context: this
	 * one is a default, each connection sets its own (per front-end and
	 * certificate policy, transport_tls.c) so that a session resumes only
	 * where it was made. A reload makes a new context, with new ticket
	 * keys and an empty cache: sessions of the old one are not resumed. */
	static const unsigned char sid[] = "leasegate";
	SSL_CTX_set_session_id_context(ctx, sid, sizeof(sid) - 1);
	if (!set_protocols(ctx, cfg->tls_protocols, err, errlen))
		goto fail;
	if (cfg->tls_ciphers[0] && SSL_CTX_set_cipher_list(ctx, cfg->tls_ciphers) != 1) {
		snprintf(err, errlen, "bad value for --tls-ciphers: %s",
			 ossl_reason(why, sizeof(why)));
		goto fail;
	}
	if (cfg->tls_ciphersuites[0] && SSL_CTX_set_ciphersuites(ctx, cfg->tls_ciphersuites) != 1) {
		snprintf(err, errlen, "bad value for --tls-ciphersuites: %s",
			 ossl_reason(why, sizeof(why)));
		goto fail;
	}
	if (!readable("tls-cert-file", cfg->tls_cert_file, err, errlen))
		goto fail;
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert_file) != 1) {
		snprintf(err, errlen, "bad value for --tls-cert-file: %s: no certificate: %s",
			 cfg->tls_cert_file, ossl_reason(why, sizeof(why)));
		goto fail;
	}
	if (!readable("tls-key-file", cfg->tls_key_file, err, errlen))
		goto fail;
	FILE *kf = fopen(cfg->tls_key_file, "r");
	EVP_PKEY *key = kf ? PEM_read_PrivateKey(kf, NULL, no_passphrase, NULL) : NULL;
	if (kf)
		fclose(kf);
	if (key == NULL) {
		snprintf(
			err, errlen,
			"bad value for --tls-key-file: %s: no private key (PEM, not encrypted): %s",
			cfg->tls_key_file, ossl_reason(why, sizeof(why)));
		goto fail;
	}
	if (X509_check_private_key(SSL_CTX_get0_certificate(ctx), key) != 1) {
		ERR_clear_error();
		EVP_PKEY_free(key);
		snprintf(err, errlen,
			 "bad value for --tls-key-file: %s is not the key of the certificate in "
			 "--tls-cert-file %s",
			 cfg->tls_key_file, cfg->tls_cert_file);
		goto fail;
	}
	int used = SSL_CTX_use_PrivateKey(ctx, key);
	EVP_PKEY_free(key); /* the context keeps its own reference */
	if (used != 1) {
		snprintf(err, errlen, "bad value for --tls-key-file: %s: %s", cfg->tls_key_file,
			 ossl_reason(why, sizeof(why)));
		goto fail;
	}
	if (cfg->tls_ca_cert_file[0]) {
		if (!readable("tls-ca-cert-file", cfg->tls_ca_cert_file, err, errlen))
			goto fail;
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->tls_ca_cert_file);
		if (names == NULL ||
		    SSL_CTX_load_verify_locations(ctx, cfg->tls_ca_cert_file, NULL) != 1) {
			if (names != NULL)
				sk_X509_NAME_pop_free(names, X509_NAME_free);
			snprintf(err, errlen,
				 "bad value for --tls-ca-cert-file: %s: no CA certificate: %s",
				 cfg->tls_ca_cert_file, ossl_reason(why, sizeof(why)));
			goto fail;
		}
		SSL_CTX_set_client_CA_list(ctx, names); /* the context owns names */
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

struct tls_srv *tls_srv_new(const struct cfg *cfg, char *err, size_t errlen)
{
	struct tls_srv *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->cfg = cfg;
	t->ctx = build(cfg, err, errlen);
	if (t->ctx == NULL) {
		free(t);
		return NULL;
	}
	t->has_ca = cfg->tls_ca_cert_file[0] != '\0';
	return t;
}

bool tls_srv_reload(struct tls_srv *t, char *err, size_t errlen)
{
	SSL_CTX *ctx = build(t->cfg, err, errlen);
	if (ctx == NULL) {
		t->st.reload_failures++;
		return false;
	}
	SSL_CTX_free(t->ctx); /* live sessions hold their own reference */
	t->ctx = ctx;
	t->st.reloads++;
	return true;
}

SSL_CTX *tls_srv_ctx(const struct tls_srv *t)
{
	return t->ctx;
}

bool tls_srv_has_ca(const struct tls_srv *t)
{
	return t->has_ca;
}

void tls_srv_describe(const struct tls_srv *t, char *out, size_t len)
{
	X509 *x = SSL_CTX_get0_certificate(t->ctx);
	char subject[256] = "?", serial[80] = "?", until[64] = "?";
	if (x != NULL) {
		X509_NAME_oneline(X509_get_subject_name(x), subject, sizeof(subject));
		BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
		char *hex = bn ? BN_bn2hex(bn) : NULL;
		if (hex)
			snprintf(serial, sizeof(serial), "%s", hex);
		OPENSSL_free(hex);
		BN_free(bn);
		BIO *b = BIO_new(BIO_s_mem());
		if (b && ASN1_TIME_print(b, X509_get0_notAfter(x)) == 1) {
			int n = BIO_read(b, until, (int)sizeof(until) - 1);
			until[n > 0 ? n : 0] = '\0';
		}
		BIO_free(b);
	}
	snprintf(out, len, "%s, serial %s, expires %s", subject, serial, until);
}

void tls_srv_count(struct tls_srv *t, bool ok)
{
	if (ok)
		t->st.handshakes++;
	else
		t->st.handshake_failures++;
}

void tls_srv_stats(const struct tls_srv *t, struct tls_stats *st)
{
	*st = t->st;
}

size_t tls_cert_end_point(X509 *cert, unsigned char out[64])
{
	int md_nid = NID_undef;
	if (cert == NULL || X509_get_signature_info(cert, &md_nid, NULL, NULL, NULL) != 1)
		return 0;
	const EVP_MD *md = md_nid == NID_md5 || md_nid == NID_sha1 ? EVP_sha256()
			   : md_nid == NID_undef		   ? NULL
								   : EVP_get_digestbynid(md_nid);
	unsigned int n = 0;
	if (md == NULL || EVP_MD_get_size(md) > 64 || X509_digest(cert, md, out, &n) != 1) {
		ERR_clear_error();
		return 0;
	}
	return n;
}

void tls_srv_free(struct tls_srv *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}
