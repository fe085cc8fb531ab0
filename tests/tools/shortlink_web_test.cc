// The web page and the OpenAPI document of shortlinkd (web_assets.h):
// served with their types, security and caching headers; the page refers
// only to what the binary serves and needs nothing the CSP forbids; the
// document is valid JSON that describes exactly the routes the Service
// answers. The browser test of the page itself is scripts/web-test.sh.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/testutil/test_util.h"
#include "tools/shortlink/link_store.h"
#include "tools/shortlink/metrics.h"
#include "tools/shortlink/service.h"
#include "tools/shortlink/web_assets.h"

extern char** environ;

namespace shortlink {
namespace BLOOMKV_FILE_NAMESPACE {  // file-local (bloomkv_unity_build)

using nlohmann::json;

constexpr char kToken[] = "web-test-token";

class WebTest : public testing::Test {
 protected:
  void SetUp() override {
    LinkStoreOptions options;
    options.block_cache_bytes = 0;
    ASSERT_TRUE(LinkStore::Open(options, dir_.File("db"), &store_).ok());
    ServiceOptions service_options;
    service_options.admin_token = kToken;
    service_ = std::make_unique<Service>(store_.get(), service_options);
  }

  HttpResponse Send(
      std::string method, std::string path,
      std::vector<std::pair<std::string, std::string>> headers = {},
      std::string body = "") {
    HttpRequest req;
    req.method = std::move(method);
    req.path = std::move(path);
    req.headers = std::move(headers);
    req.body = std::move(body);
    HttpResponse res;
    service_->Handle(req, &res);
    return res;
  }

  static std::string Header(const HttpResponse& res, std::string_view name) {
    for (const auto& [n, v] : res.headers) {
      if (EqualsIgnoreCase(n, name)) return v;
    }
    return "";
  }

