#include "base/json_reader.h"

#include <climits>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file.h"

namespace kseek {

using nlohmann::json;

namespace {

// Integers are exact in a double below 2^53.
constexpr double kMaxExactInteger = 9007199254740992.0;

bool IsIntegral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d) && std::fabs(d) < kMaxExactInteger;
}

}  // namespace

absl::string_view JsonKindName(const json& value) {
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (IsIntegral(value)) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

JsonReader::JsonReader(const json& value, std::string document, std::string path)
    : value_(&value), document_(std::move(document)), path_(std::move(path)) {}

std::string JsonReader::PathOf(absl::string_view key) const {
  return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
}

std::string JsonReader::PathOf(size_t index) const { return absl::StrCat(path_, "[", index, "]"); }

absl::Status JsonReader::Error(absl::string_view what) const {
  if (path_.empty()) return absl::InvalidArgumentError(absl::StrCat(document_, ": ", what));
  return absl::InvalidArgumentError(absl::StrCat(document_, ": ", path_, ": ", what));
}

absl::Status JsonReader::FieldError(absl::string_view key, absl::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat(document_, ": ", PathOf(key), ": ", what));
}

namespace {

absl::Status Expected(const JsonReader& r, absl::string_view kind) {
  return r.Error(absl::StrCat("expected ", kind, ", got ", JsonKindName(r.value())));
}

}  // namespace

absl::Status JsonReader::ExpectObject() const {
  return value_->is_object() ? absl::OkStatus() : Expected(*this, "an object");
}

absl::Status JsonReader::ExpectArray() const {
  return value_->is_array() ? absl::OkStatus() : Expected(*this, "an array");
}

