// libcurl loaded with dlopen (src/net/curl_library.cpp): a name that does not exist and a library
// that is not libcurl give one clear line naming what was tried; the system's libcurl (a build
// dependency, so present here) loads with every function bound.
#ifdef MEMPLAN_HAVE_NET
#include <catch2/catch.hpp>

#include <string>

#include <memplan/error.hpp>
#include "core/base/text.hpp"
#include "net/curl_library.hpp"

#include "hub_test_support.hpp"

using namespace memplan;
using memplan::test::error_or_empty;

TEST_CASE("curl loader: names that do not exist give one line naming each and the way out", "[net][curl]") {
  const std::string e = error_or_empty([] {
    net::load_curl_library({"libmemplan-no-such-curl.so.4", "libmemplan-no-such-curl.so"});
  });
  INFO(e);
  CHECK(e.rfind("network: libcurl, which fetches Hub models, could not be loaded (tried "
                "libmemplan-no-such-curl.so.4: ",
                0) == 0);
  CHECK(e.find("; libmemplan-no-such-curl.so: ") != std::string::npos);
  CHECK(ends_with(e, "); install libcurl4 or pass a local config.json/path"));
  CHECK(e.find('\n') == std::string::npos);
}

TEST_CASE("curl loader: a library that is not libcurl is named with the function it lacks", "[net][curl]") {
  const std::string e = error_or_empty([] { net::load_curl_library({"libm.so.6"}); });
  CHECK(e ==
        "network: libcurl, which fetches Hub models, could not be loaded (tried libm.so.6: no "
        "curl_global_init (not libcurl 7.x/8.x?)); install libcurl4 or pass a local config.json/path");
}

TEST_CASE("curl loader: the system libcurl loads after a missing name, every function bound", "[net][curl]") {
  std::vector<std::string> names = {"libmemplan-no-such-curl.so.4"};
  names.insert(names.end(), net::default_curl_library_names().begin(),
               net::default_curl_library_names().end());
  const net::CurlApi api = net::load_curl_library(names);
  CHECK(api.global_init);
  CHECK(api.easy_init);
  CHECK(api.easy_setopt);
  CHECK(api.easy_perform);
  CHECK(api.easy_getinfo);
  CHECK(api.easy_cleanup);
  CHECK(api.slist_append);
  CHECK(api.slist_free_all);
  REQUIRE(api.easy_strerror);
  CHECK(std::string(api.easy_strerror(CURLE_OK)) == "No error");
  CHECK(&net::curl_library() == &net::curl_library());  // loaded once
}
#endif
