#include "runtime/format/ArtifactFile.h"

#include "core/validator/Validator.h"
#include "runtime/format/ArtifactBuilder.h"
#include "runtime/format/Manifest.h"
#include "runtime/format/RankKernel.h"
#include "runtime/format/RowKernels.h"
#include "runtime/format/ScheduleBlobBuilder.h"
#include "runtime/format/TaskGraphCodec.h"
#include "runtime/format/WeightPacking.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace mk {

namespace {

std::span<const uint8_t> asBytes(const std::string &text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}

Manifest manifestOf(const Artifact &artifact) {
  Manifest manifest;
  manifest.facts = artifact.facts;
  manifest.weights = artifact.weights;
  manifest.hasKernel = hasKernel(artifact);
  MkBlobHeader header = readBlobHeader(artifact.scheduleBlob);
  manifest.layout = {header.activationElements, header.kvElements,   header.numParams,
                     header.tokenSlot,          header.logitsOffset, header.vocab};
  return manifest;
}

// The SCHEDULE section against the blob this graph, index and weights give.
std::string checkBlob(const Artifact &artifact) {
  std::vector<uint8_t> expected;
  try {
    expected = buildScheduleBlob(artifact.graph, artifact.schedule, artifact.weights,
                                 artifact.weightData);
  } catch (const ScheduleBlobError &error) {
    return std::string("the task graph does not fit its weights: ") + error.what();
  }
  const std::vector<uint8_t> &stored = artifact.scheduleBlob;
  if (stored == expected)
    return "";
  size_t at = 0;
  while (at < stored.size() && at < expected.size() && stored[at] == expected[at])
    ++at;
  return "section SCHEDULE does not match the task graph: " + std::to_string(stored.size()) +
         " bytes, " + std::to_string(expected.size()) + " expected, first difference at byte " +
         std::to_string(at);
}

// The strings a loader prints or acts on: the compiler's name and version,
// and the GPU architecture, "sm_" and a compute capability of 8.0 or later
// (the kernel's least), as mkc writes them. Anything else was not written by
// mkc, or was changed since.
std::string checkIdentity(const ModelFacts &facts) {
  const std::string &version = facts.compilerVersion;
  bool printable = std::all_of(version.begin(), version.end(),
                               [](char c) { return c >= 0x20 && c < 0x7f; });
  if (version.rfind("mkc ", 0) != 0 || version.size() > 64 || !printable)
    return "compiler_version is not \"mkc\" and a version (at most 64 printable characters)";
  const std::string &arch = facts.targetArch;
  size_t digits = 0;
  while (3 + digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[3 + digits])))
    ++digits;
  std::string suffix = arch.size() > 3 + digits ? arch.substr(3 + digits) : "";
  bool wellFormed = arch.rfind("sm_", 0) == 0 && (digits == 2 || digits == 3) &&
                    (suffix.empty() || suffix == "a" || suffix == "f");
  if (!wellFormed || std::stoi(arch.substr(3, digits)) < 80)
    return "target arch '" + (printable ? arch.substr(0, 32) : std::string("?")) +
           "' is not a GPU architecture mkc compiles for (sm_80 or later, e.g. sm_90a)";
  return "";
}

