// JsonReader: the typed values of a parsed JSON document, with errors that
// name the document and the JSON path of the value at fault:
//   INVALID_ARGUMENT "task.json: scenarios[3].params.head_dim: expected an
//   integer, got a string".
//
// Two ways to read a field. The required readers (String, Int, ...) return
// the value or the error. The optional readers (StringOr, IntOr, ...) read a
// missing or null field as the fallback; a field of another type reads as
// the fallback too, and the first such error is kept as the reader's
// status(): read every field, then check status() (or ignore it, where a
// mistyped field may read as absent, as in other programs' event streams).
//
// A reader holds a pointer to its value: the value must outlive the reader
// and every reader made from it. Not thread-safe while the optional readers
// run (they set status()); the rest is const.
#ifndef KERNELSEEK_BASE_JSON_READER_H_
#define KERNELSEEK_BASE_JSON_READER_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace kseek {

class JsonReader {
 public:
  // `document` names the whole document in errors ("task.json", "runner
  // hello message"); `path` is this value's JSON path in it, "" for the
  // document itself.
  JsonReader(const nlohmann::json& value, std::string document, std::string path = "");

  const nlohmann::json& value() const { return *value_; }
  const std::string& document() const { return document_; }
  const std::string& path() const { return path_; }

  // The JSON path of a field or an element of this value: "scenarios[3]"
  // and "scenarios[3].name" (at the root: "name", "[3]").
  std::string PathOf(absl::string_view key) const;
  std::string PathOf(size_t index) const;

  // INVALID_ARGUMENT "DOCUMENT: PATH: what" about this value, or about its
  // field `key` ("DOCUMENT: what" for the document itself).
  absl::Status Error(absl::string_view what) const;
  absl::Status FieldError(absl::string_view key, absl::string_view what) const;

  // This value's kind: "expected an object, got an array" otherwise.
  absl::Status ExpectObject() const;
  absl::Status ExpectArray() const;
  // Every field of this object is one of `allowed`: "PATH.key: unknown
  // field (expected one of: a, b)" otherwise.
  absl::Status ExpectKeys(const std::set<std::string>& allowed) const;

  // The field is there and not null (false when this is not an object).
  bool Has(absl::string_view key) const;
  // Elements of an array, fields of an object, 0 otherwise.
  size_t size() const;

  // Required fields: "PATH.key: missing" when absent or null (or when this
  // is not an object), "PATH.key: expected T, got U" for another type.
  absl::StatusOr<JsonReader> Field(absl::string_view key) const;
  absl::StatusOr<JsonReader> Object(absl::string_view key) const;
  absl::StatusOr<JsonReader> Array(absl::string_view key) const;
  absl::StatusOr<std::string> String(absl::string_view key) const;
  absl::StatusOr<int64_t> Int(absl::string_view key) const;
  absl::StatusOr<uint64_t> Uint(absl::string_view key) const;
  absl::StatusOr<double> Number(absl::string_view key) const;
  absl::StatusOr<bool> Bool(absl::string_view key) const;

  // The same required readers, into *out; an int outside int's range is an
  // error too. For a struct's fields: KSEEK_RETURN_IF_ERROR(r.Read("n", &s.n)).
  absl::Status Read(absl::string_view key, std::string* out) const;
  absl::Status Read(absl::string_view key, bool* out) const;
  absl::Status Read(absl::string_view key, int* out) const;
  absl::Status Read(absl::string_view key, int64_t* out) const;
  absl::Status Read(absl::string_view key, uint64_t* out) const;
  absl::Status Read(absl::string_view key, double* out) const;

  // Element `index` of this array (index < size()).
  JsonReader Element(size_t index) const;

  // This value itself as T. An integer is a JSON integer or an integral
  // number written with a fraction (3.0, not 3.5) below 2^53.
  absl::StatusOr<std::string> AsString() const;
  absl::StatusOr<int64_t> AsInt() const;
  absl::StatusOr<uint64_t> AsUint() const;
  absl::StatusOr<double> AsNumber() const;
  absl::StatusOr<bool> AsBool() const;

  // Optional fields (see above). A number that is not finite (NaN or an
  // infinity, which only a document built in memory can hold) reads as
  // absent.
  std::string StringOr(absl::string_view key, std::string fallback = "");
  int64_t IntOr(absl::string_view key, int64_t fallback = 0);
  bool BoolOr(absl::string_view key, bool fallback = false);
  double NumberOr(absl::string_view key, double fallback = 0);
  std::optional<int64_t> OptionalInt(absl::string_view key);
  std::optional<double> OptionalNumber(absl::string_view key);

  // The first error of an optional reader, OK when there was none.
  const absl::Status& status() const { return status_; }

 private:
  // The field, or nullptr when it is missing or null.
  const nlohmann::json* Find(absl::string_view key) const;
  // The required field `key` read by `as` (AsString, AsInt, ...).
  template <typename T>
  absl::StatusOr<T> Required(absl::string_view key,
                             absl::StatusOr<T> (JsonReader::*as)() const) const;
  // `read` applied to the field when it is there, else nullopt; its error
  // becomes status() unless that holds one already.
  template <typename T, typename ReadAs>
  std::optional<T> ReadOptional(absl::string_view key, ReadAs read);

  const nlohmann::json* value_;
  std::string document_;
  std::string path_;
  absl::Status status_;
};

// Fields of another program's documents (an agent CLI's events), which may
// be absent or of another type than documented: j[key] when it is a string
// (an integer), else "" (nothing). JsonReader's optional readers without a
// status to check.
std::string LenientString(const nlohmann::json& j, absl::string_view key);
std::optional<int64_t> LenientInt(const nlohmann::json& j, absl::string_view key);

// "a string", "an integer", "an object", ...: a JSON value's kind in errors.
absl::string_view JsonKindName(const nlohmann::json& value);

// Parses `text`; "DOCUMENT: not valid JSON: REASON" otherwise.
absl::StatusOr<nlohmann::json> ParseJson(absl::string_view text, absl::string_view document);

// Reads and parses the file at `path`; the errors of ReadFile and ParseJson
// (with the path as the document).
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

}  // namespace kseek

#endif  // KERNELSEEK_BASE_JSON_READER_H_