  bloomkv::test::TempDir dir_{"shortlink_web"};
  std::unique_ptr<LinkStore> store_;
  std::unique_ptr<Service> service_;
};

struct Expected {
  const char* path;
  const char* content_type;
};
constexpr Expected kExpected[] = {
    {"/", "text/html; charset=utf-8"},
    {"/app.js", "text/javascript; charset=utf-8"},
    {"/app.css", "text/css; charset=utf-8"},
    {"/openapi.json", "application/json"},
};

TEST_F(WebTest, AssetsAreServedWithTheirTypesAndHeaders) {
  ASSERT_EQ(std::size(kExpected), WebAssets().size());
  for (const Expected& e : kExpected) {
    for (const char* method : {"GET", "HEAD"}) {
      SCOPED_TRACE(std::string(method) + " " + e.path);
      const HttpResponse res = Send(method, e.path);
      EXPECT_EQ(200, res.status);
      EXPECT_EQ(e.content_type, res.content_type);
      EXPECT_GT(res.body.size(), 100u);
      const std::string csp = Header(res, "Content-Security-Policy");
      EXPECT_NE(std::string::npos, csp.find("default-src 'self'")) << csp;
      EXPECT_EQ(std::string::npos, csp.find("unsafe-inline")) << csp;
      EXPECT_EQ(std::string::npos, csp.find("unsafe-eval")) << csp;
      EXPECT_EQ("nosniff", Header(res, "X-Content-Type-Options"));
      EXPECT_EQ("no-referrer", Header(res, "Referrer-Policy"));
      EXPECT_EQ("no-cache", Header(res, "Cache-Control"));
      EXPECT_TRUE(
          std::regex_match(Header(res, "ETag"), std::regex("\"[0-9a-f]{16}\"")))
          << Header(res, "ETag");
    }
  }
  // The tags tell the assets apart.
  std::set<std::string> etags;
  for (const WebAsset& a : WebAssets()) etags.insert(a.etag);
  EXPECT_EQ(WebAssets().size(), etags.size());
  // Other methods are not served.
  EXPECT_EQ(405, Send("POST", "/").status);
  EXPECT_EQ(405, Send("DELETE", "/app.js").status);
}

TEST_F(WebTest, MatchingIfNoneMatchIs304WithoutBody) {
  for (const WebAsset& asset : WebAssets()) {
    SCOPED_TRACE(std::string(asset.path));
    const std::string etag = asset.etag;
    struct Case {
      std::string if_none_match;
      int status;
    };
    const std::vector<Case> cases = {
        {etag, 304},
        {"W/" + etag, 304},
        {"\"other\", " + etag, 304},
        {"*", 304},
        {"\"other\"", 200},
        {etag.substr(0, etag.size() - 2) + "\"", 200},
        {"", 200},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE("If-None-Match: " + c.if_none_match);
      const HttpResponse res = Send("GET", std::string(asset.path),
                                    {{"If-None-Match", c.if_none_match}});
      EXPECT_EQ(c.status, res.status);
      EXPECT_EQ(etag, Header(res, "ETag"));
      EXPECT_EQ("nosniff", Header(res, "X-Content-Type-Options"));
      if (c.status == 304) {
        EXPECT_TRUE(res.body.empty());
      }
    }
  }
}

// What the CSP forbids would silently break the page in a browser.
TEST_F(WebTest, PageRefersOnlyToServedAssetsAndNeedsNothingInline) {
  const std::string html(FindWebAsset("/")->body);
  const std::regex ref(R"re((src|href)\s*=\s*"([^"]*)")re");
  int local_refs = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), ref);
       it != std::sregex_iterator(); ++it) {
    const std::string target = (*it)[2];
    SCOPED_TRACE(target);
    if (target == "#") continue;  // filled in by the script
    ASSERT_TRUE(target.starts_with("/") && !target.starts_with("//"))
        << "external or relative reference";
    EXPECT_NE(nullptr, FindWebAsset(target)) << "not served";
    local_refs++;
  }
  EXPECT_EQ(3, local_refs);  // app.css, app.js, openapi.json
  // Every script is an external one; no inline style or event handler.
  const std::regex script(R"(<script\b[^>]*>)");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), script);
       it != std::sregex_iterator(); ++it) {
    EXPECT_NE(std::string::npos, it->str().find("src=")) << it->str();
  }
  EXPECT_EQ(std::string::npos, html.find("<style"));
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(\sstyle\s*=)")));
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(\son[a-z]+\s*=)")));
  // Every element the script looks up by id exists in the page.
  const std::string js(FindWebAsset("/app.js")->body);
  const std::regex lookup(R"re(\$\("([a-z-]+)"\))re");
  int ids = 0;
  for (auto it = std::sregex_iterator(js.begin(), js.end(), lookup);
       it != std::sregex_iterator(); ++it) {
    EXPECT_NE(std::string::npos, html.find("id=\"" + (*it)[1].str() + "\""))
        << "app.js uses a missing element #" << (*it)[1];
    ids++;
  }
  EXPECT_GT(ids, 10);
  // Every input has a label.
  const std::regex input(R"re(<(input|select)\b[^>]*\bid="([^"]+)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), input);
       it != std::sregex_iterator(); ++it) {
    EXPECT_NE(std::string::npos,
              html.find("<label for=\"" + (*it)[2].str() + "\""))
        << "no label for #" << (*it)[2];
  }
}

TEST_F(WebTest, AssetNamesCanNeverBeAliases) {
  for (const WebAsset& asset : WebAssets()) {
    if (asset.path == "/") continue;
    const std::string alias(asset.path.substr(1));
    SCOPED_TRACE(alias);
    const HttpResponse res =
        Send("POST", "/api/links", {{"Content-Type", "application/json"}},
             json{{"url", "https://example.com/"}, {"alias", alias}}.dump());
    EXPECT_EQ(400, res.status) << res.body;
    EXPECT_EQ(200, Send("GET", std::string(asset.path)).status);
  }
}

TEST(WebMetricsTest, PageAndDocumentHaveTheirOwnRouteClasses) {
  EXPECT_EQ(Route::kPage, ClassifyRoute("GET", "/"));
  EXPECT_EQ(Route::kPage, ClassifyRoute("GET", "/app.js"));
  EXPECT_EQ(Route::kPage, ClassifyRoute("HEAD", "/app.css"));
  EXPECT_EQ(Route::kOpenapi, ClassifyRoute("GET", "/openapi.json"));
  EXPECT_EQ(Route::kRedirect, ClassifyRoute("GET", "/abc1234"));
  EXPECT_STREQ("page", RouteName(Route::kPage));
  EXPECT_STREQ("openapi", RouteName(Route::kOpenapi));
}

// ---- the OpenAPI document ---------------------------------------------

json Document() { return json::parse(FindWebAsset("/openapi.json")->body); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(c));
  return out;
}

// Every "$ref" in `j` names something in `doc`.
void CheckRefs(const json& doc, const json& j, const std::string& where) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "$ref") {
        ASSERT_TRUE(value.is_string()) << where;
        const std::string ref = value.get<std::string>();
        ASSERT_TRUE(ref.starts_with("#/")) << where << ": " << ref;
        EXPECT_TRUE(doc.contains(json::json_pointer(ref.substr(1))))
            << where << ": dangling " << ref;
      } else {
        CheckRefs(doc, value, where + "/" + key);
      }
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); i++) {
      CheckRefs(doc, j[i], where + "/" + std::to_string(i));
    }
  }
}

