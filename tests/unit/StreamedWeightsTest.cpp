// The pieces that keep a big model's weights out of memory: a .mk written
// with its WEIGHTS section streamed is the file written from memory, byte for
// byte; weights read on demand pack to the same section and are let go once
// written; a transposed view reads what a transpose holds; a loaded file's
// weights viewed in place run on the CPU executor with the same bits as
// widened copies; pages let go of read back the same.
#include "ToyArtifact.h"

#include "core/support/MappedFile.h"
#include "core/weights/TransposedValues.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/format/ArtifactFile.h"
#include "runtime/format/WeightPacking.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sys/stat.h>

namespace mk {
namespace {

using toy::OwnedSection;

bool exists(const std::string &path) {
  struct stat status;
  return ::stat(path.c_str(), &status) == 0;
}

std::vector<uint8_t> filled(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<uint8_t>(seed + i * 13);
  return bytes;
}

// `bytes` handed over in pieces of `piece` bytes.
StreamedSection streamed(const std::vector<uint8_t> &bytes, size_t piece,
                         SectionKind kind = SectionKind::Weights) {
  return {kind, bytes.size(), [&bytes, piece](const StreamedSection::Sink &sink, std::string &) {
            for (size_t done = 0; done < bytes.size(); done += piece)
              if (!sink(std::span(bytes).subspan(done, std::min(piece, bytes.size() - done))))
                return false;
            return true;
          }};
}

TEST(StreamedWeights, AStreamedSectionWritesTheBytesOfOneHeldInMemory) {
  std::vector<uint8_t> manifest = filled(100, 1), graph = filled(333, 2), blob = filled(64, 3);
  std::vector<uint8_t> weights = filled(100003, 5);
  std::vector<SectionData> small = {{SectionKind::Manifest, manifest},
                                    {SectionKind::TaskGraph, graph},
                                    {SectionKind::Schedule, blob},
                                    {SectionKind::Ptx, {}},
                                    {SectionKind::Cubin, {}}};
  std::vector<SectionData> all = small;
  all.push_back({SectionKind::Weights, weights});
  std::string held = toy::temporaryPath("held.mk"), written = toy::temporaryPath("streamed.mk");
  std::string error;
  ASSERT_TRUE(writeMkFile(held, all, error)) << error;
  for (size_t piece : {size_t{1}, size_t{4096}, size_t{65537}, weights.size()}) {
    ASSERT_TRUE(writeMkFile(written, small, streamed(weights, piece), error)) << error;
    EXPECT_EQ(toy::readBytes(written), toy::readBytes(held)) << "pieces of " << piece;
  }
  // And it reads back: every checksum holds.
  EXPECT_NE(MkFile::open(written, error), nullptr) << error;
}

TEST(StreamedWeights, AProducerThatFailsOrMiscountsLeavesNoFile) {
  std::vector<uint8_t> weights = filled(5000, 7);
  std::vector<SectionData> small = {{SectionKind::Manifest, weights}};
  std::string path = toy::temporaryPath("failed.mk");
  std::string error;

  StreamedSection refusing{SectionKind::Weights, 100,
                           [](const StreamedSection::Sink &, std::string &why) {
                             why = "weight 'w' element 3 is NaN";
                             return false;
                           }};
  EXPECT_FALSE(writeMkFile(path, small, refusing, error));
  // The producer's own words, not a complaint about the temporary file.
  EXPECT_EQ(error, "weight 'w' element 3 is NaN");
  EXPECT_FALSE(exists(path));

  std::vector<uint8_t> shorter(weights.begin(), weights.begin() + 4000);
  StreamedSection tooFew = streamed(shorter, 1000);
  tooFew.size = weights.size();
  EXPECT_FALSE(writeMkFile(path, small, tooFew, error));
  EXPECT_NE(error.find("the WEIGHTS section has 4000 of its 5000 bytes"), std::string::npos)
      << error;
  EXPECT_FALSE(exists(path));

  StreamedSection tooMany = streamed(weights, 1000);
  tooMany.size = 4500;
  EXPECT_FALSE(writeMkFile(path, small, tooMany, error));
  EXPECT_NE(error.find("grew past its 4500 bytes"), std::string::npos) << error;
  EXPECT_FALSE(exists(path));
}

// A weight's values given on demand, counting its releases.
class CountingValues final : public WeightValues {
public:
  explicit CountingValues(std::vector<float> values) : values(std::move(values)) {}
  void read(uint64_t begin, uint64_t count, float *out) const override {
    std::copy_n(values.begin() + static_cast<ptrdiff_t>(begin), count, out);
  }
  void release() const override { ++releases; }

