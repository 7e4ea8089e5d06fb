// JsonReader (base/json_reader.h): typed fields, and errors that name the
// document and the JSON path of the value at fault.
#include "base/json_reader.h"

#include <cmath>

#include "gtest/gtest.h"

namespace kseek {
namespace {

using nlohmann::json;

const json kTask = json::parse(R"({
  "name": "attention",
  "scenarios": [
    {"name": "a", "shape": {"head_dim": 128, "scale": 0.5, "causal": true}},
    {"name": "b", "shape": {"head_dim": "64", "scale": "x", "causal": 1}},
    {"name": "c", "shape": {"head_dim": 64.0, "scale": null, "causal": false}}
  ]
})");

JsonReader ShapeOf(size_t i) {
  JsonReader root(kTask, "task.json");
  absl::StatusOr<JsonReader> scenarios = root.Array("scenarios");
  EXPECT_TRUE(scenarios.ok()) << scenarios.status();
  absl::StatusOr<JsonReader> shape = scenarios->Element(i).Object("shape");
  EXPECT_TRUE(shape.ok()) << shape.status();
  return *shape;
}

TEST(JsonReaderTest, ReadsRequiredFieldsOfEachType) {
  JsonReader shape = ShapeOf(0);
  EXPECT_EQ(shape.path(), "scenarios[0].shape");
  EXPECT_EQ(*shape.Int("head_dim"), 128);
  EXPECT_EQ(*shape.Uint("head_dim"), 128u);
  EXPECT_DOUBLE_EQ(*shape.Number("scale"), 0.5);
  EXPECT_TRUE(*shape.Bool("causal"));
  EXPECT_EQ(*JsonReader(kTask, "task.json").String("name"), "attention");
}

TEST(JsonReaderTest, ErrorsNameTheDocumentAndTheJsonPath) {
  JsonReader shape = ShapeOf(1);
  EXPECT_EQ(shape.Int("head_dim").status(),
            absl::InvalidArgumentError(
                "task.json: scenarios[1].shape.head_dim: expected an integer, got a string"));
  EXPECT_EQ(shape.Number("scale").status().message(),
            "task.json: scenarios[1].shape.scale: expected a number, got a string");
  EXPECT_EQ(shape.Bool("causal").status().message(),
            "task.json: scenarios[1].shape.causal: expected a boolean, got an integer");
  EXPECT_EQ(shape.String("missing").status().message(),
            "task.json: scenarios[1].shape.missing: missing");
  EXPECT_EQ(JsonReader(kTask, "task.json").Object("name").status().message(),
            "task.json: name: expected an object, got a string");
  EXPECT_EQ(JsonReader(kTask, "task.json").Error("bad").message(), "task.json: bad");
  EXPECT_EQ(shape.FieldError("head_dim", "too small").message(),
            "task.json: scenarios[1].shape.head_dim: too small");
}

TEST(JsonReaderTest, AnIntegerMayBeWrittenWithAZeroFraction) {
  JsonReader shape = ShapeOf(2);
  EXPECT_EQ(*shape.Int("head_dim"), 64);
  json half = json::parse(R"({"n": 2.5, "neg": -1})");
  JsonReader r(half, "x.json");
  EXPECT_EQ(r.Int("n").status().message(), "x.json: n: expected an integer, got a number");
  EXPECT_EQ(*r.Int("neg"), -1);
  EXPECT_EQ(r.Uint("neg").status().message(), "x.json: neg: expected a non-negative integer, got -1");
}

TEST(JsonReaderTest, ReadFillsAStructsFields) {
  json j = json::parse(R"({"name": "x", "on": true, "n": 3, "big": 5000000000, "seed": 7,
                           "rate": 2.5})");
  JsonReader r(j, "job.json");
  std::string name;
  bool on = false;
  int n = 0;
  int64_t big = 0;
  uint64_t seed = 0;
  double rate = 0;
  EXPECT_TRUE(r.Read("name", &name).ok());
  EXPECT_TRUE(r.Read("on", &on).ok());
  EXPECT_TRUE(r.Read("n", &n).ok());
  EXPECT_TRUE(r.Read("big", &big).ok());
  EXPECT_TRUE(r.Read("seed", &seed).ok());
  EXPECT_TRUE(r.Read("rate", &rate).ok());
  EXPECT_EQ(name, "x");
  EXPECT_TRUE(on);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(big, 5000000000);
  EXPECT_EQ(seed, 7u);
  EXPECT_EQ(rate, 2.5);
  EXPECT_EQ(r.Read("big", &n).message(), "job.json: big: expected an integer of 32 bits, got 5000000000");
  EXPECT_EQ(r.Read("name", &rate).message(), "job.json: name: expected a number, got a string");
  EXPECT_EQ(n, 3);
}

