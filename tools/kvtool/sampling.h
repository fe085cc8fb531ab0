// Made-up keys for measuring filters: keys a database does not hold, drawn
// so that a lookup reaches the filters instead of being ruled out by key
// ranges alone.
// Thread-safety: stateless functions.
#ifndef BLOOMKV_TOOLS_KVTOOL_SAMPLING_H_
#define BLOOMKV_TOOLS_KVTOOL_SAMPLING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bloomkv/db.h"
#include "bloomkv/statistics.h"
#include "util/random.h"

namespace bloomkv::kvtool {

// A seed from the clock, for runs that do not ask for a given one.
uint64_t SeedFromClock();

// A random 16-character alphanumeric key.
std::string RandomKey(Random* rnd);

// A key just above a random segment's smallest key (that key plus a random
// suffix), so that it falls inside that segment's key range and usually in
// others'. A random key when there are no segments.
std::string KeyInsideRanges(const std::vector<SegmentInfo>& segments,
                            Random* rnd);

// Looks up `samples` keys from KeyInsideRanges through db->Get, so that the
// per-segment counters in GetSegmentInfo() record how the filters answered
// on the real read path. Keys that happen to exist count as true positives
// and do no harm; read errors are left to the callers that report them.
void ProbeAbsentKeysThroughDb(DB* db, const std::vector<SegmentInfo>& segments,
                              uint64_t samples, uint64_t seed);

}  // namespace bloomkv::kvtool

#endif  // BLOOMKV_TOOLS_KVTOOL_SAMPLING_H_