  std::vector<float> values;
  mutable int releases = 0;
};

TEST(StreamedWeights, LazyWeightsPackToTheSectionHeldOnesGiveAndAreLetGo) {
  toy::ToyModel model = toy::buildToyModel();
  WeightTable lazy;
  std::vector<std::shared_ptr<CountingValues>> sources;
  for (const auto &[name, weight] : model.weights.all()) {
    Weight copy = weight;
    sources.push_back(std::make_shared<CountingValues>(weight.values));
    copy.source = sources.back();
    copy.values.clear();
    lazy.add(std::move(copy));
  }
  std::string error;
  PackedWeights held, streamedPack;
  ASSERT_TRUE(packWeights(model.graph, model.weights, held, error)) << error;
  ASSERT_TRUE(packWeights(model.graph, lazy, streamedPack, error)) << error;
  EXPECT_EQ(streamedPack.data, held.data);
  ASSERT_EQ(streamedPack.index.size(), held.index.size());
  for (const auto &source : sources)
    EXPECT_EQ(source->releases, 1);

  // A planned artifact written as it streams is the built one's file.
  auto built = toy::buildToyArtifact(model);
  ArtifactOptions options;
  options.compilerVersion = "mkc toy";
  auto planned = planArtifact(model.graph, model.schedule, lazy, options, error);
  ASSERT_NE(planned, nullptr) << error;
  std::string path = toy::temporaryPath("planned.mk");
  ASSERT_TRUE(writeArtifact(path, planned->artifact, planned->weights, error)) << error;
  EXPECT_EQ(toy::readBytes(path), toy::artifactBytes(built->artifact));
}

TEST(StreamedWeights, ANonFiniteValueIsNamedWithItsElement) {
  toy::ToyModel model = toy::buildToyModel();
  WeightPlan plan;
  std::string error;
  ASSERT_TRUE(planWeights(model.graph, model.weights, plan, error)) << error;
  const WeightEntry second = plan.index.at(1);
  Weight broken = *model.weights.find(second.name);
  broken.values[7] = std::numeric_limits<float>::quiet_NaN();
  broken.source = std::make_shared<CountingValues>(broken.values);
  broken.values.clear();
  WeightTable table;
  for (const auto &[name, weight] : model.weights.all())
    table.add(name == second.name ? broken : weight);
  ASSERT_TRUE(planWeights(model.graph, table, plan = {}, error)) << error;
  EXPECT_FALSE(streamWeights(plan, [](std::span<const uint8_t>) { return true; }, error));
  EXPECT_EQ(error, "weight '" + second.name + "' element 7 (byte " +
                       std::to_string(2 * (second.offset + 7)) +
                       " of the section) is NaN: a model with NaN or infinite weights computes "
                       "NaN logits");
  // A finite f32 that rounds to infinity says so.
  broken.source = std::make_shared<CountingValues>(std::vector<float>(
      static_cast<size_t>(broken.numElements()), std::numeric_limits<float>::max()));
  WeightTable rounding;
  for (const auto &[name, weight] : model.weights.all())
    rounding.add(name == second.name ? broken : weight);
  ASSERT_TRUE(planWeights(model.graph, rounding, plan = {}, error)) << error;
  EXPECT_FALSE(streamWeights(plan, [](std::span<const uint8_t>) { return true; }, error));
  EXPECT_NE(error.find("element 0 (byte"), std::string::npos) << error;
  EXPECT_NE(error.find("is infinite"), std::string::npos) << error;
  EXPECT_NE(error.find("(rounded to bf16)"), std::string::npos) << error;
}

TEST(StreamedWeights, ATransposedViewReadsAnyRangeOfTheTranspose) {
  for (auto [rows, cols] : {std::pair<uint64_t, uint64_t>{1, 1}, {3, 5}, {37, 70}, {64, 1}}) {
    std::vector<float> values(rows * cols);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(i) * 0.5f - 3.0f;
    auto view = transposedValues(std::make_shared<CountingValues>(values), rows, cols);
    std::vector<float> expected(values.size());
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c)
        expected[c * rows + r] = values[r * cols + c];
    for (uint64_t begin = 0; begin < values.size(); begin += 7)
      for (uint64_t count : {uint64_t{1}, uint64_t{rows}, uint64_t{rows + 3}, uint64_t{200}}) {
        uint64_t n = std::min<uint64_t>(count, values.size() - begin);
        std::vector<float> got(n);
        view->read(begin, n, got.data());
        EXPECT_TRUE(std::equal(got.begin(), got.end(), expected.begin() + begin))
            << rows << "x" << cols << " from " << begin << " count " << n;
      }
  }
}

TEST(StreamedWeights, TheCpuExecutorOnViewedWeightsGivesTheBitsOfWidenedCopies) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model);
  const Artifact &artifact = built->artifact;
  WeightTable widened = unpackWeights(artifact.weights, artifact.weightData);
  WeightTable viewed = viewWeights(artifact.weights, artifact.weightData);
  ASSERT_TRUE(viewed.hasLazyWeights());
  CpuExecutor fromCopies(artifact.graph, artifact.schedule, widened);
  CpuExecutor fromViews(artifact.graph, artifact.schedule, viewed);
  for (int64_t token : {3, 1, 4, 1, 5}) {
    std::vector<float> expected = fromCopies.step(token), got = fromViews.step(token);
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)));
  }
}

TEST(StreamedWeights, PagesLetGoReadBackTheSame) {
  std::vector<uint8_t> bytes = filled(5 * 4096 + 123, 9);
  std::string path = toy::temporaryPath("pages.bin");
  toy::writeBytes(path, bytes);
  std::string error;
  auto mapped = MappedFile::open(path, error);
  ASSERT_NE(mapped, nullptr) << error;
  std::span<const uint8_t> all = mapped->bytes();
  ASSERT_TRUE(std::equal(all.begin(), all.end(), bytes.begin()));
  mapped->releasePages(all.subspan(100, 3 * 4096));
  mapped->releasePages(all);
  // A range outside the mapping is left alone rather than passed to madvise.
  mapped->releasePages(std::span(bytes));
  EXPECT_TRUE(std::equal(all.begin(), all.end(), bytes.begin()));
}

} // namespace
} // namespace mk