// The manifest's statements against what the other sections say.
std::string checkManifest(const Manifest &manifest, const Artifact &artifact) {
  const ModelFacts &facts = manifest.facts;
  if (std::string problem = checkIdentity(facts); !problem.empty())
    return problem;
  ModelFacts derived = describeModel(artifact.graph, artifact.schedule);
  if (facts.numLayers != derived.numLayers || facts.hidden != derived.hidden ||
      facts.numHeads != derived.numHeads || facts.numKvHeads != derived.numKvHeads ||
      facts.headDim != derived.headDim || facts.vocab != derived.vocab ||
      facts.maxContext != derived.maxContext || facts.numSms != derived.numSms)
    return "the manifest's model configuration disagrees with the task graph";
  Manifest expected = manifestOf(artifact);
  const BufferLayout &a = manifest.layout, &b = expected.layout;
  if (a.activationElements != b.activationElements || a.kvElements != b.kvElements ||
      a.params != b.params || a.tokenSlot != b.tokenSlot || a.logitsOffset != b.logitsOffset ||
      a.logitsLength != b.logitsLength)
    return "the manifest's buffer layout disagrees with the schedule blob";
  if (manifest.hasKernel != hasKernel(artifact))
    return manifest.hasKernel
               ? "the manifest records a kernel, the CUBIN and PTX sections are empty"
               : "the manifest records no kernel, the CUBIN or PTX section is not empty";
  std::string fingerprint = kernelFingerprint(artifact.cubin, artifact.ptx);
  if (facts.kernelFingerprint != fingerprint)
    return "the kernel's fingerprint is '" + fingerprint + "', the manifest records '" +
           facts.kernelFingerprint + "'";
  // Printed by inspect as it stands: printable, short, and only beside a kernel.
  const std::string &options = facts.kernelOptions;
  if (options.size() > 512 || !std::all_of(options.begin(), options.end(), [](char c) {
        return c >= 0x20 && c < 0x7f;
      }))
    return "the manifest's kernel options are not at most 512 printable characters";
  if (!options.empty() && !manifest.hasKernel)
    return "the manifest records kernel options, but no kernel";
  return checkSpecialTokens(facts.eosTokens, facts.generation.bosToken, facts.vocab);
}

// What the checksum pass saw of WEIGHTS (MkFile's SectionPieceVisitor): for
// loadArtifact(path), every bf16 value was looked at there, so that the
// weights are read from the file once, not once more for the finite check.
struct WeightsScan {
  bool scanned = false;   // the visitor saw the whole section
  bool nonFinite = false; // some value's exponent is all ones: NaN or infinity
};

// The visitor that fills `scan`: a bf16 is non-finite when its exponent's
// eight bits are all ones.
SectionPieceVisitor scanWeights(WeightsScan &scan) {
  return [&scan](SectionKind kind, uint64_t offset, std::span<const uint8_t> piece) {
    if (kind != SectionKind::Weights)
      return;
    scan.scanned = true;
    // WEIGHTS starts on a page and pieces are whole MiBs: values never straddle them.
    if (offset % 2 != 0 || piece.size() % 2 != 0) {
      scan.nonFinite = true; // not whole values: load() checks and refuses
      return;
    }
    // The section is page-aligned in a mapping (or a view's bytes, which
    // MkFile::open never is), so its values are 2-byte aligned.
    const uint16_t *bits = reinterpret_cast<const uint16_t *>(piece.data());
    uint16_t found = 0;
    for (size_t i = 0; i < piece.size() / 2; ++i)
      found |= static_cast<uint16_t>((bits[i] & 0x7f80u) == 0x7f80u);
    scan.nonFinite = scan.nonFinite || found;
  };
}

