// The session report in a real browser: headless Chromium opens the rendered
// file, its DOM (--dump-dom) must still hold the SVG plots and the escaped
// agent text, and its screenshot (--screenshot, decoded here: PNG chunks,
// zlib, scanline filters) must show the best-speedup line and the question
// markers in their category colours. Skips ("skipped: no chromium") only
// when no Chromium binary is found; $KSEEK_CHROMIUM names one explicitly.
// The screenshots are kept in a folder under the test temp dir, printed.
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/report.h"
#include "client/report_style.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace kseek::report {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// --- A PNG reader: 8-bit RGB or RGBA, not interlaced (what Chromium writes).

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3
};

uint32_t BigEndian32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) | uint32_t{static_cast<uint8_t>(s[at + 3])};
}

int Paeth(int a, int b, int c) {
  int p = a + b - c;
  int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

absl::StatusOr<Image> DecodePng(const std::string& png) {
  static const std::string kSignature("\x89PNG\r\n\x1a\n", 8);
  if (png.compare(0, 8, kSignature) != 0) return absl::InvalidArgumentError("not a PNG file");
  Image image;
  int channels = 0;
  std::string idat;
  for (size_t at = 8; at + 12 <= png.size();) {
    uint32_t length = BigEndian32(png, at);
    std::string type = png.substr(at + 4, 4);
    if (at + 12 + length > png.size()) return absl::InvalidArgumentError(type + " chunk cut short");
    std::string data = png.substr(at + 8, length);
    uLong crc = crc32(0, reinterpret_cast<const Bytef*>(png.data() + at + 4), length + 4);
    if (crc != BigEndian32(png, at + 8 + length)) {
      return absl::InvalidArgumentError(type + " chunk: bad CRC");
    }
    if (type == "IHDR") {
      image.width = static_cast<int>(BigEndian32(data, 0));
      image.height = static_cast<int>(BigEndian32(data, 4));
      int depth = data[8], colour_type = data[9], interlace = data[12];
      if (depth != 8 || (colour_type != 2 && colour_type != 6) || interlace != 0) {
        return absl::InvalidArgumentError(absl::StrCat("unsupported PNG: depth ", depth,
                                                       ", colour type ", colour_type,
                                                       ", interlace ", interlace));
      }
      channels = colour_type == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (channels == 0) return absl::InvalidArgumentError("no IHDR chunk");
  size_t stride = static_cast<size_t>(image.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * image.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      raw_size != raw.size()) {
    return absl::InvalidArgumentError("IDAT does not inflate to the image size");
  }
  std::vector<uint8_t> previous(stride, 0), line(stride);
  image.rgb.reserve(static_cast<size_t>(image.width) * image.height * 3);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* in = &raw[y * (stride + 1)];
    int filter = in[0];
    for (size_t x = 0; x < stride; ++x) {
      int a = x >= static_cast<size_t>(channels) ? line[x - channels] : 0;
      int b = previous[x];
      int c = x >= static_cast<size_t>(channels) ? previous[x - channels] : 0;
      int predictor = filter == 0 ? 0 : filter == 1 ? a : filter == 2 ? b
                    : filter == 3 ? (a + b) / 2 : filter == 4 ? Paeth(a, b, c) : -1;
      if (predictor < 0) return absl::InvalidArgumentError(absl::StrCat("row ", y, ": filter ", filter));
      line[x] = static_cast<uint8_t>(in[1 + x] + predictor);
    }
    for (int x = 0; x < image.width; ++x) {
      for (int k = 0; k < 3; ++k) image.rgb.push_back(line[x * channels + k]);
    }
    previous.swap(line);
  }
  return image;
}

// Pixels within 6 per channel of "#rrggbb".
int CountColour(const Image& image, absl::string_view hex) {
  int want[3];
  for (int k = 0; k < 3; ++k) {
    want[k] = static_cast<int>(std::strtol(std::string(hex.substr(1 + 2 * k, 2)).c_str(), nullptr, 16));
  }
  int n = 0;
  for (size_t i = 0; i + 2 < image.rgb.size(); i += 3) {
    bool near = true;
    for (int k = 0; k < 3; ++k) near = near && std::abs(image.rgb[i + k] - want[k]) <= 6;
    n += near;
  }
  return n;
}

// --- Chromium -----------------------------------------------------------

std::string FindChromium() {
  if (const char* explicit_path = std::getenv("KSEEK_CHROMIUM"); explicit_path && *explicit_path) {
    return access(explicit_path, X_OK) == 0 ? explicit_path : "";
  }
  const char* path = std::getenv("PATH");
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    for (absl::string_view dir : absl::StrSplit(path ? path : "", ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/", name);
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return "";
}

// Runs headless Chromium on file://`html` with `mode` (--screenshot=FILE or
// --dump-dom), bounded by a minute.
testing::ProcessResult RunChromium(const std::string& chromium, const std::string& out_dir,
                                   const std::string& html, const std::string& mode) {
  return testing::RunProcess({"timeout", "60", chromium, "--headless", "--no-sandbox",
                              "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                              "--no-first-run", "--user-data-dir=" + out_dir + "/profile",
                              "--window-size=1200,1600", mode, "file://" + html});
}

class ReportBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) GTEST_SKIP() << "skipped: no chromium (install Debian's chromium package)";
    std::string pattern = ::testing::TempDir() + "kseek-report-browser-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    out_ = pattern;
    std::cout << "report browser test files: " << out_ << std::endl;

    std::string data = testing::SourceDir() + "/tests/report_data";
    summary_ = json::parse(testing::ReadFile(data + "/fa_hopper_summary.json"));
    stats_ = json::parse(testing::ReadFile(data + "/question_stats.json"));
    std::istringstream in(testing::ReadFile(data + "/fa_hopper_session.jsonl"));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) events_.push_back(json::parse(line));
    }
  }

  // Renders `events` into out_/name and returns the path.
  std::string WriteReport(const std::string& name, const std::vector<json>& events) {
    absl::StatusOr<std::string> html = RenderSessionReport(summary_, events, stats_);
    EXPECT_TRUE(html.ok()) << html.status();
    std::string path = out_ + "/" + name;
    testing::WriteFile(path, html.ok() ? *html : "");
    return path;
  }

  // The decoded screenshot of `html`, saved beside it.
  Image Screenshot(const std::string& html) {
    std::string png = html + ".png";
    testing::ProcessResult r = RunChromium(chromium_, out_, html, "--screenshot=" + png);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::cout << "screenshot: " << png << std::endl;
    absl::StatusOr<Image> image = DecodePng(testing::ReadFile(png));
    EXPECT_TRUE(image.ok()) << png << ": " << image.status();
    return image.ok() ? *image : Image{};
  }

  std::string chromium_;
  std::string out_;
  json summary_;
  json stats_;
  std::vector<json> events_;
};

