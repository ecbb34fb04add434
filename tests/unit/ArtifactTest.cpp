// A whole artifact: the toy model written to a .mk file and loaded back runs
// on the CPU executor as the kernels compute it with bf16 weights; loading
// refuses a file whose sections are each intact but disagree with each
// other (a schedule blob, manifest, kernel or weight index that does not fit
// the task graph, a task graph that does not validate), and random
// corruption of any section, checksums fixed, never crashes it.
#include "ToyArtifact.h"

#include "runtime/cpu/CpuExecutor.h"
#include "runtime/format/ArtifactFile.h"
#include "runtime/format/Manifest.h"
#include "runtime/format/RowKernels.h"
#include "runtime/format/ScheduleBlobBuilder.h"
#include "runtime/format/Sha256.h"
#include "runtime/format/TaskGraphCodec.h"
#include "runtime/format/WeightPacking.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace mk {
namespace {

using toy::OwnedSection;

std::unique_ptr<LoadedArtifact> load(const std::vector<uint8_t> &bytes, std::string &error) {
  std::string path = toy::temporaryPath("load.mk");
  toy::writeBytes(path, bytes);
  return loadArtifact(path, error);
}

std::string loadError(const std::vector<uint8_t> &bytes) {
  std::string error;
  EXPECT_EQ(load(bytes, error), nullptr) << "accepted";
  return error;
}

std::vector<uint8_t> &sectionIn(std::vector<OwnedSection> &sections, SectionKind kind) {
  for (OwnedSection &section : sections)
    if (section.kind == kind)
      return section.bytes;
  throw std::runtime_error("no such section");
}

// The toy artifact's file with one section replaced, checksums fixed.
std::vector<uint8_t> withSection(SectionKind kind,
                                 const std::function<void(std::vector<uint8_t> &)> &edit) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model);
  std::vector<OwnedSection> sections = toy::sectionsOf(toy::artifactBytes(built->artifact));
  edit(sectionIn(sections, kind));
  return toy::assemble(sections);
}

std::vector<uint8_t> withManifest(const std::function<void(Manifest &)> &edit) {
  return withSection(SectionKind::Manifest, [&](std::vector<uint8_t> &bytes) {
    Manifest manifest;
    ASSERT_EQ(decodeManifest(bytes, manifest), "");
    edit(manifest);
    bytes = encodeManifest(manifest);
  });
}

void expectContains(const std::string &message, const std::string &fragment) {
  EXPECT_NE(message.find(fragment), std::string::npos) << "message: " << message;
}

TEST(Artifact, LoadsBackAndRunsAsTheKernelsComputeWithBf16Weights) {
  toy::ToyModel model = toy::buildToyModel(4);
  auto built = toy::buildToyArtifact(model, {.eosTokens = {2, 5}});
  std::string path = toy::temporaryPath("toy.mk");
  std::string error;
  ASSERT_TRUE(writeArtifact(path, built->artifact, error)) << error;
  auto loaded = loadArtifact(path, error);
  ASSERT_NE(loaded, nullptr) << error;

  const Artifact &artifact = loaded->artifact;
  EXPECT_EQ(artifact.facts.numLayers, toy::kLayers);
  EXPECT_EQ(artifact.facts.hidden, toy::kHidden);
  EXPECT_EQ(artifact.facts.numHeads, toy::kHeads);
  EXPECT_EQ(artifact.facts.numKvHeads, toy::kKvHeads);
  EXPECT_EQ(artifact.facts.headDim, toy::kHeadDim);
  EXPECT_EQ(artifact.facts.vocab, toy::kVocab);
  EXPECT_EQ(artifact.facts.maxContext, toy::kMaxContext);
  EXPECT_EQ(artifact.facts.numSms, 4u);
  EXPECT_EQ(artifact.facts.eosTokens, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(artifact.facts.targetArch, "sm_90a");
  EXPECT_EQ(artifact.facts.compilerVersion, "mkc toy");
  EXPECT_EQ(artifact.facts.kernelFingerprint, "");
  EXPECT_FALSE(hasKernel(artifact));
  EXPECT_EQ(artifact.scheduleBlob, built->artifact.scheduleBlob);
  EXPECT_TRUE(std::equal(artifact.weightData.begin(), artifact.weightData.end(),
                         built->weights.data.begin(), built->weights.data.end()));
  for (const WeightEntry &entry : artifact.weights)
    EXPECT_EQ(entry.offset % kWeightAlignment, 0u) << entry.name;

  WeightTable weights = unpackWeights(artifact.weights, artifact.weightData);
  WeightTable rounded = toy::roundedWeights(model.weights);
  CpuExecutor executor(artifact.graph, artifact.schedule, weights,
                       {.threaded = false, .checked = true});
  toy::ToyReference reference(rounded);
  for (int64_t token : {3, 17, 5, 36, 0, 22}) {
    std::vector<float> actual = executor.step(token), expected = reference.step(token);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i)
      EXPECT_LE(std::fabs(actual[i] - expected[i]), 1e-5f * std::max(1.0f, std::fabs(expected[i])));
  }
}

