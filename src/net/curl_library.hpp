#pragma once
// libcurl, loaded with dlopen on the first Hub fetch instead of linked: linked, it and the ~35
// libraries it needs (OpenSSL, GnuTLS, Kerberos, LDAP, ...) were loaded and relocated at every start
// of memplan, 14.6 M instructions of a bare `memplan --version` (docs/performance.md). curl's
// headers still give the types and constants at build time; the functions come from dlsym.

#include <curl/curl.h>

#include <string>
#include <vector>

namespace memplan::net {

// The libcurl functions src/net calls, bound from a loaded library.
struct CurlApi {
  CURLcode (*global_init)(long flags) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;  // variadic, as curl declares it
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

// The names tried, in order: the runtime package's soname (libcurl4 on Debian/Ubuntu, libcurl on
// Fedora), then the development link.
const std::vector<std::string>& default_curl_library_names();

// Loads the first of `names` that dlopen opens and that has every CurlApi function; the library
// stays loaded for the process. Throws memplan::Error("network", ...) naming each name tried and
// why, and "install libcurl4 or pass a local config.json/path", on one line.
CurlApi load_curl_library(const std::vector<std::string>& names);

// The process's libcurl: loaded and curl_global_init'ed once, on the first call (thread-safe);
// a failure is kept and thrown again at each call.
const CurlApi& curl_library();

}  // namespace memplan::net