std::string load(const MkFile &file, Artifact &artifact, const WeightsScan &scan = {}) {
  Manifest manifest;
  if (std::string problem = decodeManifest(file.section(SectionKind::Manifest), manifest);
      !problem.empty())
    return "section MANIFEST: " + problem;
  if (std::string problem =
          decodeTaskGraph(file.section(SectionKind::TaskGraph), artifact.graph, artifact.schedule);
      !problem.empty())
    return "section TASKGRAPH: " + problem;
  if (std::string problem = validateSchedule(artifact.graph, artifact.schedule); !problem.empty())
    return "section TASKGRAPH: the task graph does not validate: " + problem;

  std::span<const uint8_t> weights = file.section(SectionKind::Weights);
  if (weights.size() % 2 != 0)
    return "section WEIGHTS: " + std::to_string(weights.size()) + " bytes, not whole bf16 values";
  artifact.weightData =
      std::span(reinterpret_cast<const uint16_t *>(weights.data()), weights.size() / 2);
  artifact.weights = manifest.weights;
  if (std::string problem = checkWeightIndex(artifact.weights, artifact.weightData);
      !problem.empty())
    return "section MANIFEST: " + problem;
  // Weight by weight, each one's pages let go once checked: a big model is
  // read through once here, and need not stay resident for it. Not needed
  // when the checksum pass found every value finite; when it found one that
  // is not, this finds which weight holds it (or that only padding does).
  bool allFinite = scan.scanned && !scan.nonFinite;
  if (!allFinite)
    for (const WeightEntry &entry : artifact.weights) {
      if (std::string problem = checkWeightValues({entry}, artifact.weightData); !problem.empty())
        return "section WEIGHTS: " + problem;
      const uint8_t *first =
          reinterpret_cast<const uint8_t *>(artifact.weightData.data() + entry.offset);
      file.releasePages({first, entry.rows * entry.cols * 2});
    }

  std::span<const uint8_t> blob = file.section(SectionKind::Schedule);
  artifact.scheduleBlob.assign(blob.begin(), blob.end());
  std::span<const uint8_t> cubin = file.section(SectionKind::Cubin);
  artifact.cubin.assign(cubin.begin(), cubin.end());
  std::span<const uint8_t> ptx = file.section(SectionKind::Ptx);
  artifact.ptx.assign(ptx.begin(), ptx.end());
  std::span<const uint8_t> tokenizer = file.section(SectionKind::Tokenizer);
  artifact.tokenizerJson.assign(tokenizer.begin(), tokenizer.end());
  if (std::string problem = decodeRowSteps(file.section(SectionKind::RowSteps), artifact.rowSteps);
      !problem.empty())
    return "section ROWSTEPS: " + problem;
  if (std::string problem = checkRowSteps(artifact.graph, artifact.rowSteps, artifact.weights);
      !problem.empty())
    return "section ROWSTEPS: " + problem;
  if (std::string problem =
          decodeRowKernels(file.section(SectionKind::RowKernels), artifact.rowKernels);
      !problem.empty())
    return "section ROWKERNELS: " + problem;
  if (std::string problem = checkRowKernels(artifact.rowSteps, artifact.rowKernels);
      !problem.empty())
    return "section ROWKERNELS: " + problem;
  if (std::string problem = decodeRanks(file.section(SectionKind::Ranks), artifact.ranks,
                                        artifact.weightSlices);
      !problem.empty())
    return "section RANKS: " + problem;
  if (std::string problem =
          checkRanks(artifact.graph, artifact.ranks, artifact.weightSlices, artifact.weights);
      !problem.empty())
    return "section RANKS: " + problem;
  if (std::string problem =
          decodeRankKernel(file.section(SectionKind::RankKernel), artifact.rankKernel);
      !problem.empty())
    return "section RANKKERNEL: " + problem;
  if (std::string problem = checkRankKernel(artifact.ranks, artifact.rankKernel); !problem.empty())
    return "section RANKKERNEL: " + problem;
  artifact.facts = manifest.facts;
  if (std::string problem = checkBlob(artifact); !problem.empty())
    return problem;
  if (std::string problem = checkManifest(manifest, artifact); !problem.empty())
    return "section MANIFEST: " + problem;
  return "";
}

} // namespace

