#ifndef PUSHPROVIDER_CCURL_SHIM_H
#define PUSHPROVIDER_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt / curl_multi_setopt / curl_easy_getinfo are variadic: Swift cannot call them.
 * One typed wrapper per argument type, prefixed pp_. */
static inline CURLcode pp_curl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pp_curl_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pp_curl_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pp_curl_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pp_curl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pp_curl_easy_setopt_blob(CURL *h, CURLoption o, struct curl_blob *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode pp_curl_easy_setopt_write_callback(CURL *h, size_t (*cb)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb);
}
static inline CURLcode pp_curl_easy_setopt_header_callback(CURL *h, size_t (*cb)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb);
}
static inline CURLcode pp_curl_easy_setopt_sockopt_callback(CURL *h, int (*cb)(void *, curl_socket_t, curlsocktype)) {
    return curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, cb);
}
/* CURLOPT_SSL_CTX_FUNCTION: called with the connection's SSL_CTX before its handshake (OpenSSL builds only;
 * other TLS backends answer CURLE_NOT_BUILT_IN or CURLE_UNKNOWN_OPTION). */
static inline CURLcode pp_curl_easy_setopt_ssl_ctx_callback(CURL *h, CURLcode (*cb)(CURL *, void *, void *)) {
    return curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, cb);
}
/* CURLOPT_PREREQFUNCTION (7.80): called once a transfer has its connection, just before its request is sent. */
static inline CURLcode pp_curl_easy_setopt_prereq_callback(CURL *h, int (*cb)(void *, char *, char *, int, int)) {
    return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, cb);
}
static inline CURLMcode pp_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLcode pp_curl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode pp_curl_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode pp_curl_easy_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode pp_curl_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
/* CURLVERSION_NOW is a macro: the version data of the libcurl loaded at run time (pushctl --version). */
static inline const curl_version_info_data *pp_curl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }
/* CURL_GLOBAL_ALL and CURLPIPE_MULTIPLEX are macros; expose them as functions for clarity. */
static inline long pp_curl_global_all(void) { return CURL_GLOBAL_ALL; }
static inline long pp_curlpipe_multiplex(void) { return CURLPIPE_MULTIPLEX; }
/* CURL_BLOB_COPY is a macro: curl copies blob bytes, so Swift buffers need not outlive the call. */
static inline unsigned int pp_curl_blob_copy(void) { return CURL_BLOB_COPY; }
/* Reads one finished transfer from the multi handle: returns 1 and fills easy/result, or 0 when none. */
static inline int pp_curl_multi_next_done(CURLM *m, CURL **easy, CURLcode *result) {
    int left = 0;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
        if (msg->msg == CURLMSG_DONE) { *easy = msg->easy_handle; *result = msg->data.result; return 1; }
    }
    return 0;
}
#endif