absl::Status JsonReader::ExpectKeys(const std::set<std::string>& allowed) const {
  if (!value_->is_object()) return ExpectObject();
  for (const auto& [key, unused] : value_->items()) {
    if (allowed.count(key) == 0) {
      return FieldError(key, absl::StrCat("unknown field (expected one of: ",
                                          absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

const json* JsonReader::Find(absl::string_view key) const {
  if (!value_->is_object()) return nullptr;
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool JsonReader::Has(absl::string_view key) const { return Find(key) != nullptr; }

size_t JsonReader::size() const {
  return value_->is_array() || value_->is_object() ? value_->size() : 0;
}

absl::StatusOr<JsonReader> JsonReader::Field(absl::string_view key) const {
  const json* v = Find(key);
  if (v == nullptr) return FieldError(key, "missing");
  return JsonReader(*v, document_, PathOf(key));
}

absl::StatusOr<JsonReader> JsonReader::Object(absl::string_view key) const {
  absl::StatusOr<JsonReader> f = Field(key);
  if (!f.ok()) return f;
  if (absl::Status st = f->ExpectObject(); !st.ok()) return st;
  return f;
}

absl::StatusOr<JsonReader> JsonReader::Array(absl::string_view key) const {
  absl::StatusOr<JsonReader> f = Field(key);
  if (!f.ok()) return f;
  if (absl::Status st = f->ExpectArray(); !st.ok()) return st;
  return f;
}

JsonReader JsonReader::Element(size_t index) const {
  return JsonReader((*value_)[index], document_, PathOf(index));
}

absl::StatusOr<std::string> JsonReader::AsString() const {
  if (!value_->is_string()) return Expected(*this, "a string");
  return value_->get<std::string>();
}

absl::StatusOr<int64_t> JsonReader::AsInt() const {
  if (value_->is_number_unsigned() &&
      value_->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return Error("expected an integer below 2^63");
  }
  if (value_->is_number_integer()) return value_->get<int64_t>();
  if (IsIntegral(*value_)) return static_cast<int64_t>(value_->get<double>());
  return Expected(*this, "an integer");
}

absl::StatusOr<uint64_t> JsonReader::AsUint() const {
  if (value_->is_number_unsigned()) return value_->get<uint64_t>();
  absl::StatusOr<int64_t> v = AsInt();
  if (!v.ok()) return Expected(*this, "a non-negative integer");
  if (*v < 0) return Error(absl::StrCat("expected a non-negative integer, got ", *v));
  return static_cast<uint64_t>(*v);
}

absl::StatusOr<double> JsonReader::AsNumber() const {
  if (!value_->is_number()) return Expected(*this, "a number");
  return value_->get<double>();
}

absl::StatusOr<bool> JsonReader::AsBool() const {
  if (!value_->is_boolean()) return Expected(*this, "a boolean");
  return value_->get<bool>();
}

template <typename T>
absl::StatusOr<T> JsonReader::Required(absl::string_view key,
                                       absl::StatusOr<T> (JsonReader::*as)() const) const {
  absl::StatusOr<JsonReader> f = Field(key);
  if (!f.ok()) return f.status();
  return ((*f).*as)();
}

absl::StatusOr<std::string> JsonReader::String(absl::string_view key) const {
  return Required(key, &JsonReader::AsString);
}

absl::StatusOr<int64_t> JsonReader::Int(absl::string_view key) const {
  return Required(key, &JsonReader::AsInt);
}

absl::StatusOr<uint64_t> JsonReader::Uint(absl::string_view key) const {
  return Required(key, &JsonReader::AsUint);
}

absl::StatusOr<double> JsonReader::Number(absl::string_view key) const {
  return Required(key, &JsonReader::AsNumber);
}

absl::StatusOr<bool> JsonReader::Bool(absl::string_view key) const {
  return Required(key, &JsonReader::AsBool);
}

namespace {

template <typename T>
absl::Status Assign(absl::StatusOr<T> v, T* out) {
  if (!v.ok()) return v.status();
  *out = *std::move(v);
  return absl::OkStatus();
}

}  // namespace

absl::Status JsonReader::Read(absl::string_view key, std::string* out) const {
  return Assign(String(key), out);
}

absl::Status JsonReader::Read(absl::string_view key, bool* out) const {
  return Assign(Bool(key), out);
}

absl::Status JsonReader::Read(absl::string_view key, int* out) const {
  absl::StatusOr<int64_t> v = Int(key);
  if (!v.ok()) return v.status();
  if (*v < INT_MIN || *v > INT_MAX) {
    return FieldError(key, absl::StrCat("expected an integer of 32 bits, got ", *v));
  }
  *out = static_cast<int>(*v);
  return absl::OkStatus();
}

absl::Status JsonReader::Read(absl::string_view key, int64_t* out) const {
  return Assign(Int(key), out);
}

absl::Status JsonReader::Read(absl::string_view key, uint64_t* out) const {
  return Assign(Uint(key), out);
}

absl::Status JsonReader::Read(absl::string_view key, double* out) const {
  return Assign(Number(key), out);
}

template <typename T, typename ReadAs>
std::optional<T> JsonReader::ReadOptional(absl::string_view key, ReadAs read) {
  const json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  absl::StatusOr<T> got = read(JsonReader(*v, document_, PathOf(key)));
  if (got.ok()) return *std::move(got);
  if (status_.ok()) status_ = got.status();
  return std::nullopt;
}

std::string JsonReader::StringOr(absl::string_view key, std::string fallback) {
  std::optional<std::string> v =
      ReadOptional<std::string>(key, [](const JsonReader& r) { return r.AsString(); });
  return v ? *std::move(v) : std::move(fallback);
}

int64_t JsonReader::IntOr(absl::string_view key, int64_t fallback) {
  return OptionalInt(key).value_or(fallback);
}

bool JsonReader::BoolOr(absl::string_view key, bool fallback) {
  return ReadOptional<bool>(key, [](const JsonReader& r) { return r.AsBool(); }).value_or(fallback);
}

double JsonReader::NumberOr(absl::string_view key, double fallback) {
  return OptionalNumber(key).value_or(fallback);
}

std::optional<int64_t> JsonReader::OptionalInt(absl::string_view key) {
  return ReadOptional<int64_t>(key, [](const JsonReader& r) { return r.AsInt(); });
}

std::optional<double> JsonReader::OptionalNumber(absl::string_view key) {
  std::optional<double> v =
      ReadOptional<double>(key, [](const JsonReader& r) { return r.AsNumber(); });
  if (v && !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::string LenientString(const json& j, absl::string_view key) {
  return JsonReader(j, "").StringOr(key);
}

std::optional<int64_t> LenientInt(const json& j, absl::string_view key) {
  return JsonReader(j, "").OptionalInt(key);
}

absl::StatusOr<json> ParseJson(absl::string_view text, absl::string_view document) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(document, ": not valid JSON: ", e.what()));
  }
}

absl::StatusOr<json> ReadJsonFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseJson(*text, path);
}

}  // namespace kseek