TEST(Artifact, CarriesItsKernelWithItsFingerprint) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model, {.cubin = {1, 2, 3}, .ptx = "// ptx"});
  std::string error;
  auto loaded = load(toy::artifactBytes(built->artifact), error);
  ASSERT_NE(loaded, nullptr) << error;
  EXPECT_TRUE(hasKernel(loaded->artifact));
  EXPECT_EQ(loaded->artifact.cubin, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(loaded->artifact.ptx, "// ptx");
  EXPECT_EQ(loaded->artifact.facts.kernelFingerprint, sha256Hex(std::vector<uint8_t>{1, 2, 3}));
}

TEST(Artifact, RefusesAFlippedBitInEverySection) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model, {.cubin = {1, 2, 3}, .ptx = "// ptx"});
  std::vector<uint8_t> bytes = toy::artifactBytes(built->artifact);
  std::string error;
  auto file = MkFile::view(bytes, error);
  ASSERT_NE(file, nullptr) << error;
  for (const SectionEntry &entry : file->entries()) {
    std::vector<uint8_t> flipped = bytes;
    flipped[entry.offset + entry.size / 2] ^= 4;
    expectContains(loadError(flipped), "checksum mismatch in section " +
                                           sectionKindName(entry.kind) + " (bytes [" +
                                           std::to_string(entry.offset));
  }
}

TEST(Artifact, RefusesSectionsThatDisagree) {
  expectContains(loadError(withSection(SectionKind::Schedule, [](auto &blob) { blob[200] ^= 1; })),
                 "section SCHEDULE does not match the task graph");
  expectContains(
      loadError(withSection(SectionKind::Manifest, [](auto &bytes) { bytes.assign(9, 0xff); })),
      "section MANIFEST: manifest: not a valid mk.format.Manifest message");
  expectContains(
      loadError(withSection(SectionKind::TaskGraph, [](auto &bytes) { bytes.resize(100); })),
      "section TASKGRAPH: task graph: ");
  expectContains(loadError(withSection(SectionKind::TaskGraph,
                                       [](auto &bytes) {
                                         TaskGraph graph;
                                         Schedule schedule;
                                         ASSERT_EQ(decodeTaskGraph(bytes, graph, schedule), "");
                                         graph.tasks[5].waits.clear();
                                         bytes = encodeTaskGraph(graph, schedule);
                                       })),
                 "section TASKGRAPH: the task graph does not validate: task 5");
  // A norm's bits changed: the params the blob holds no longer match.
  expectContains(loadError(withSection(SectionKind::Weights,
                                       [](auto &bytes) {
                                         for (uint8_t &byte : bytes)
                                           byte ^= 0x01;
                                       })),
                 "section SCHEDULE does not match the task graph");
  expectContains(
      loadError(withSection(SectionKind::Weights, [](auto &bytes) { bytes.pop_back(); })),
      "section WEIGHTS: ");
  expectContains(loadError(withSection(SectionKind::Cubin, [](auto &bytes) { bytes = {7}; })),
                 "the manifest records no kernel");

  expectContains(loadError(withManifest([](Manifest &m) { m.facts.vocab += 1; })),
                 "model configuration disagrees with the task graph");
  expectContains(loadError(withManifest([](Manifest &m) { m.layout.tokenSlot += 2; })),
                 "buffer layout disagrees with the schedule blob");
  expectContains(loadError(withManifest([](Manifest &m) { m.facts.kernelFingerprint = "00"; })),
                 "the kernel's fingerprint is ''");
  expectContains(loadError(withManifest([](Manifest &m) { m.facts.kernelOptions = "--x\n"; })),
                 "kernel options are not at most 512 printable characters");
  expectContains(loadError(withManifest([](Manifest &m) { m.facts.kernelOptions = "--x"; })),
                 "records kernel options, but no kernel");
  expectContains(loadError(withManifest([](Manifest &m) { m.weights[0].offset = 1u << 30; })),
                 "lies outside the WEIGHTS section");
  expectContains(loadError(withManifest([](Manifest &m) { m.weights[1].offset += 1; })),
                 "is not a multiple of 128 elements");
  expectContains(loadError(withManifest([](Manifest &m) { m.weights.pop_back(); })),
                 "is not in the weight index");
  expectContains(loadError(withManifest([](Manifest &m) { m.facts.eosTokens = {toy::kVocab}; })),
                 "EOS token 37 is outside the vocabulary");
  for (const char *arch : {"", "bogus", "sm_70", "sm_9", "sm_90x", "sm_1000"})
    expectContains(loadError(withManifest([&](Manifest &m) { m.facts.targetArch = arch; })),
                   "section MANIFEST: target arch '" + std::string(arch) +
                       "' is not a GPU architecture mkc compiles for");
  for (const char *version : {"", "gcc 12", "mkc\n", "mkc 0.1\x01"})
    expectContains(
        loadError(withManifest([&](Manifest &m) { m.facts.compilerVersion = version; })),
        "section MANIFEST: compiler_version is not \"mkc\" and a version");
}

