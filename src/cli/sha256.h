// SHA-256 of a byte string (OpenSSL libcrypto), for naming what a sweep judged.
#ifndef R3_CLI_SHA256_H_
#define R3_CLI_SHA256_H_

#include <string>
#include <string_view>

namespace r3::cli {

// The 64 lowercase hex digits of SHA-256(bytes), as sha256sum prints them.
std::string Sha256Hex(std::string_view bytes);

}  // namespace r3::cli

#endif  // R3_CLI_SHA256_H_
