// A minimal application built against an installed bloomkv: it uses only the
// public headers and exits non-zero if the library misbehaves.
#include <bloomkv/bloom_filter.h>
#include <bloomkv/db.h>
#include <bloomkv/version.h>

#include <cstdio>
#include <memory>
#include <string>

// The public headers ask for C++17 only: the consumer's own build (CMake with
// CMAKE_CXX_STANDARD 17, or -std=c++17) must not be raised to C++20.
static_assert(__cplusplus == 201703L, "consumer is not built as C++17");

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer DB_DIR\n");
    return 2;
  }
  const std::string headers = std::to_string(BLOOMKV_VERSION_MAJOR) + "." +
                              std::to_string(BLOOMKV_VERSION_MINOR) + "." +
                              std::to_string(BLOOMKV_VERSION_PATCH);
  if (headers != bloomkv::VersionString()) {
    std::fprintf(stderr, "headers are %s, library is %s\n", headers.c_str(),
                 bloomkv::VersionString());
    return 1;
  }
  bloomkv::BloomFilter filter = bloomkv::BloomFilter::ForCapacity(1000, 0.01);
  filter.Add("aZ3kQ9x");
  if (!filter.MightContain("aZ3kQ9x")) {
    std::fprintf(stderr, "bloom filter lost a key\n");
    return 1;
  }

  bloomkv::Options options;
  options.create_if_missing = true;
  std::unique_ptr<bloomkv::DB> db;
  bloomkv::Status s = bloomkv::DB::Open(options, argv[1], &db);
  if (s.ok())
    s = db->Put(bloomkv::WriteOptions(), "aZ3kQ9x", "https://example.com/");
  if (s.ok()) s = db->Flush();
  std::string url;
  if (s.ok()) s = db->Get(bloomkv::ReadOptions(), "aZ3kQ9x", &url);
  if (!s.ok() || url != "https://example.com/") {
    std::fprintf(stderr, "database round trip failed: %s\n",
                 s.ToString().c_str());
    return 1;
  }
  if (!db->Get(bloomkv::ReadOptions(), "zzzzzzz", &url).IsNotFound()) {
    std::fprintf(stderr, "absent key found\n");
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