// A NaN or an infinity in WEIGHTS (bf16: the exponent's bits all ones) is
// refused at load with the weight and the byte: mkc refuses such a model at
// compile time, so every engine stops before running one.
TEST(Artifact, RefusesNonFiniteWeights) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model);
  const WeightEntry &second = built->artifact.weights.at(1);
  for (uint16_t bits : {uint16_t(0x7fc0), uint16_t(0xff80), uint16_t(0x7f81)}) {
    std::string error = loadError(withSection(SectionKind::Weights, [&](auto &bytes) {
      uint64_t at = 2 * (second.offset + 3);
      bytes[at] = static_cast<uint8_t>(bits);
      bytes[at + 1] = static_cast<uint8_t>(bits >> 8);
    }));
    expectContains(error, "section WEIGHTS: weight '" + second.name + "' element 3 (byte " +
                              std::to_string(2 * (second.offset + 3)) + " of the section) is " +
                              (bits == 0xff80 ? "infinite" : "NaN"));
  }
}

// The toy model with a prefill chunk of 3 and a batch of 2 (toy::makeRows)
// in its ROWSTEPS section.
std::vector<ScheduledGraph> toyRowSteps() {
  toy::ToyModel chunk = toy::buildToyModel(), batch = toy::buildToyModel();
  toy::makeRows(chunk.graph, 3, 1);
  toy::makeRows(batch.graph, 2, 2);
  return {{chunk.graph, chunk.schedule}, {batch.graph, batch.schedule}};
}

std::vector<uint8_t> withRowSteps(const std::function<void(std::vector<ScheduledGraph> &)> &edit) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model, {.rowSteps = toyRowSteps()});
  std::vector<OwnedSection> sections = toy::sectionsOf(toy::artifactBytes(built->artifact));
  std::vector<uint8_t> &bytes = sectionIn(sections, SectionKind::RowSteps);
  std::vector<ScheduledGraph> steps;
  EXPECT_EQ(decodeRowSteps(bytes, steps), "");
  edit(steps);
  bytes = encodeRowSteps(steps);
  return toy::assemble(sections);
}

