#include "net/curl_library.hpp"

#include <dlfcn.h>

#include <cstring>
#include <optional>

#include <memplan/error.hpp>

namespace memplan::net {
namespace {

constexpr size_t k_max_dlerror_text = 200;

// dlerror()'s text, bounded and on one line.
std::string curl_dlerror() {
  const char* e = dlerror();
  std::string s = e ? std::string(e, strnlen(e, k_max_dlerror_text)) : std::string("unknown error");
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

// Stores dlsym(handle, symbol) in `fn`; false when the library lacks it.
template <class Fn>
bool bind_curl_symbol(void* handle, Fn& fn, const char* symbol) {
  void* address = dlsym(handle, symbol);
  std::memcpy(&fn, &address, sizeof fn);  // object pointer -> function pointer, as POSIX allows
  return address != nullptr;
}

// Binds every function, or names the first one missing.
std::optional<std::string> bind_curl_api(void* handle, CurlApi& api) {
  const std::pair<bool, const char*> bound[] = {
      {bind_curl_symbol(handle, api.global_init, "curl_global_init"), "curl_global_init"},
      {bind_curl_symbol(handle, api.easy_init, "curl_easy_init"), "curl_easy_init"},
      {bind_curl_symbol(handle, api.easy_setopt, "curl_easy_setopt"), "curl_easy_setopt"},
      {bind_curl_symbol(handle, api.easy_perform, "curl_easy_perform"), "curl_easy_perform"},
      {bind_curl_symbol(handle, api.easy_getinfo, "curl_easy_getinfo"), "curl_easy_getinfo"},
      {bind_curl_symbol(handle, api.easy_cleanup, "curl_easy_cleanup"), "curl_easy_cleanup"},
      {bind_curl_symbol(handle, api.easy_strerror, "curl_easy_strerror"), "curl_easy_strerror"},
      {bind_curl_symbol(handle, api.slist_append, "curl_slist_append"), "curl_slist_append"},
      {bind_curl_symbol(handle, api.slist_free_all, "curl_slist_free_all"), "curl_slist_free_all"}};
  for (const auto& [ok, symbol] : bound)
    if (!ok) return std::string(symbol);
  return std::nullopt;
}

// The process's library, or why it could not be had.
struct LoadedCurl {
  CurlApi api;
  std::string error;  // empty when loaded
};

LoadedCurl load_process_curl() {
  LoadedCurl loaded;
  try {
    loaded.api = load_curl_library(default_curl_library_names());
  } catch (const Error& e) {
    loaded.error = e.message();
    return loaded;
  }
  if (loaded.api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) loaded.error = "libcurl could not start";
  return loaded;
}

}  // namespace

const std::vector<std::string>& default_curl_library_names() {
  static const std::vector<std::string> names = {"libcurl.so.4", "libcurl.so"};
  return names;
}

CurlApi load_curl_library(const std::vector<std::string>& names) {
  std::string tried;
  for (const std::string& name : names) {
    if (!tried.empty()) tried += "; ";
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += curl_dlerror();
      continue;
    }
    CurlApi api;
    if (const std::optional<std::string> missing = bind_curl_api(handle, api)) {
      tried += name + ": no " + *missing + " (not libcurl 7.x/8.x?)";
      dlclose(handle);
      continue;
    }
    return api;  // the handle stays open: the process calls into it until it exits
  }
  throw Error("network", "libcurl, which fetches Hub models, could not be loaded (tried " + tried +
                             "); install libcurl4 or pass a local config.json/path");
}

const CurlApi& curl_library() {
  static const LoadedCurl loaded = load_process_curl();  // once, thread-safe (C++11 static init)
  if (!loaded.error.empty()) throw Error("network", loaded.error);
  return loaded.api;
}

}  // namespace memplan::net
