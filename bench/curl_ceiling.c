/* The libcurl ceiling: how fast bare libcurl (multi interface, HTTP/2, one connection, client certificate)
 * sends APNs-shaped POSTs to the simulator on this machine, with no registry, no bookkeeping and no Swift.
 * It reuses easy handles, adds them in batches and drives curl_multi_perform/curl_multi_poll (the default), or
 * with --socket-action curl_multi_socket_action from an epoll loop of its own (CURLMOPT_SOCKETFUNCTION and
 * CURLMOPT_TIMERFUNCTION), as pushctl does, so pushctl's rate and CPU can be read against what libcurl itself
 * allows either way. Each request carries
 * the headers `pushctl broadcast --expiration 0` sends: its own apns-id (a UUID), apns-push-type, apns-priority,
 * apns-topic, apns-expiration, apns-collapse-id (the broadcast id), content-type — so the two compare like with
 * like.
 *
 *   cc -O2 -o curl_ceiling bench/curl_ceiling.c -lcurl
 *   ./curl_ceiling [--socket-action] https://localhost:PORT CERTDIR COUNT [WINDOW] [BATCH] [COLLAPSE_ID] [CONNECTIONS]
 *
 * CONNECTIONS (default 1) is CURLMOPT_MAX_HOST_CONNECTIONS: with up to 1000 streams each, a WINDOW of 2000 runs on
 * two connections, as pushctl's `connections: 2` with a window of 1000 each.
 * CERTDIR holds client.pem, client.key and ca.pem (pushctl cert make-dev). Prints one line:
 *   curl_ceiling: N sent, N answered 200 in S s (R/s), CPU C s (U us per request), libcurl VERSION, MODE
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

/* --socket-action: the epoll set libcurl's sockets are watched in, and libcurl's timer (ms, -1 for none). */
static int ep = -1;
static long timer_due_ms = -1;

static long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int on_socket(CURL *e, curl_socket_t fd, int what, void *user, void *sockp) {
    (void)e; (void)user; (void)sockp;
    if (what == CURL_POLL_REMOVE) { epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL); return 0; }
    struct epoll_event ev = {0};
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    ev.data.fd = fd;
    if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) != 0) epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *user) {
    (void)m; (void)user;
    timer_due_ms = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    return 0;
}

