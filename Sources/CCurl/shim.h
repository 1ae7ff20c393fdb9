#ifndef RECLAIM_CCURL_SHIM_H
#define RECLAIM_CCURL_SHIM_H

#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper per argument
   kind, as swift-corelibs-foundation does. Only the Curl module calls these. */

typedef size_t (*reclaim_curl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);

static inline CURLcode reclaim_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reclaim_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reclaim_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reclaim_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reclaim_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reclaim_curl_setopt_callback(CURL *handle, CURLoption option, reclaim_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode reclaim_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

#endif
