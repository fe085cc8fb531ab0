// What a hit would pay to decompress its value if values were compressed
// one by one against a dictionary taken from the segment's own values,
// instead of in 4 KiB blocks: kvbench's short-link URLs, compressed as
// bloomkv compresses data blocks today (LZ4, a block of about 4 KiB) and
// one by one with LZ4 against the first values up to 4, 8 or 16 KiB. The
// counter `ratio` is compressed bytes over raw bytes (a one-byte length
// per value included); times are per 4 KiB block or per value.
//
// LZ4_attach_dictionary, which lets every value start from the prepared
// dictionary without copying it, is in LZ4's static-only API: Debian's
// shared liblz4 does not export it, so this benchmark links liblz4.a and
// is built only where that archive is found. The library compresses
// values through the frame API's CDict instead (table/value_codec.cc),
// measured here too.
//
//   build/release/bench/value_dictionary_bench --benchmark_min_time=1
#define LZ4_STATIC_LINKING_ONLY
#include <benchmark/benchmark.h>
#include <lz4.h>
#define LZ4F_STATIC_LINKING_ONLY
#include <lz4frame.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench/kvbench/generators.h"

namespace {

using bloomkv::bench::ShortCodeSet;
using bloomkv::bench::UrlGenerator;

const std::vector<std::string>& Urls() {
  static const std::vector<std::string>* urls = [] {
    ShortCodeSet codes;
    codes.Issue(100000, 1);
    const UrlGenerator gen(1, 40, 120);
    auto* v = new std::vector<std::string>;
    for (size_t i = 0; i < codes.size(); i++) {
      v->push_back(gen.Url(codes.code(i), 0));
    }
    return v;
  }();
  return *urls;
}

size_t RawBytes() {
  size_t n = 0;
  for (const std::string& u : Urls()) n += u.size();
  return n;
}

// The URLs in blocks of about 4 KiB, as a segment's data blocks hold them.
std::vector<std::string> Blocks() {
  std::vector<std::string> blocks(1);
  for (const std::string& u : Urls()) {
    if (blocks.back().size() >= 4096) blocks.emplace_back();
    blocks.back() += u;
  }
  return blocks;
}

void BM_BlockCompress(benchmark::State& state) {
  const std::vector<std::string> blocks = Blocks();
  std::string out(LZ4_compressBound(8192), '\0');
  size_t i = 0, compressed = 0;
  for (auto _ : state) {
    const std::string& b = blocks[i++ % blocks.size()];
    const int n =
        LZ4_compress_default(b.data(), out.data(), static_cast<int>(b.size()),
                             static_cast<int>(out.size()));
    if (i <= blocks.size()) compressed += static_cast<size_t>(n);
  }
  state.counters["ratio"] =
      static_cast<double>(compressed) / static_cast<double>(RawBytes());
  state.counters["values_per_block"] =
      static_cast<double>(Urls().size()) / static_cast<double>(blocks.size());
}

void BM_BlockDecompress(benchmark::State& state) {
  std::vector<std::string> compressed;
  for (const std::string& b : Blocks()) {
    std::string out(LZ4_compressBound(8192), '\0');
    out.resize(LZ4_compress_default(b.data(), out.data(),
                                    static_cast<int>(b.size()),
                                    static_cast<int>(out.size())));
    compressed.push_back(std::move(out));
  }
  std::string raw(8192, '\0');
  size_t i = 0;
  for (auto _ : state) {
    const std::string& c = compressed[i++ % compressed.size()];
    benchmark::DoNotOptimize(LZ4_decompress_safe(
        c.data(), raw.data(), static_cast<int>(c.size()), 8192));
  }
}

std::string Dictionary(size_t bytes) {
  std::string dict;
  for (const std::string& u : Urls()) {
    if (dict.size() + u.size() > bytes) break;
    dict += u;
  }
  return dict;
}

void BM_ValueCompress(benchmark::State& state) {
  const std::string dict = Dictionary(static_cast<size_t>(state.range(0)));
  LZ4_stream_t* prepared = LZ4_createStream();
  LZ4_loadDict(prepared, dict.data(), static_cast<int>(dict.size()));
  LZ4_stream_t* work = LZ4_createStream();
  char out[512];
  size_t i = 0, compressed = 0;
  for (auto _ : state) {
    const std::string& u = Urls()[i++ % Urls().size()];
    LZ4_resetStream_fast(work);
    LZ4_attach_dictionary(work, prepared);
    const int n = LZ4_compress_fast_continue(
        work, u.data(), out, static_cast<int>(u.size()), sizeof(out), 1);
    if (i <= Urls().size()) compressed += static_cast<size_t>(n) + 1;
  }
  state.counters["ratio"] =
      static_cast<double>(compressed) / static_cast<double>(RawBytes());
  LZ4_freeStream(work);
  LZ4_freeStream(prepared);
}

// The same with the shared library's API only: each value starts from a
// copy of the prepared stream (LZ4_stream_t, about 16 KiB).
void BM_ValueCompressCopyingTheDictionary(benchmark::State& state) {
  const std::string dict = Dictionary(static_cast<size_t>(state.range(0)));
  LZ4_stream_t* prepared = LZ4_createStream();
  LZ4_loadDict(prepared, dict.data(), static_cast<int>(dict.size()));
  LZ4_stream_t* work = LZ4_createStream();
  char out[512];
  size_t i = 0;
  for (auto _ : state) {
    const std::string& u = Urls()[i++ % Urls().size()];
    std::memcpy(work, prepared, sizeof(LZ4_stream_t));
    benchmark::DoNotOptimize(LZ4_compress_fast_continue(
        work, u.data(), out, static_cast<int>(u.size()), sizeof(out), 1));
  }
  LZ4_freeStream(work);
  LZ4_freeStream(prepared);
}


// The same through the shared library's stable frame API: a CDict holds the
// prepared dictionary, each value is compressed as a one-block frame and the
// block is taken out of it (7 header bytes, a 4-byte block length, the
// block, a 4-byte end mark), as a writer would store it.
void BM_ValueCompressFrameCDict(benchmark::State& state) {
  const std::string dict = Dictionary(static_cast<size_t>(state.range(0)));
  LZ4F_CDict* cdict = LZ4F_createCDict(dict.data(), dict.size());
  LZ4F_cctx* cctx = nullptr;
  LZ4F_createCompressionContext(&cctx, LZ4F_VERSION);
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  char out[1024];
  size_t i = 0, compressed = 0, checked = 0;
  for (auto _ : state) {
    const std::string& u = Urls()[i++ % Urls().size()];
    const size_t n = LZ4F_compressFrame_usingCDict(
        cctx, out, sizeof(out), u.data(), u.size(), cdict, &prefs);
    if (i <= Urls().size() && !LZ4F_isError(n)) {
      compressed += n - 15 + 1;
      // Check the block decodes with the plain dictionary API.
      uint32_t len;
      std::memcpy(&len, out + 7, 4);
      char raw[512];
      if ((len & 0x80000000u) == 0 &&
          LZ4_decompress_safe_usingDict(out + 11, raw, static_cast<int>(len),
                                        sizeof(raw), dict.data(),
                                        static_cast<int>(dict.size())) ==
              static_cast<int>(u.size())) {
        checked++;
      }
    }
  }
  state.counters["ratio"] =
      static_cast<double>(compressed) / static_cast<double>(RawBytes());
  state.counters["decoded"] = static_cast<double>(checked);
  LZ4F_freeCompressionContext(cctx);
  LZ4F_freeCDict(cdict);
}

void BM_ValueDecompress(benchmark::State& state) {
  const std::string dict = Dictionary(static_cast<size_t>(state.range(0)));
  LZ4_stream_t* prepared = LZ4_createStream();
  LZ4_loadDict(prepared, dict.data(), static_cast<int>(dict.size()));
  LZ4_stream_t* work = LZ4_createStream();
  std::vector<std::string> compressed;
  for (const std::string& u : Urls()) {
    char out[512];
    LZ4_resetStream_fast(work);
    LZ4_attach_dictionary(work, prepared);
    const int n = LZ4_compress_fast_continue(
        work, u.data(), out, static_cast<int>(u.size()), sizeof(out), 1);
    compressed.emplace_back(out, static_cast<size_t>(n));
  }
  char raw[512];
  size_t i = 0;
  for (auto _ : state) {
    const std::string& c = compressed[i++ % compressed.size()];
    benchmark::DoNotOptimize(LZ4_decompress_safe_usingDict(
        c.data(), raw, static_cast<int>(c.size()), sizeof(raw), dict.data(),
        static_cast<int>(dict.size())));
  }
  LZ4_freeStream(work);
  LZ4_freeStream(prepared);
}

BENCHMARK(BM_BlockCompress);
BENCHMARK(BM_BlockDecompress);
BENCHMARK(BM_ValueCompress)->Arg(4 << 10)->Arg(8 << 10)->Arg(16 << 10);
BENCHMARK(BM_ValueCompressCopyingTheDictionary)->Arg(4 << 10)->Arg(16 << 10);
BENCHMARK(BM_ValueCompressFrameCDict)->Arg(4 << 10)->Arg(16 << 10);
BENCHMARK(BM_ValueDecompress)->Arg(4 << 10)->Arg(8 << 10)->Arg(16 << 10);

}  // namespace

BENCHMARK_MAIN();