/* One wake-up of the socket-action loop: wait for a socket or the timer (at most 100 ms), act on what fired. */
static void socket_action_step(CURLM *multi) {
    int running = 0, timeout = 100;
    if (timer_due_ms >= 0) { long left = timer_due_ms - now_ms(); timeout = left < 0 ? 0 : left < timeout ? (int)left : timeout; }
    struct epoll_event ev[64];
    int n = epoll_wait(ep, ev, 64, timeout);
    for (int i = 0; i < n; i++) {
        int mask = (ev[i].events & (EPOLLIN | EPOLLHUP) ? CURL_CSELECT_IN : 0) | (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                   (ev[i].events & EPOLLERR ? CURL_CSELECT_ERR : 0);
        curl_multi_socket_action(multi, ev[i].data.fd, mask, &running);
    }
    if (timer_due_ms >= 0 && timer_due_ms <= now_ms()) {
        timer_due_ms = -1;
        curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

static size_t discard(char *p, size_t size, size_t n, void *user) { (void)p; (void)user; return size * n; }

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int socket_action = argc > 1 && strcmp(argv[1], "--socket-action") == 0;
    if (socket_action) { argv[1] = argv[0]; argv++; argc--; }
    if (argc < 4) {
        fprintf(stderr, "usage: %s [--socket-action] https://host:port CERTDIR COUNT [WINDOW=500] [BATCH=100] [COLLAPSE_ID=bench] [CONNECTIONS=1]\n", argv[0]);
        return 2;
    }
    const char *base = argv[1], *dir = argv[2];
    long count = atol(argv[3]);
    int window = argc > 4 ? atoi(argv[4]) : 500, batch = argc > 5 ? atoi(argv[5]) : 100;
    const char *collapse = argc > 6 ? argv[6] : "bench";
    long connections = argc > 7 ? atol(argv[7]) : 1;
    if (count <= 0 || window <= 0 || batch <= 0 || batch > window || connections <= 0) { fprintf(stderr, "bad numbers\n"); return 2; }
    char cert[1024], key[1024], ca[1024], url[256];
    snprintf(cert, sizeof cert, "%s/client.pem", dir);
    snprintf(key, sizeof key, "%s/client.key", dir);
    snprintf(ca, sizeof ca, "%s/ca.pem", dir);

    curl_global_init(CURL_GLOBAL_ALL);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, connections);
    if (socket_action) {
        ep = epoll_create1(EPOLL_CLOEXEC);
        curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
        curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
    }
    /* The headers every request shares (pushctl builds this list once per broadcast too); each handle chains its
     * own apns-id line in front of it. */
    char collapse_line[128];
    snprintf(collapse_line, sizeof collapse_line, "apns-collapse-id: %s", collapse);
    struct curl_slist *headers = NULL;
    headers = curl_slist_append(headers, "apns-push-type: alert");
    headers = curl_slist_append(headers, "apns-priority: 10");
    headers = curl_slist_append(headers, "apns-topic: com.example.bench");
    headers = curl_slist_append(headers, "apns-expiration: 0");
    headers = curl_slist_append(headers, collapse_line);
    headers = curl_slist_append(headers, "content-type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    const char *payload = "{\"aps\":{\"alert\":\"Benchmark digest\",\"sound\":\"default\"}}";

    CURL **pool = calloc((size_t)window, sizeof(CURL *));
    /* One apns-id list node per handle (its line rewritten per request), as pushctl keeps one per handle. */
    struct curl_slist *ids = calloc((size_t)window, sizeof(struct curl_slist));
    char (*id_lines)[64] = calloc((size_t)window, 64);
    int handles = 0;
    int pooled = 0, active = 0, running = 0;
    long started = 0, done = 0, ok = 0;
    double t0 = seconds(CLOCK_MONOTONIC);
    while (done < count) {
        /* Add in batches: every curl_multi_perform pass costs, so give each pass many new transfers. */
        if (window - active >= batch || started + (window - active) >= count) {
            while (active < window && started < count) {
                CURL *e = pooled > 0 ? pool[--pooled] : NULL;
                if (!e) {
                    e = curl_easy_init();
                    ids[handles].data = id_lines[handles];
                    ids[handles].next = headers;
                    curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)&ids[handles]);
                    handles++;
                    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
                    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
                    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 1024L);
                    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
                    curl_easy_setopt(e, CURLOPT_SSLCERT, cert);
                    curl_easy_setopt(e, CURLOPT_SSLKEY, key);
                    curl_easy_setopt(e, CURLOPT_CAINFO, ca);
                    curl_easy_setopt(e, CURLOPT_POST, 1L);
                    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
                    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, discard);
                    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 30000L);
                }
                struct curl_slist *id = NULL;
                curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&id);
                unsigned long n = (unsigned long)started + 1;
                snprintf(id->data, 64, "apns-id: %08lx-%04lx-4%03lx-8%03lx-%012lx", n & 0xffffffffUL, (n >> 32) & 0xffff,
                         n & 0xfff, (n >> 12) & 0xfff, n * 2654435761UL & 0xffffffffffffUL);
                curl_easy_setopt(e, CURLOPT_HTTPHEADER, id);
                snprintf(url, sizeof url, "%s/3/device/%064lx", base, n);
                curl_easy_setopt(e, CURLOPT_URL, url);
                curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(payload));
                curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, payload);
                curl_multi_add_handle(multi, e);
                active++;
                started++;
            }
        }
        if (socket_action) {
            socket_action_step(multi);
        } else {
            curl_multi_poll(multi, NULL, 0, 100, NULL);
            curl_multi_perform(multi, &running);
        }
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(multi, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            long status = 0;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
            if (status == 200) ok++;
            curl_multi_remove_handle(multi, msg->easy_handle);
            pool[pooled++] = msg->easy_handle;
            active--;
            done++;
        }
    }
    double wall = seconds(CLOCK_MONOTONIC) - t0, cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
    printf("curl_ceiling: %ld sent, %ld answered 200 in %.2f s (%.0f/s), CPU %.2f s (%.1f us per request), libcurl %s, %s\n",
           count, ok, wall, (double)count / wall, cpu, cpu / (double)count * 1e6, curl_version_info(CURLVERSION_NOW)->version,
           socket_action ? "socket-action" : "perform");
    for (int i = 0; i < pooled; i++) curl_easy_cleanup(pool[i]);
    free(pool);
    free(ids);
    free(id_lines);
    curl_slist_free_all(headers);
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    return ok == count ? 0 : 1;
}
