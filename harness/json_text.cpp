#include "harness/json_text.hpp"

#include <cstdio>

namespace repix::json_text {

using nlohmann::json;

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 where none starts there
// (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  const std::size_t left = s.size() - i;
  auto cont = [&](std::size_t k) { return (b(k) & 0xC0) == 0x80; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(i + 1) >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(i + 1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

void hex_byte(std::string& out, unsigned char c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

// encode(): bytes that are not UTF-8 and backslashes. printable(): bytes that are not UTF-8 and
// the control bytes below 0x20 and 0x7f (JSON escapes those itself); a backslash stays.
std::string encode_string(const std::string& s, bool for_display) {
  const bool escape_controls = for_display, escape_backslash = !for_display;
  bool plain = true;
  for (std::size_t i = 0; i < s.size() && plain;) {
    const std::size_t n = utf8_length(s, i);
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (n == 0 || (escape_backslash && c == '\\') || (escape_controls && (c < 0x20 || c == 0x7f))) plain = false;
    i += n ? n : 1;
  }
  if (plain) return s;
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (n == 0 || (escape_backslash && c == '\\') || (escape_controls && (c < 0x20 || c == 0x7f))) {
      hex_byte(out, c);
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decode_string(const std::string& s) {
  if (s.find("\\x") == std::string::npos) return s;
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
      const int hi = hex_digit(s[i + 2]), lo = hex_digit(s[i + 3]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

template <class F>
json map_strings(const json& j, F&& f) {
  if (j.is_string()) return f(j.get_ref<const std::string&>());
  if (j.is_array()) {
    json out = json::array();
    for (const json& x : j) out.push_back(map_strings(x, f));
    return out;
  }
  if (j.is_object()) {
    json out = json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[f(it.key())] = map_strings(it.value(), f);
    return out;
  }
  return j;
}

}  // namespace

json encode(const json& j) {
  return map_strings(j, [](const std::string& s) { return encode_string(s, false); });
}

json decode(const json& j) { return map_strings(j, decode_string); }

std::string dump(const json& j, int indent) { return encode(j).dump(indent); }

std::string printable(const std::string& s) { return encode_string(s, true); }

}  // namespace repix::json_text
