// kvtool filter build / query / info / merge: standalone filter files, no
// database involved. A filter file is exactly one encoding as the library
// serializes it (BloomFilter, ScalableBloomFilter, CuckooFilter,
// StaticFilter); the first 8 bytes, the encoding's magic, say which, so
// the commands need no other metadata.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bloomkv/bloom_filter.h"
#include "bloomkv/cuckoo_filter.h"
#include "bloomkv/env.h"
#include "bloomkv/scalable_bloom_filter.h"
#include "bloomkv/static_filter.h"
#include "tools/kvtool/commands.h"
#include "tools/kvtool/exit_codes.h"
#include "tools/kvtool/format.h"
#include "util/blocked_bloom.h"

namespace bloomkv::kvtool {
namespace {

using json = nlohmann::ordered_json;

enum class Kind { kBloom, kScalable, kCuckoo, kFuse };

struct KindName {
  Kind kind;
  const char* name;
  const char* magic;  // of the encoding, 8 bytes
};
constexpr KindName kKinds[] = {
    {Kind::kBloom, "bloom", "BKVBLOOM"},
    {Kind::kScalable, "scalable", "BKVSCALE"},
    {Kind::kCuckoo, "cuckoo", "BKVCUCKO"},
    {Kind::kFuse, "fuse", "BKVSTATF"},
};

const char* Name(Kind kind) {
  for (const KindName& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

// One decoded filter file; only the member of its kind is used.
struct FilterFile {
  Kind kind = Kind::kBloom;
  BloomFilter bloom;
  ScalableBloomFilter scalable;
  CuckooFilter cuckoo;
  StaticFilter fuse;
  uint64_t file_bytes = 0;

  bool MightContain(const Slice& key) const {
    switch (kind) {
      case Kind::kBloom:
        return bloom.MightContain(key);
      case Kind::kScalable:
        return scalable.MightContain(key);
      case Kind::kCuckoo:
        return cuckoo.MightContain(key);
      case Kind::kFuse:
        return fuse.MightContain(key);
    }
    return true;
  }

  void Serialize(std::string* dst) const {
    switch (kind) {
      case Kind::kBloom:
        return bloom.Serialize(dst);
      case Kind::kScalable:
        return scalable.Serialize(dst);
      case Kind::kCuckoo:
        return cuckoo.Serialize(dst);
      case Kind::kFuse:
        return fuse.Serialize(dst);
    }
  }
};

// Reads and decodes `path`: 3 if it is missing or not a filter file, 4 if
// it is damaged (one error line naming the file, what and where).
int ReadFilterFile(std::ostream& err, const std::string& path,
                   FilterFile* out) {
  Env* env = Env::Default();
  if (!env->FileExists(path)) {
    return Fail(err, kExitNotADatabase, path + ": no such file");
  }
  if (env->IsDirectory(path)) {
    return Fail(err, kExitNotADatabase, path + ": is a directory");
  }
  std::string data;
  Status s = ReadFileToString(env, path, &data);
  if (!s.ok()) return Fail(err, kExitIOError, s.ToString());
  out->file_bytes = data.size();
  const KindName* found = nullptr;
  for (const KindName& k : kKinds) {
    if (data.size() >= 8 && std::memcmp(data.data(), k.magic, 8) == 0) {
      found = &k;
    }
  }
  if (found == nullptr) {
    return Fail(err, kExitNotADatabase,
                path + ": not a bloomkv filter file (unknown magic)");
  }
  out->kind = found->kind;
  switch (found->kind) {
    case Kind::kBloom:
      s = BloomFilter::Deserialize(data, &out->bloom);
      break;
    case Kind::kScalable:
      s = ScalableBloomFilter::Deserialize(data, &out->scalable);
      break;
    case Kind::kCuckoo:
      s = CuckooFilter::Deserialize(data, &out->cuckoo);
      break;
    case Kind::kFuse:
      s = StaticFilter::Deserialize(data, &out->fuse);
      break;
  }
  if (!s.ok()) return Fail(err, ExitCodeFor(s), path + ": " + s.ToString());
  return kExitOk;
}

// Writes to a temporary file beside `path`, syncs it and renames it over
// `path`, so that a reader never sees half a filter.
int WriteFilterFile(std::ostream& err, const std::string& path,
                    const FilterFile& filter, uint64_t* bytes) {
  std::string data;
  filter.Serialize(&data);
  *bytes = data.size();
  Env* env = Env::Default();
  const std::string tmp = path + ".tmp";
  Status s = WriteStringToFile(env, data, tmp, /*sync=*/true);
  if (s.ok()) s = env->RenameFile(tmp, path);
  if (!s.ok()) {
    env->RemoveFile(tmp).PermitUncheckedError();
    return Fail(err, kExitIOError, s.ToString());
  }
  return kExitOk;
}

// The lines of `path` ("-": stdin), one key each; an empty line is a usage
// error naming it.
int ReadKeys(const Context& ctx, const std::string& path,
             std::vector<std::string>* keys) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    Env* env = Env::Default();
    if (!env->FileExists(path)) {
      return Fail(*ctx.err, kExitNotADatabase, path + ": no such file");
    }
    if (env->IsDirectory(path)) {
      return Fail(*ctx.err, kExitUsage, path + ": is a directory");
    }
    file.open(path, std::ios::binary);
    if (!file) return Fail(*ctx.err, kExitIOError, path + ": cannot open");
    in = &file;
  }
  std::string line;
  uint64_t number = 0;
  while (std::getline(*in, line)) {
    number++;
    if (line.empty()) {
      return Fail(*ctx.err, kExitUsage,
                  path + ":" + std::to_string(number) +
                      ": empty line (one key per line; keys cannot be empty)");
    }
    keys->push_back(std::move(line));
  }
  if (in->bad()) return Fail(*ctx.err, kExitIOError, path + ": read error");
  return kExitOk;
}

// A JSON number, or null where it is not finite (a saturated filter's
// element estimate).
json Number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string Count(double v) {
  return std::isfinite(v) ? Fixed(v, 0) : "unbounded (every bit set)";
}

// What `info` and `build` print about a filter.
void Describe(const Context& ctx, const std::string& path,
              const FilterFile& f) {
  uint64_t capacity = 0, items = 0, memory = 0;
  double estimated_items = 0, bits_per_key = 0, target = 0, estimated = 0;
  json details = json::object();
  std::vector<std::pair<std::string, std::string>> text;
  switch (f.kind) {
    case Kind::kBloom: {
      const BloomFilterInfo i = f.bloom.Info();
      capacity = i.capacity;
      items = i.items_added;
      memory = i.bytes;
      estimated_items = i.approximate_element_count;
      bits_per_key = i.bits_per_key;
      target = blocked_bloom::TheoreticalFpRate(
          i.bit_count / blocked_bloom::kLineBits, i.capacity, i.probes_per_key);
      estimated = i.estimated_fp_rate;
      details = {{"bits", i.bit_count},
                 {"probes_per_key", i.probes_per_key},
                 {"fill_ratio", i.fill_ratio}};
      text = {{"bits", std::to_string(i.bit_count) + ", " +
                           std::to_string(i.probes_per_key) +
                           " probes per key, " + Percent(i.fill_ratio) +
                           " set"}};
      break;
    }
    case Kind::kScalable: {
      const ScalableBloomFilterInfo i = f.scalable.Info();
      capacity = i.total_capacity;
      items = i.items;
      memory = i.bytes;
      estimated_items = i.approximate_element_count;
      bits_per_key = capacity == 0 ? 0 : 8.0 * memory / capacity;
      target = i.options.fp_rate;
      estimated = i.estimated_fp_rate;
      json subs = json::array();
      std::string rows;
      for (const ScalableBloomSubFilterInfo& s : i.filters) {
        subs.push_back({{"capacity", s.capacity},
                        {"items", s.bloom.items_added},
                        {"bytes", s.bloom.bytes},
                        {"target_fp_rate", s.target_fp_rate},
                        {"estimated_fp_rate", s.bloom.estimated_fp_rate}});
        rows += (rows.empty() ? "" : "; ") +
                std::to_string(s.bloom.items_added) + "/" +
                std::to_string(s.capacity) + " at " + Percent(s.target_fp_rate);
      }
      details = {{"initial_capacity", i.options.capacity},
                 {"expansion", i.options.expansion},
                 {"non_scaling", i.options.non_scaling},
                 {"sub_filters", subs}};
      text = {
          {"growth",
           "initial capacity " + std::to_string(i.options.capacity) +
               (i.options.non_scaling
                    ? ", non-scaling"
                    : ", expansion " + std::to_string(i.options.expansion))},
          {"sub-filters", std::to_string(i.filters.size()) +
                              (rows.empty() ? "" : " (" + rows + ")")}};
      break;
    }
    case Kind::kCuckoo: {
      const CuckooFilterInfo i = f.cuckoo.Info();
      capacity = i.capacity;
      items = i.items;
      memory = i.bytes;
      estimated_items = static_cast<double>(i.items);
      bits_per_key = i.bits_per_key;
      target = i.target_fp_rate;
      estimated = i.estimated_fp_rate;
      details = {{"buckets", i.num_buckets},
                 {"bucket_size", i.bucket_size},
                 {"fingerprint_bits", i.fingerprint_bits},
                 {"max_kicks", i.max_kicks},
                 {"load_factor", i.load_factor}};
      text = {{"buckets", std::to_string(i.num_buckets) + " of " +
                              std::to_string(i.bucket_size) + " slots, " +
                              std::to_string(i.fingerprint_bits) +
                              "-bit fingerprints, " + Percent(i.load_factor) +
                              " full"}};
      break;
    }
    case Kind::kFuse: {
      capacity = f.fuse.num_keys();
      items = f.fuse.num_keys();
      memory = f.fuse.bytes();
      estimated_items = static_cast<double>(items);
      bits_per_key = f.fuse.bits_per_key();
      target = estimated = f.fuse.fp_rate();
      details = {{"fingerprint_bits", f.fuse.fingerprint_bits()}};
      text = {{"fingerprints",
               std::to_string(f.fuse.fingerprint_bits()) + " bits"}};
      break;
    }
  }
  std::ostream& out = *ctx.out;
  if (ctx.json) {
    json j = {{"file", path},
              {"kind", Name(f.kind)},
              {"file_bytes", f.file_bytes},
              {"memory_bytes", memory},
              {"capacity", capacity},
              {"bits_per_key", bits_per_key},
              {"items", items},
              {"estimated_items", Number(estimated_items)},
              {"target_fp_rate", target},
              {"estimated_fp_rate", estimated},
              {"details", details}};
    out << j.dump(2) << "\n";
    return;
  }
  out << "file:               " << path << " (" << HumanBytes(f.file_bytes)
      << ")\n"
      << "kind:               " << Name(f.kind) << "\n"
      << "capacity:           " << capacity << " keys\n"
      << "memory:             " << HumanBytes(memory) << ", "
      << Fixed(bits_per_key, 2) << " bits per key of capacity\n"
      << "items:              " << items << " recorded, "
      << Count(estimated_items) << " estimated distinct\n"
      << "target FP:          " << Percent(target) << "\n"
      << "estimated FP:       " << Percent(estimated) << " (now)\n";
  for (const auto& [label, value] : text) {
    out << label << ":" << std::string(19 - label.size(), ' ') << value << "\n";
  }
}

// Options given that the kind does not take.
std::string Inapplicable(const std::string& kind, const FilterBuildOptions& o) {
  std::vector<std::string> bad;
  const bool bloom = kind == "bloom", scalable = kind == "scalable",
             cuckoo = kind == "cuckoo", fuse = kind == "fuse";
  if (o.capacity && fuse) bad.push_back("--capacity");
  if (o.fp_rate && fuse) bad.push_back("--fp-rate");
  if (o.bits_per_key && !bloom) bad.push_back("--bits-per-key");
  if (o.expansion && !scalable) bad.push_back("--expansion");
  if (o.non_scaling && !scalable) bad.push_back("--non-scaling");
  if (o.bucket_size && !cuckoo) bad.push_back("--bucket-size");
  if (o.fingerprint_bits && !(cuckoo || fuse)) {
    bad.push_back("--fingerprint-bits");
  }
  if (o.max_kicks && !cuckoo) bad.push_back("--max-kicks");
  std::string r;
  for (const std::string& b : bad) r += (r.empty() ? "" : ", ") + b;
  return r;
}

}  // namespace

int RunFilterBuild(const Context& ctx, const std::string& kind,
                   const std::string& key_file, const std::string& out,
                   const FilterBuildOptions& o) {
  bool known = false;
  for (const KindName& k : kKinds) known = known || kind == k.name;
  if (!known) {
    return Fail(
        *ctx.err, kExitUsage,
        "unknown filter kind '" + kind + "' (bloom, scalable, cuckoo or fuse)");
  }
  const std::string bad = Inapplicable(kind, o);
  if (!bad.empty()) {
    return Fail(*ctx.err, kExitUsage,
                bad + " does not apply to a " + kind + " filter");
  }
  if (o.fp_rate && o.bits_per_key) {
    return Fail(*ctx.err, kExitUsage,
                "give --fp-rate or --bits-per-key, not both");
  }
  if (kind == "fuse" && o.fingerprint_bits && *o.fingerprint_bits != 8 &&
      *o.fingerprint_bits != 16) {
    return Fail(*ctx.err, kExitUsage,
                "--fingerprint-bits of a fuse filter is 8 or 16");
  }
  std::vector<std::string> keys;
  int code = ReadKeys(ctx, key_file, &keys);
  if (code != kExitOk) return code;
  const uint64_t capacity =
      o.capacity ? *o.capacity : std::max<uint64_t>(1, keys.size());
  const double fp_rate = o.fp_rate ? *o.fp_rate : 0.01;

  FilterFile f;
  Status s;
  uint64_t stored = 0;
  if (kind == "bloom") {
    f.kind = Kind::kBloom;
    f.bloom = o.bits_per_key
                  ? BloomFilter::WithBitsPerKey(capacity, *o.bits_per_key)
                  : BloomFilter::ForCapacity(capacity, fp_rate);
    for (const std::string& k : keys) f.bloom.Add(k);
    stored = keys.size();
  } else if (kind == "scalable") {
    f.kind = Kind::kScalable;
    ScalableBloomFilterOptions so;
    so.capacity = capacity;
    so.fp_rate = fp_rate;
    if (o.expansion) so.expansion = *o.expansion;
    so.non_scaling = o.non_scaling;
    s = ScalableBloomFilter::Create(so, &f.scalable);
    for (size_t i = 0; s.ok() && i < keys.size(); i++) {
      s = f.scalable.Add(keys[i]);
      if (!s.ok()) stored = i;
    }
    if (s.ok()) stored = keys.size();
  } else if (kind == "cuckoo") {
    f.kind = Kind::kCuckoo;
    CuckooFilterOptions co;
    co.capacity = capacity;
    co.fp_rate = fp_rate;
    if (o.fingerprint_bits) co.fingerprint_bits = *o.fingerprint_bits;
    if (o.bucket_size) co.bucket_size = *o.bucket_size;
    if (o.max_kicks) co.max_kicks = *o.max_kicks;
    s = CuckooFilter::Create(co, &f.cuckoo);
    for (size_t i = 0; s.ok() && i < keys.size(); i++) {
      s = f.cuckoo.Add(keys[i]);
      if (!s.ok()) stored = i;
    }
    if (s.ok()) stored = keys.size();
  } else {
    f.kind = Kind::kFuse;
    std::vector<Slice> slices(keys.begin(), keys.end());
    f.fuse = StaticFilter::Build(slices.data(), slices.size(),
                                 o.fingerprint_bits ? *o.fingerprint_bits : 8);
    stored = keys.size();
  }
  if (s.IsFull()) {
    return Fail(*ctx.err, kExitFull,
                kind + " filter full after " + std::to_string(stored) + " of " +
                    std::to_string(keys.size()) + " keys (raise --capacity" +
                    (kind == "scalable" ? " or drop --non-scaling" : "") +
                    "): " + s.ToString() + "; nothing written");
  }
  if (!s.ok()) return FailWith(*ctx.err, s);  // bad options: exit 2
  code = WriteFilterFile(*ctx.err, out, f, &f.file_bytes);
  if (code != kExitOk) return code;
  if (!ctx.json) {
    *ctx.out << "built a " << kind << " filter of " << keys.size()
             << " keys from " << (key_file == "-" ? "stdin" : key_file) << "\n";
  }
  Describe(ctx, out, f);
  return kExitOk;
}

int RunFilterQuery(const Context& ctx, const std::string& filter,
                   const std::vector<std::string>& args,
                   const std::optional<std::string>& keys_file) {
  std::vector<std::string> keys = args;
  if (keys_file) {
    const int code = ReadKeys(ctx, *keys_file, &keys);
    if (code != kExitOk) return code;
  }
  if (keys.empty()) {
    return Fail(*ctx.err, kExitUsage,
                "no keys to query (give KEY arguments or --keys-file)");
  }
  FilterFile f;
  const int code = ReadFilterFile(*ctx.err, filter, &f);
  if (code != kExitOk) return code;
  uint64_t absent = 0;
  json results = json::array();
  for (const std::string& k : keys) {
    const bool maybe = f.MightContain(k);
    absent += !maybe;
    if (ctx.json) {
      results.push_back({{"key", Printable(k)}, {"maybe_present", maybe}});
    } else {
      *ctx.out << (maybe ? "maybe-present" : "absent") << "\t" << Printable(k)
               << "\n";
    }
  }
  if (ctx.json) {
    json j = {{"file", filter},      {"kind", Name(f.kind)},
              {"keys", keys.size()}, {"maybe_present", keys.size() - absent},
              {"absent", absent},    {"results", results}};
    *ctx.out << j.dump(2) << "\n";
  }
  return absent == 0 ? kExitOk : kExitNotFoundOrDamaged;
}

int RunFilterInfo(const Context& ctx, const std::string& filter) {
  FilterFile f;
  const int code = ReadFilterFile(*ctx.err, filter, &f);
  if (code != kExitOk) return code;
  Describe(ctx, filter, f);
  return kExitOk;
}

int RunFilterMerge(const Context& ctx, const std::string& a,
                   const std::string& b, const std::string& out) {
  FilterFile fa, fb;
  int code = ReadFilterFile(*ctx.err, a, &fa);
  if (code != kExitOk) return code;
  code = ReadFilterFile(*ctx.err, b, &fb);
  if (code != kExitOk) return code;
  for (const auto& [path, f] : {std::pair{a, &fa}, std::pair{b, &fb}}) {
    if (f->kind != Kind::kBloom) {
      return Fail(*ctx.err, kExitUsage,
                  path + " is a " + Name(f->kind) +
                      " filter; only bloom filters can be merged");
    }
  }
  const Status s = fa.bloom.Merge(fb.bloom);
  if (!s.ok()) return FailWith(*ctx.err, s);
  code = WriteFilterFile(*ctx.err, out, fa, &fa.file_bytes);
  if (code != kExitOk) return code;
  if (!ctx.json) *ctx.out << "merged " << a << " and " << b << "\n";
  Describe(ctx, out, fa);
  return kExitOk;
}

}  // namespace bloomkv::kvtool
