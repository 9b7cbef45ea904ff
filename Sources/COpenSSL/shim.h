#ifndef PUSHPROVIDER_COPENSSL_SHIM_H
#define PUSHPROVIDER_COPENSSL_SHIM_H
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/ec.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

/* Macros and function-like macros Swift cannot import, wrapped with pp_ names. */
static inline long pp_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline void pp_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline void pp_sk_X509_pop_free(STACK_OF(X509) *s) { sk_X509_pop_free(s, X509_free); }
static inline int pp_sk_X509_num(const STACK_OF(X509) *s) { return sk_X509_num(s); }
static inline X509 *pp_sk_X509_value(const STACK_OF(X509) *s, int i) { return sk_X509_value(s, i); }
static inline STACK_OF(X509) *pp_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int pp_sk_X509_push(STACK_OF(X509) *s, X509 *x) { return sk_X509_push(s, x); }

/* EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen. */
static inline EVP_PKEY *pp_EVP_EC_gen_P256(void) { return EVP_EC_gen("P-256"); }

/* `openssl x509 -subject` style one-line names, UTF-8 kept as is (XN_FLAG_ONELINE is a compound macro). */
static inline unsigned long pp_XN_FLAG_ONELINE_UTF8(void) {
    return (XN_FLAG_ONELINE & ~ASN1_STRFLGS_ESC_MSB) | ASN1_STRFLGS_UTF8_CONVERT;
}

/* Whether an error code is PKCS12_parse's "mac verify failure" (a wrong password, or a damaged file).
 * ERR_GET_LIB / ERR_GET_REASON are inline helpers with macro arguments in some versions. */
static inline int pp_ERR_is_pkcs12_mac_failure(unsigned long e) {
    return ERR_GET_LIB(e) == ERR_LIB_PKCS12 && ERR_GET_REASON(e) == PKCS12_R_MAC_VERIFY_FAILURE;
}

/* SSL_CTX_add1_chain_cert is a macro over SSL_CTX_ctrl. */
static inline int pp_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *x) { return SSL_CTX_add1_chain_cert(ctx, x); }
#endif
