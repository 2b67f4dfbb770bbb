/*
 * testpki: see testpki.h.
 */
#include "tests/support/testpki.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

static void add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	assert_non_null(e);
	X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
}

static void write_key(const char *path, EVP_PKEY *key, const char *pass)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_PrivateKey(f, key, pass ? EVP_aes_128_cbc() : NULL,
					      (const unsigned char *)pass,
					      pass ? (int)strlen(pass) : 0, NULL, NULL),
			 1);
	fclose(f);
}

/* A certificate for cn, signed by the CA (self-signed when p has none
 * yet: it is the CA); its key written to key_path when given, returned
 * in *key_out when asked. */
static X509 *make_cert(struct testpki *p, const char *cn, long serial, const char *san,
		       const char *cert_path, const char *key_path, EVP_PKEY **key_out)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	assert_non_null(key);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	bool is_ca = p->ca_cert == NULL;
	X509 *issuer = is_ca ? x : p->ca_cert;
	X509_set_issuer_name(x, X509_get_subject_name(issuer));
	add_ext(x, issuer, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "CA:FALSE");
	if (san)
		add_ext(x, issuer, NID_subject_alt_name, san);
	assert_true(X509_sign(x, is_ca ? key : p->ca_key, EVP_sha256()) > 0);
	FILE *f = fopen(cert_path, "w");
	assert_non_null(f);
	PEM_write_X509(f, x);
	fclose(f);
	if (key_path)
		write_key(key_path, key, NULL);
	if (key_out)
		*key_out = key;
	else
		EVP_PKEY_free(key);
	return x;
}

#define SERVER_SAN "IP:127.0.0.1,DNS:localhost,DNS:" TESTPKI_SVC

void testpki_server(struct testpki *p, const char *cn, long serial)
{
	X509_free(make_cert(p, cn, serial, SERVER_SAN, p->cert, p->key, NULL));
}

void testpki_make(struct testpki *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->dir, sizeof(p->dir), "/tmp/lg-testpki.XXXXXX");
	assert_non_null(mkdtemp(p->dir));
#define PATH(f, name) snprintf(p->f, sizeof(p->f), "%s/" name, p->dir)
	PATH(ca, "ca.crt");
	PATH(cert, "server.crt");
	PATH(key, "server.key");
	PATH(other_key, "other.key");
	PATH(enc_key, "encrypted.key");
	PATH(client_cert, "client.crt");
	PATH(client_key, "client.key");
#undef PATH
	EVP_PKEY *ca_key;
	p->ca_cert = make_cert(p, "leasegate test CA", 1, NULL, p->ca, NULL, &ca_key);
	p->ca_key = ca_key;
	EVP_PKEY *server_key;
	X509_free(make_cert(p, "server one", 0x1001, SERVER_SAN, p->cert, p->key, &server_key));
	write_key(p->enc_key, server_key, "pw");
	EVP_PKEY_free(server_key);
	X509_free(make_cert(p, "client", 0x3001, NULL, p->client_cert, p->client_key, NULL));
	EVP_PKEY *other = EVP_EC_gen("P-256");
	assert_non_null(other);
	write_key(p->other_key, other, NULL);
	EVP_PKEY_free(other);
}

void testpki_free(struct testpki *p)
{
	const char *files[] = {p->ca,	   p->cert,	   p->key,	 p->other_key,
			       p->enc_key, p->client_cert, p->client_key};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(p->dir);
	X509_free(p->ca_cert);
	EVP_PKEY_free(p->ca_key);
	p->ca_cert = p->ca_key = NULL;
}
