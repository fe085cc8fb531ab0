// URL validation and normalization for the short-link service.
//
// A link target must be an absolute http or https URL with a host, printable
// ASCII only (no spaces, no control characters; other characters must be
// percent-encoded), at most kMaxUrlBytes long, and without userinfo
// ("user:pass@" is refused: credentials do not belong in a shared link, and
// "http://trusted.example@evil.example/" is a classic disguise).
//
// The normalized form is what deduplication compares; it is never what a
// redirect sends (that is the URL exactly as submitted). Normalization only
// rewrites what is case- or default-insensitive by definition:
//   * scheme and host lower-cased,
//   * the default port (80 for http, 443 for https) and an empty port
//     removed, other ports written without leading zeros,
//   * an empty path written as "/".
// Path, query and fragment are kept byte for byte, percent-encoding included
// ("%7e" and "~" stay different).
//
// Thread-safety: stateless functions.
#ifndef BLOOMKV_TOOLS_SHORTLINK_URL_H_
#define BLOOMKV_TOOLS_SHORTLINK_URL_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "bloomkv/status.h"

namespace shortlink {

// Longest accepted URL, in bytes.
constexpr size_t kMaxUrlBytes = 2048;

// Checks `url` and, when it is acceptable, stores its normalized form in
// *normalized. Otherwise returns InvalidArgument with a message fit for an
// API client, and leaves *normalized unspecified.
bloomkv::Status NormalizeUrl(std::string_view url, std::string* normalized);

}  // namespace shortlink

#endif  // BLOOMKV_TOOLS_SHORTLINK_URL_H_
