// Reading optional fields of JSON that was written elsewhere: reports, tables, journals, the
// papers' transcriptions, the environment of another machine. nlohmann's value(key, default)
// applies the default only when the key is missing and throws on a key that is present with a
// null or another type (a build from a source archive records git_dirty as null, and every
// table crashed at its last step on it): field_or() returns the fallback for a missing key, a
// null and a mistyped value alike, so a field that is optional can never stop a command.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace repix::json_fields {

namespace detail {
template <class T>
bool holds(const nlohmann::json& v) {
  if constexpr (std::is_same_v<T, bool>) return v.is_boolean();
  else if constexpr (std::is_same_v<T, std::string>) return v.is_string();
  else if constexpr (std::is_integral_v<T>) return v.is_number_integer();
  else if constexpr (std::is_floating_point_v<T>) return v.is_number();
  else if constexpr (std::is_same_v<T, nlohmann::json>) return !v.is_null();
  else static_assert(!sizeof(T), "field_or: unsupported type");
}
template <class T>
T read_or(const nlohmann::json* v, T fallback) {
  if (!v || !holds<T>(*v)) return fallback;
  return v->get<T>();
}
}  // namespace detail

// obj[key] as T, or `fallback` when obj is not an object, the key is missing, or its value is
// null or not a T. A string literal fallback reads a std::string.
template <class T>
T field_or(const nlohmann::json& obj, const std::string& key, T fallback) {
  if (!obj.is_object()) return fallback;
  const auto it = obj.find(key);
  return detail::read_or<T>(it == obj.end() ? nullptr : &*it, std::move(fallback));
}
inline std::string field_or(const nlohmann::json& obj, const std::string& key, const char* fallback) {
  return field_or<std::string>(obj, key, std::string(fallback));
}

// The same along a path of keys ({"gpu", "name"}): any missing or non-object step gives the
// fallback.
template <class T>
T path_or(const nlohmann::json& obj, const std::vector<std::string>& path, T fallback) {
  const nlohmann::json* v = &obj;
  for (const std::string& step : path) {
    if (!v->is_object()) return fallback;
    const auto it = v->find(step);
    if (it == v->end()) return fallback;
    v = &*it;
  }
  return detail::read_or<T>(v, std::move(fallback));
}
inline std::string path_or(const nlohmann::json& obj, const std::vector<std::string>& path, const char* fallback) {
  return path_or<std::string>(obj, path, std::string(fallback));
}

}  // namespace repix::json_fields