TEST(Artifact, CarriesItsStepsOfSeveralRows) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model, {.rowSteps = toyRowSteps()});
  std::string error;
  auto loaded = load(toy::artifactBytes(built->artifact), error);
  ASSERT_NE(loaded, nullptr) << error;
  ASSERT_EQ(loaded->artifact.rowSteps.size(), 2u);
  EXPECT_EQ(loaded->artifact.rowSteps[0].graph.rows, 3);
  EXPECT_EQ(loaded->artifact.rowSteps[1].graph.sequences, 2);
  // Without any, the file has no ROWSTEPS section.
  auto plain = toy::buildToyArtifact(model);
  for (const OwnedSection &section : toy::sectionsOf(toy::artifactBytes(plain->artifact)))
    EXPECT_NE(section.kind, SectionKind::RowSteps);
}

TEST(Artifact, RefusesStepsOfSeveralRowsThatDoNotFit) {
  expectContains(loadError(withRowSteps([](auto &steps) { steps[0].graph.tasks[3].waits.clear(); })),
                 "section ROWSTEPS: step 0 (3 rows over 1 sequences) does not validate: task 3");
  expectContains(loadError(withRowSteps([](auto &steps) {
                   toy::ToyModel decode = toy::buildToyModel();
                   steps.push_back({decode.graph, decode.schedule});
                 })),
                 "step 2 (1 rows over 1 sequences) holds one row");
  expectContains(loadError(withRowSteps([](auto &steps) { steps.push_back(steps[0]); })),
                 "step 2 (3 rows over 1 sequences) is a second prefill chunk");
  expectContains(loadError(withRowSteps([](auto &steps) { steps.push_back(steps[1]); })),
                 "step 2 (2 rows over 2 sequences) is a second batch of 2");
  expectContains(loadError(withRowSteps([](auto &steps) {
                   for (Buffer &buffer : steps[0].graph.buffers)
                     if (buffer.kind == BufferKind::KVCache)
                       buffer.name += "x";
                 })),
                 "is a prefill chunk whose KV caches are not the task graph's");
  expectContains(loadError(withRowSteps([](auto &steps) {
                   steps[1].graph.operations[1].weights[0].name = "missing";
                 })),
                 "step 1 (2 rows over 2 sequences): weight 'missing' is not in the weight index");
  expectContains(loadError(withRowSteps([](auto &steps) { steps.resize(kMaxRowSteps + 1, steps[1]); })),
                 "17 steps of several rows, more than the 16");
  // The encoding itself.
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model, {.rowSteps = toyRowSteps()});
  std::vector<OwnedSection> sections = toy::sectionsOf(toy::artifactBytes(built->artifact));
  sectionIn(sections, SectionKind::RowSteps).resize(100);
  expectContains(loadError(toy::assemble(sections)), "section ROWSTEPS: step 0: ");
  sectionIn(sections, SectionKind::RowSteps) = {1, 0, 0};
  expectContains(loadError(toy::assemble(sections)),
                 "section ROWSTEPS: a count of steps needs 4 bytes, the section has 3");
}

// A stand-in CUBIN: the loader checks only that a kernel is an ELF image
// (the GPU checks the rest as it loads it).
std::vector<uint8_t> fakeCubin(uint8_t tag) { return {0x7f, 'E', 'L', 'F', tag, 0, 1, 2}; }

