// The one way repix writes JSON text and reads it back, so that any string, a file name of any
// bytes above all, survives: a POSIX path is bytes, not UTF-8, and nlohmann::json refuses to dump
// a string that is not UTF-8 (type_error 316, after the work was done).
//
// Writing, a string (a value or a key) that holds bytes which are not UTF-8, or a backslash, has
// each such byte written as the four characters \xHH (a backslash itself as \x5c); every other
// string is written as it is. Reading reverses it: every \xHH in a string becomes the byte HH.
// The mapping is one to one, so a name round-trips exactly, and it stays readable ("a\xff.npy").
// printable() spells bytes that are not UTF-8 the same way and control bytes (a newline: \x0a)
// too, for the one line an error is; a backslash stays as it is there.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace repix::json_text {

// `j` with every string encoded as above.
nlohmann::json encode(const nlohmann::json& j);
// The reverse (a string without \x sequences is unchanged).
nlohmann::json decode(const nlohmann::json& j);
// encode(j) as text (indent as nlohmann::json::dump: -1 compact).
std::string dump(const nlohmann::json& j, int indent = -1);
// `s` as one printable line: bytes that are not UTF-8 and control bytes as \xHH.
std::string printable(const std::string& s);

}  // namespace repix::json_text