TEST_F(ReportBrowser, ScreenshotShowsTheLineAndTheQuestionMarkers) {
  std::vector<json> without_questions;
  std::set<std::string> categories;
  for (const json& e : events_) {
    if (e["kind"] == "question") {
      categories.insert(MarkerCategory(e["source"].get<std::string>(), e["category"].get<std::string>()));
    } else {
      without_questions.push_back(e);
    }
  }
  Image with = Screenshot(WriteReport("report.html", events_));
  Image without = Screenshot(WriteReport("report_without_questions.html", without_questions));
  ASSERT_EQ(with.width, 1200);
  ASSERT_EQ(with.height, 1600);
  ASSERT_EQ(without.width, 1200);

  // The step lines of both plots, far more than the two legend swatches.
  EXPECT_GE(CountColour(with, kBestLineColour), 1500);
  // Each question category's colour: the legends and tables show it in both
  // pages; the markers (a line across the plot, twice) add hundreds of pixels.
  ASSERT_GE(categories.size(), 2u);
  for (const std::string& category : categories) {
    int marked = CountColour(with, CategoryColour(category));
    int unmarked = CountColour(without, CategoryColour(category));
    EXPECT_GE(marked - unmarked, 400) << category << ": " << marked << " vs " << unmarked;
  }
}

TEST_F(ReportBrowser, DomKeepsThePlotsAndTheEscapedText) {
  std::vector<json> events = events_;
  json hostile = {{"session_id", "ss_7f3a9c21"}, {"index", events.size()}, {"time_ms", 1795009000000},
                  {"kind", "turn_end"}, {"turn", 3}, {"is_error", false},
                  {"result", "<script>document.title='pwned'</script><img src=x onerror=alert(1)>"}};
  events.push_back(hostile);
  std::string html = WriteReport("report_dom.html", events);
  testing::ProcessResult r = RunChromium(chromium_, out_, html, "--dump-dom");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& dom = r.out;
  testing::WriteFile(out_ + "/report_dom.dump.html", dom);

  int questions = 0;
  for (const json& e : events) questions += e["kind"] == "question";
  EXPECT_THAT(dom, HasSubstr("<svg class=\"plot\" id=\"plot-evaluations\""));
  EXPECT_THAT(dom, HasSubstr("<svg class=\"plot\" id=\"plot-time\""));
  int markers = 0, lines = 0;
  for (size_t at = dom.find("class=\"question-marker\""); at != std::string::npos;
       at = dom.find("class=\"question-marker\"", at + 1)) {
    ++markers;
  }
  for (size_t at = dom.find("<path class=\"best-line\""); at != std::string::npos;
       at = dom.find("<path class=\"best-line\"", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(markers, 2 * questions);
  EXPECT_EQ(lines, 2);
  // The agent's markup stayed text: no element was made of it, nothing ran.
  EXPECT_THAT(dom, Not(HasSubstr("<script")));
  EXPECT_THAT(dom, Not(HasSubstr("<img")));
  EXPECT_THAT(dom, HasSubstr("&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
  EXPECT_THAT(dom, HasSubstr("<title>KernelSeek session ss_7f3a9c21</title>"));
  EXPECT_THAT(dom, HasSubstr("&lt;b&gt;epilogue&lt;/b&gt;"));  // the human's message
}

}  // namespace
}  // namespace kseek::report
