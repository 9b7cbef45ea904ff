#ifndef PUSHPROVIDER_CCURL_SHIM_H
#define PUSHPROVIDER_CCURL_SHIM_H
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

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
/* CURLOPT_CLOSESOCKETFUNCTION (7.21.7): libcurl closes a connection's socket through it (the callback closes it),
 * which tells the transport a connection is gone (its new-connection gate). */
static inline CURLcode pp_curl_easy_setopt_closesocket_callback(CURL *h, int (*cb)(void *, curl_socket_t)) {
    return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, cb);
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
/* CURLOPT_OPENSOCKETFUNCTION: the resolved address is judged before libcurl connects to it (Web Push's refusal of
 * loopback, private and link-local addresses). */
static inline CURLcode pp_curl_easy_setopt_opensocket_callback(CURL *h, curl_socket_t (*cb)(void *, curlsocktype, struct curl_sockaddr *)) {
    return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, cb);
}
/* The address bytes (4 or 16) of a curl_sockaddr into out; returns their count, 0 for another family. */
static inline int pp_curl_sockaddr_bytes(const struct curl_sockaddr *a, unsigned char *out) {
    if (a->family == AF_INET) { memcpy(out, &((const struct sockaddr_in *)&a->addr)->sin_addr, 4); return 4; }
    if (a->family == AF_INET6) { memcpy(out, &((const struct sockaddr_in6 *)&a->addr)->sin6_addr, 16); return 16; }
    return 0;
}
/* What libcurl's own open-socket step does, for an address the callback accepts. */
static inline curl_socket_t pp_curl_open_socket(const struct curl_sockaddr *a) { return socket(a->family, a->socktype, a->protocol); }
static inline curl_socket_t pp_curl_socket_bad(void) { return CURL_SOCKET_BAD; }
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
/* Driving libcurl with curl_multi_socket_action from an epoll loop of the transport thread's own. */
static inline CURLMcode pp_curl_multi_setopt_pointer(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode pp_curl_multi_setopt_socket_callback(CURLM *m, int (*cb)(CURL *, curl_socket_t, int, void *, void *)) {
    return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, cb);
}
static inline CURLMcode pp_curl_multi_setopt_timer_callback(CURLM *m, int (*cb)(CURLM *, long, void *)) {
    return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, cb);
}
/* CURL_SOCKET_TIMEOUT is a macro of a macro. */
static inline curl_socket_t pp_curl_socket_timeout(void) { return CURL_SOCKET_TIMEOUT; }
static inline int pp_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
/* An eventfd in the epoll set wakes the loop from other threads (curl_multi_wakeup only interrupts curl_multi_poll). */
static inline int pp_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
static inline void pp_eventfd_signal(int fd) { uint64_t one = 1; ssize_t r = write(fd, &one, sizeof one); (void)r; }
static inline void pp_eventfd_drain(int fd) { uint64_t v; ssize_t r = read(fd, &v, sizeof v); (void)r; }
/* Watches fd for libcurl's CURL_POLL_IN/OUT/INOUT wish, or stops watching it (CURL_POLL_REMOVE). Tries a change
 * first and adds fd when epoll does not know it (a new socket), so the caller keeps no set of its own. */
static inline int pp_epoll_watch(int ep, int fd, int what) {
    if (what == CURL_POLL_REMOVE) return epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    struct epoll_event ev;
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    ev.data.u64 = 0;
    ev.data.fd = fd;
    if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}
/* Adds fd for reading (the wake-up eventfd). */
static inline int pp_epoll_add_reader(int ep, int fd) {
    struct epoll_event ev;
    ev.events = EPOLLIN;
    ev.data.u64 = 0;
    ev.data.fd = fd;
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}
/* Waits up to timeout_ms; fills fds[i] and masks[i] (CURL_CSELECT_IN/OUT/ERR) and returns how many are ready (0 on
 * a timeout or EINTR). epoll_event is a packed struct: it stays on this side. */
static inline int pp_epoll_wait(int ep, int *fds, int *masks, int max, int timeout_ms) {
    struct epoll_event ev[64];
    if (max > 64) max = 64;
    int n = epoll_wait(ep, ev, max, timeout_ms);
    if (n < 0) return 0;
    for (int i = 0; i < n; i++) {
        uint32_t e = ev[i].events;
        fds[i] = ev[i].data.fd;
        masks[i] = (e & (EPOLLIN | EPOLLHUP) ? CURL_CSELECT_IN : 0) | (e & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                   (e & EPOLLERR ? CURL_CSELECT_ERR : 0);
    }
    return n;
}
#endif