TEST(JsonReaderTest, NullReadsAsMissing) {
  JsonReader shape = ShapeOf(2);
  EXPECT_FALSE(shape.Has("scale"));
  EXPECT_TRUE(shape.Has("causal"));
  EXPECT_EQ(shape.Number("scale").status().message(), "task.json: scenarios[2].shape.scale: missing");
}

TEST(JsonReaderTest, OptionalReadersKeepTheFirstErrorAndReadTheFallback) {
  JsonReader shape = ShapeOf(1);
  EXPECT_EQ(shape.IntOr("head_dim", 7), 7);
  EXPECT_EQ(shape.NumberOr("scale", 1.5), 1.5);
  EXPECT_EQ(shape.StringOr("head_dim"), "64");
  EXPECT_EQ(shape.StringOr("absent", "none"), "none");
  EXPECT_EQ(shape.status().message(),
            "task.json: scenarios[1].shape.head_dim: expected an integer, got a string");

  JsonReader good = ShapeOf(0);
  EXPECT_EQ(good.OptionalInt("head_dim"), 128);
  EXPECT_EQ(good.OptionalInt("absent"), std::nullopt);
  EXPECT_EQ(good.OptionalNumber("scale"), 0.5);
  EXPECT_TRUE(good.BoolOr("causal"));
  json in_memory = {{"nan", std::nan("")}, {"inf", INFINITY}};
  JsonReader numbers(in_memory, "trace");
  EXPECT_EQ(numbers.OptionalNumber("nan"), std::nullopt);
  EXPECT_EQ(numbers.NumberOr("inf", 2.0), 2.0);
  EXPECT_TRUE(numbers.status().ok());
  EXPECT_TRUE(good.status().ok()) << good.status();
}

TEST(JsonReaderTest, ExpectKeysNamesTheUnknownField) {
  json j = json::parse(R"({"tensors": [{"name": "q", "rank": 2}]})");
  JsonReader tensor = JsonReader(j, "task.json").Array("tensors")->Element(0);
  EXPECT_TRUE(tensor.ExpectKeys({"name", "rank"}).ok());
  EXPECT_EQ(tensor.ExpectKeys({"name", "shape"}).message(),
            "task.json: tensors[0].rank: unknown field (expected one of: name, shape)");
  EXPECT_EQ(tensor.size(), 2u);
}

TEST(JsonReaderTest, ARootArrayHasPathsThatStartWithTheIndex) {
  json j = json::parse(R"([{"n": "7"}])");
  JsonReader r = JsonReader(j, "extra.json").Element(0);
  EXPECT_EQ(r.Int("n").status().message(), "extra.json: [0].n: expected an integer, got a string");
  EXPECT_EQ(JsonReader(j, "extra.json").ExpectObject().message(),
            "extra.json: expected an object, got an array");
}

TEST(JsonReaderTest, LenientReadsTakeAMistypedFieldForAnAbsentOne) {
  json event = json::parse(R"({"type": "text", "n": 3, "bad": 1, "s": "x"})");
  EXPECT_EQ(LenientString(event, "type"), "text");
  EXPECT_EQ(LenientString(event, "bad"), "");
  EXPECT_EQ(LenientString(json::array(), "type"), "");
  EXPECT_EQ(LenientInt(event, "n"), 3);
  EXPECT_EQ(LenientInt(event, "s"), std::nullopt);
  EXPECT_EQ(LenientInt(event, "absent"), std::nullopt);
}

TEST(JsonReaderTest, ParseJsonNamesTheDocument) {
  absl::StatusOr<json> bad = ParseJson("{\"a\": ", "request.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().rfind("request.json: not valid JSON: ", 0), 0u) << bad.status();
  EXPECT_EQ(*ParseJson("[1]", "x"), json::array({1}));
  EXPECT_EQ(ReadJsonFile("/nonexistent/task.json").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kseek