namespace {

// Every section but WEIGHTS, in the order mkc writes them; `manifest`,
// `graph`, `rowSteps`, `rowKernels`, `ranks` and `rankKernel` hold the
// encodings the sections view.
std::vector<SectionData> smallSections(const Artifact &artifact, std::vector<uint8_t> &manifest,
                                       std::vector<uint8_t> &graph,
                                       std::vector<uint8_t> &rowSteps,
                                       std::vector<uint8_t> &rowKernels,
                                       std::vector<uint8_t> &ranks,
                                       std::vector<uint8_t> &rankKernel) {
  manifest = encodeManifest(manifestOf(artifact));
  graph = encodeTaskGraph(artifact.graph, artifact.schedule);
  std::vector<SectionData> sections = {{SectionKind::Manifest, manifest},
                                       {SectionKind::TaskGraph, graph},
                                       {SectionKind::Schedule, artifact.scheduleBlob},
                                       {SectionKind::Ptx, asBytes(artifact.ptx)},
                                       {SectionKind::Cubin, artifact.cubin}};
  if (!artifact.tokenizerJson.empty())
    sections.push_back({SectionKind::Tokenizer, asBytes(artifact.tokenizerJson)});
  if (!artifact.rowSteps.empty()) {
    rowSteps = encodeRowSteps(artifact.rowSteps);
    sections.push_back({SectionKind::RowSteps, rowSteps});
  }
  if (!artifact.rowKernels.empty()) {
    rowKernels = encodeRowKernels(artifact.rowKernels);
    sections.push_back({SectionKind::RowKernels, rowKernels});
  }
  if (!artifact.ranks.empty()) {
    ranks = encodeRanks(artifact.ranks, artifact.weightSlices);
    sections.push_back({SectionKind::Ranks, ranks});
  }
  if (!artifact.rankKernel.cubin.empty()) {
    rankKernel = encodeRankKernel(artifact.rankKernel);
    sections.push_back({SectionKind::RankKernel, rankKernel});
  }
  return sections;
}

} // namespace

bool writeArtifact(const std::string &path, const Artifact &artifact, std::string &error) {
  std::vector<uint8_t> manifest, graph, rowSteps, rowKernels, ranks, rankKernel;
  std::vector<SectionData> sections =
      smallSections(artifact, manifest, graph, rowSteps, rowKernels, ranks, rankKernel);
  std::span<const uint8_t> weights(reinterpret_cast<const uint8_t *>(artifact.weightData.data()),
                                   artifact.weightData.size() * 2);
  // Weights last: the big section, on its page alignment, after everything small.
  sections.push_back({SectionKind::Weights, weights});
  return writeMkFile(path, sections, error);
}

bool writeArtifact(const std::string &path, const Artifact &artifact, const WeightPlan &weights,
                   std::string &error) {
  std::vector<uint8_t> manifest, graph, rowSteps, rowKernels, ranks, rankKernel;
  std::vector<SectionData> sections =
      smallSections(artifact, manifest, graph, rowSteps, rowKernels, ranks, rankKernel);
  StreamedSection packed{SectionKind::Weights, weights.elements * 2,
                         [&](const StreamedSection::Sink &sink, std::string &packError) {
                           return streamWeights(weights, sink, packError);
                         }};
  return writeMkFile(path, sections, packed, error);
}

namespace {

std::unique_ptr<LoadedArtifact> loadScanned(std::unique_ptr<MkFile> file, const WeightsScan &scan,
                                            std::string &error) {
  auto loaded = std::make_unique<LoadedArtifact>();
  loaded->file = std::move(file);
  error = load(*loaded->file, loaded->artifact, scan);
  if (!error.empty())
    return nullptr;
  const MkFile *mapped = loaded->file.get();
  loaded->artifact.releasePages = [mapped](std::span<const uint8_t> range) {
    mapped->releasePages(range);
  };
  return loaded;
}

} // namespace

std::unique_ptr<LoadedArtifact> loadArtifact(std::unique_ptr<MkFile> file, std::string &error) {
  return loadScanned(std::move(file), {}, error);
}

std::unique_ptr<LoadedArtifact> loadArtifact(const std::string &path, std::string &error) {
  WeightsScan scan;
  std::unique_ptr<MkFile> file = MkFile::open(path, error, scanWeights(scan));
  if (!file)
    return nullptr;
  auto loaded = loadScanned(std::move(file), scan, error);
  if (!loaded)
    error = "'" + path + "': " + error;
  return loaded;
}

} // namespace mk