TEST(OpenApiTest, DocumentIsOpenApi30WithResolvableReferences) {
  const json doc = Document();
  ASSERT_TRUE(doc["openapi"].get<std::string>().starts_with("3.0."));
  EXPECT_TRUE(doc["info"]["title"].is_string());
  EXPECT_TRUE(doc["info"]["version"].is_string());
  CheckRefs(doc, doc, "");
  const json& schemes = doc["components"]["securitySchemes"];
  for (const char* name : {"adminToken", "apiKey"}) {
    EXPECT_EQ("http", schemes[name]["type"]) << name;
    EXPECT_EQ("bearer", schemes[name]["scheme"]) << name;
  }
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      if (method == "parameters") continue;
      SCOPED_TRACE(method + " " + path);
      ASSERT_TRUE(op.contains("responses"));
      EXPECT_FALSE(op["responses"].empty());
      for (const auto& [status, response] : op["responses"].items()) {
        EXPECT_TRUE(std::regex_match(status, std::regex("[1-5][0-9][0-9]")));
        EXPECT_TRUE(response.contains("description") ||
                    response.contains("$ref"));
      }
      if (op.contains("security")) {
        for (const json& requirement : op["security"]) {
          for (const auto& [scheme, scopes] : requirement.items()) {
            EXPECT_TRUE(schemes.contains(scheme)) << scheme;
          }
        }
      }
      // Every {parameter} of the path is declared.
      const std::regex param(R"(\{([a-z_]+)\})");
      for (auto it = std::sregex_iterator(path.begin(), path.end(), param);
           it != std::sregex_iterator(); ++it) {
        bool declared = false;
        json params = item.value("parameters", json::array());
        for (const json& p : op.value("parameters", json::array())) {
          params.push_back(p);
        }
        for (json p : params) {
          if (p.contains("$ref")) {
            p = doc[json::json_pointer(p["$ref"].get<std::string>().substr(1))];
          }
          declared |= p["in"] == "path" && p["name"] == (*it)[1].str();
        }
        EXPECT_TRUE(declared) << (*it)[1];
      }
    }
  }
}

TEST(OpenApiTest, DocumentDescribesExactlyTheServiceRoutes) {
  const json doc = Document();
  std::set<std::string> documented, listed;
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [method, op] : item.items()) {
      if (method != "parameters") documented.insert(method + " " + path);
    }
  }
  for (const RouteSpec& r : ServiceRoutes()) {
    listed.insert(Lower(r.method) + " " + std::string(r.path));
  }
  EXPECT_EQ(listed, documented);
}

// The path of the route in ServiceRoutes() that answers `method` `path`:
// a path without parameters before one with ("/metrics" before "/{code}"),
// as in OpenAPI. Empty if there is none.
std::string ListedRoute(std::string_view method, const std::string& path) {
  if (method == "HEAD") method = "GET";
  std::string found;
  for (const RouteSpec& r : ServiceRoutes()) {
    if (r.method != method) continue;
    if (r.path == path) return path;
    const std::string pattern = std::regex_replace(
        std::string(r.path), std::regex(R"(\{[a-z_]+\})"), "[^/]*");
    if (std::regex_match(path, std::regex(pattern))) found = r.path;
  }
  return found;
}

