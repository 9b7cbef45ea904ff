/* The libcurl ceiling: how fast bare libcurl (multi interface, HTTP/2, one connection, client certificate)
 * sends APNs-shaped POSTs to the simulator on this machine, with no registry, no bookkeeping and no Swift.
 * It reuses easy handles, adds them in batches and drives curl_multi_perform/curl_multi_poll — the cheapest
 * pattern measured — so pushctl's rate can be read against what libcurl itself allows. Each request carries
 * the headers `pushctl broadcast --expiration 0` sends: its own apns-id (a UUID), apns-push-type, apns-priority,
 * apns-topic, apns-expiration, apns-collapse-id (the broadcast id), content-type — so the two compare like with
 * like.
 *
 *   cc -O2 -o curl_ceiling bench/curl_ceiling.c -lcurl
 *   ./curl_ceiling https://localhost:PORT CERTDIR COUNT [WINDOW] [BATCH] [COLLAPSE_ID]
 *
 * CERTDIR holds client.pem, client.key and ca.pem (pushctl cert make-dev). Prints one line:
 *   curl_ceiling: N sent, N answered 200 in S s (R/s), CPU C s (U us per request), libcurl VERSION
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t discard(char *p, size_t size, size_t n, void *user) { (void)p; (void)user; return size * n; }

static double seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s https://host:port CERTDIR COUNT [WINDOW=500] [BATCH=100] [COLLAPSE_ID=bench]\n", argv[0]);
        return 2;
    }
    const char *base = argv[1], *dir = argv[2];
    long count = atol(argv[3]);
    int window = argc > 4 ? atoi(argv[4]) : 500, batch = argc > 5 ? atoi(argv[5]) : 100;
    const char *collapse = argc > 6 ? argv[6] : "bench";
    if (count <= 0 || window <= 0 || batch <= 0 || batch > window) { fprintf(stderr, "bad numbers\n"); return 2; }
    char cert[1024], key[1024], ca[1024], url[256];
    snprintf(cert, sizeof cert, "%s/client.pem", dir);
    snprintf(key, sizeof key, "%s/client.key", dir);
    snprintf(ca, sizeof ca, "%s/ca.pem", dir);

    curl_global_init(CURL_GLOBAL_ALL);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1L);
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
        curl_multi_poll(multi, NULL, 0, 100, NULL);
        curl_multi_perform(multi, &running);
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
    printf("curl_ceiling: %ld sent, %ld answered 200 in %.2f s (%.0f/s), CPU %.2f s (%.1f us per request), libcurl %s\n",
           count, ok, wall, (double)count / wall, cpu, cpu / (double)count * 1e6, curl_version_info(CURLVERSION_NOW)->version);
    for (int i = 0; i < pooled; i++) curl_easy_cleanup(pool[i]);
    free(pool);
    free(ids);
    free(id_lines);
    curl_slist_free_all(headers);
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    return ok == count ? 0 : 1;
}