// The batch's kernel in ROWKERNELS beside the prefill chunk's none: back
// as written; a step without one has no batch artifact; what does not fit
// the steps is refused by name.
TEST(Artifact, CarriesItsRowStepsKernels) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(
      model, {.rowSteps = toyRowSteps(), .rowKernels = {{}, fakeCubin(7)}});
  ASSERT_NE(built, nullptr);
  std::string error;
  auto loaded = load(toy::artifactBytes(built->artifact), error);
  ASSERT_NE(loaded, nullptr) << error;
  ASSERT_EQ(loaded->artifact.rowKernels.size(), 2u);
  EXPECT_TRUE(loaded->artifact.rowKernels[0].empty());
  EXPECT_EQ(loaded->artifact.rowKernels[1], fakeCubin(7));
  EXPECT_FALSE(hasRowKernel(loaded->artifact, 0));
  EXPECT_TRUE(hasRowKernel(loaded->artifact, 1));

  // The batch's artifact: its graph, its kernel, a blob of its rows.
  auto batch = rowStepArtifact(loaded->artifact, 1, error);
  ASSERT_NE(batch, nullptr) << error;
  EXPECT_EQ(batch->graph.rows, 2);
  EXPECT_EQ(batch->cubin, fakeCubin(7));
  MkBlobHeader header = readBlobHeader(batch->scheduleBlob);
  EXPECT_EQ(header.rows, 2u);
  EXPECT_EQ(header.sequences, 2u);
  EXPECT_EQ(header.totalBytes, batch->scheduleBlob.size());
  EXPECT_EQ(rowStepArtifact(loaded->artifact, 0, error), nullptr);
  expectContains(error, "no kernel for this step");

  // Refusals: a count that is not the steps', a kernel that is no ELF image.
  try {
    toy::buildToyArtifact(model, {.rowSteps = toyRowSteps(), .rowKernels = {{}}});
    ADD_FAILURE() << "one kernel for two steps was taken";
  } catch (const std::exception &failure) {
    expectContains(failure.what(), "1 kernels for 2 steps of several rows");
  }
  std::vector<OwnedSection> sections = toy::sectionsOf(toy::artifactBytes(built->artifact));
  sectionIn(sections, SectionKind::RowKernels) = encodeRowKernels({fakeCubin(1)});
  expectContains(loadError(toy::assemble(sections)),
                 "section ROWKERNELS: 1 kernels for 2 steps of several rows");
  sectionIn(sections, SectionKind::RowKernels) = encodeRowKernels({{}, {1, 2, 3, 4, 5}});
  expectContains(loadError(toy::assemble(sections)),
                 "section ROWKERNELS: step 1's kernel is not a CUBIN (no ELF header)");
  std::vector<uint8_t> truncated = encodeRowKernels({{}, fakeCubin(1)});
  truncated.resize(truncated.size() - 3);
  sectionIn(sections, SectionKind::RowKernels) = truncated;
  expectContains(loadError(toy::assemble(sections)),
                 "section ROWKERNELS: kernel 1 of 8 bytes at byte 20 is past the section's 25 bytes");
  sectionIn(sections, SectionKind::RowKernels) = {2, 0};
  expectContains(loadError(toy::assemble(sections)),
                 "section ROWKERNELS: a count of kernels needs 4 bytes, the section has 2");
  // Without kernels, the file has no ROWKERNELS section.
  auto plain = toy::buildToyArtifact(model, {.rowSteps = toyRowSteps()});
  for (const OwnedSection &section : toy::sectionsOf(toy::artifactBytes(plain->artifact)))
    EXPECT_NE(section.kind, SectionKind::RowKernels);
}

TEST(Artifact, NeverCrashesOnCorruptSectionsWithValidChecksums) {
  toy::ToyModel model = toy::buildToyModel();
  auto built = toy::buildToyArtifact(model, {.cubin = {1, 2, 3},
                                             .rowSteps = toyRowSteps(),
                                             .rowKernels = {{}, fakeCubin(3)}});
  std::vector<OwnedSection> original = toy::sectionsOf(toy::artifactBytes(built->artifact));
  std::mt19937_64 random(7);
  for (SectionKind kind : {SectionKind::Manifest, SectionKind::TaskGraph, SectionKind::Schedule,
                           SectionKind::Weights, SectionKind::RowSteps, SectionKind::RowKernels}) {
    int refused = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<OwnedSection> sections = original;
      std::vector<uint8_t> &bytes = sectionIn(sections, kind);
      for (int flips = 1 + static_cast<int>(random() % 4); flips > 0; --flips)
        bytes[random() % bytes.size()] ^= static_cast<uint8_t>(1u << (random() % 8));
      std::vector<uint8_t> file = toy::assemble(sections);
      std::string error;
      auto container = MkFile::view(file, error);
      ASSERT_NE(container, nullptr) << error;
      refused += loadArtifact(std::move(container), error) == nullptr;
    }
    EXPECT_GT(refused, 0) << sectionKindName(kind);
  }
}

TEST(Sha256, MatchesTheStandardVectors) {
  auto hash = [](const std::string &text) {
    return sha256Hex(std::span(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  };
  EXPECT_EQ(hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hash(std::string(1000, 'a')),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

} // namespace
} // namespace mk