// A route added to Service::Route without its entry in ServiceRoutes() (and
// so in the document) fails here: every request is sent with every method,
// and all but the listed ones must fall through to the final "not found",
// or to 405 with the listed methods of the path in Allow, or (a method no
// listed route has) to 501.
TEST_F(WebTest, EveryAnsweredRequestIsAListedRoute) {
  // The routes' and the document's paths, and paths a new route might take.
  std::set<std::string> templates = {
      "/api",
      "/api/",
      "/api/links/",
      "/api/links/a/b",
      "/api/keys",
      "/api/stats",
      "/api/links/{code}/clicks",
      "/admin",
      "/admin/",
      "/admin/other",
      "/static/x",
      "/docs",
      "/openapi.yaml",
      "/index.html",
      "/favicon.ico",
      "/robots.txt",
      "/version",
      "/readyz",
      "/stats",
      "/a/b",
  };
  for (const RouteSpec& r : ServiceRoutes()) templates.emplace(r.path);
  const json doc = Document();
  for (const auto& [path, item] : doc["paths"].items()) templates.insert(path);
  std::set<std::string> paths;
  for (const std::string& t : templates) {
    paths.insert(
        std::regex_replace(t, std::regex(R"(\{[a-z_]+\})"), "abc1234"));
  }
  const std::vector<std::string> methods = {
      "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"};
  int answered = 0;
  for (const std::string& path : paths) {
    for (const std::string& method : methods) {
      for (bool authorized : {false, true}) {
        SCOPED_TRACE(method + " " + path +
                     (authorized ? " with the admin token" : ""));
        std::vector<std::pair<std::string, std::string>> headers = {
            {"Content-Type", "application/json"}};
        if (authorized) {
          headers.emplace_back("Authorization",
                               std::string("Bearer ") + kToken);
        }
        const HttpResponse res =
            Send(method, path, headers, R"({"url": "https://example.com/"})");
        const bool fell_through =
            res.status == 404 && json::parse(res.body, nullptr, false) ==
                                     json{{"error", "not found"}};
        if (fell_through) continue;
        if (res.status == 501) {
          for (const RouteSpec& r : ServiceRoutes()) {
            EXPECT_NE(r.method, method == "HEAD" ? "GET" : method)
                << "501 for a method of a listed route";
          }
          continue;
        }
        if (res.status == 405) {
          EXPECT_EQ("", ListedRoute(method, path)) << res.body;
          std::string allow;
          for (const char* m : {"GET", "HEAD", "POST", "PATCH", "DELETE"}) {
            if (ListedRoute(m, path).empty()) continue;
            allow += (allow.empty() ? "" : ", ") + std::string(m);
          }
          EXPECT_EQ(allow, Header(res, "Allow"));
          continue;
        }
        answered++;
        const std::string route = ListedRoute(method, path);
        EXPECT_NE("", route) << "answered " << res.status << " " << res.body
                             << " but not in ServiceRoutes() and openapi.json";
        if (route == "/{code}") {
          // No link exists with a code among these paths, so anything but
          // "no such link" is some other route's answer.
          EXPECT_EQ(404, res.status) << res.body;
          EXPECT_EQ(json({{"error", "no such link"}}),
                    json::parse(res.body, nullptr, false))
              << "a route not in ServiceRoutes() and openapi.json";
        }
      }
    }
  }
  EXPECT_GT(answered, 20);
}

// ---- through the real server --------------------------------------------

// The raw answer to `request` from a server on `port`.
std::string Exchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) answer.append(buf, n);
  }
  close(fd);
  return answer;
}

// A 304 through the real server has the headers, no body and no
// Content-Length (which would have to be the full body's); the connection
// stays usable for the next request.
TEST(WebServerTest, ConditionalRequestsThroughTheServer) {
#ifdef SHORTLINKD_PATH
  bloomkv::test::TempDir dir("shortlink_web_server");
  const std::string port_file = dir.File("port");
  std::vector<std::string> args = {SHORTLINKD_PATH,
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--port-file",
                                   port_file,
                                   "--data",
                                   dir.File("data"),
                                   "--compact-interval",
                                   "0",
                                   "--block-cache-mb",
                                   "0",
                                   "--threads",
                                   "2"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = dir.File("server.log");
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  ASSERT_EQ(
      0, posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ));
  posix_spawn_file_actions_destroy(&actions);
  struct KillOnExit {  // if an assertion ends the test early
    pid_t pid;
    ~KillOnExit() {
      if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  } guard{pid};
  int port = 0;
  for (int i = 0; i < 1000 && port == 0; i++) {
    std::ifstream in(port_file);
    if (!(in >> port)) port = 0;
    if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(0, port);

  const std::string etag = FindWebAsset("/app.js")->etag;
  const std::string answer = Exchange(
      port,
      "GET /app.js HTTP/1.1\r\nHost: h\r\nIf-None-Match: " + etag +
          "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  const size_t second = answer.find("HTTP/1.1 200 OK\r\n");
  ASSERT_NE(std::string::npos, second) << answer;
  const std::string first = answer.substr(0, second);
  EXPECT_TRUE(first.starts_with("HTTP/1.1 304 Not Modified\r\n")) << first;
  EXPECT_TRUE(first.ends_with("\r\n\r\n")) << first;
  EXPECT_NE(std::string::npos, first.find("ETag: " + etag + "\r\n")) << first;
  EXPECT_EQ(std::string::npos, first.find("Content-Length")) << first;
  const std::string page = answer.substr(second);
  EXPECT_NE(std::string::npos,
            page.find("Content-Type: text/html; charset=utf-8\r\n"));
  EXPECT_NE(std::string::npos,
            page.find("Content-Length: " +
                      std::to_string(FindWebAsset("/")->body.size()) + "\r\n"));
  EXPECT_TRUE(page.ends_with(std::string(FindWebAsset("/")->body)));

  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  guard.pid = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#else
  GTEST_SKIP() << "SHORTLINKD_PATH not defined";
#endif
}

}  // namespace
}  // namespace shortlink
