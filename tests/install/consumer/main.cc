// A minimal application built against an installed bloomkv: it uses only the
// public headers and exits non-zero if the library misbehaves.
#include <bloomkv/bloom_filter.h>
#include <bloomkv/status.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  (void)argc;
  (void)argv;
  bloomkv::BloomFilter filter = bloomkv::BloomFilter::ForCapacity(1000, 0.01);
  filter.Add("aZ3kQ9x");
  if (!filter.MightContain("aZ3kQ9x")) {
    std::fprintf(stderr, "bloom filter lost a key\n");
    return 1;
  }
  std::string bytes;
  filter.Serialize(&bytes);
  bloomkv::BloomFilter copy;
  bloomkv::Status s = bloomkv::BloomFilter::Deserialize(bytes, &copy);
  if (!s.ok() || !copy.MightContain("aZ3kQ9x")) {
    std::fprintf(stderr, "round trip failed: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
