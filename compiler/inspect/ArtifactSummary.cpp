#include "compiler/inspect/ArtifactSummary.h"
#include "compiler/inspect/TextFormat.h"
#include "core/taskgraph/TaskNames.h"
#include "runtime/format/RankKernel.h"
#include "runtime/format/RowKernels.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace mk {

namespace {

uint64_t weightBytes(const WeightEntry &entry) { return entry.rows * entry.cols * 2; }

// The weights, largest first, ties by name so that the order is stable.
std::vector<const WeightEntry *> bySize(const Artifact &artifact) {
  std::vector<const WeightEntry *> sorted;
  for (const WeightEntry &entry : artifact.weights)
    sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(), [](const WeightEntry *a, const WeightEntry *b) {
    return weightBytes(*a) != weightBytes(*b) ? weightBytes(*a) > weightBytes(*b)
                                              : a->name < b->name;
  });
  return sorted;
}

uint64_t totalWeightBytes(const Artifact &artifact) {
  uint64_t total = 0;
  for (const WeightEntry &entry : artifact.weights)
    total += weightBytes(entry);
  return total;
}

std::string hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

// A float as a person writes it: 0.7, not 0.699999988.
std::string number(float value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
  return text;
}

// The prompt kernels the decode kernel holds (runtime/format/PrefillArgs.h),
// by their entries in its PTX: a file of an older mkc has none.
std::vector<std::string> promptKernels(const Artifact &artifact) {
  std::vector<std::string> names;
  const std::string entry = ".entry mk_prefill_";
  for (size_t at = artifact.ptx.find(entry); at != std::string::npos;
       at = artifact.ptx.find(entry, at + entry.size())) {
    size_t begin = at + 7, end = artifact.ptx.find_first_of("( \n", begin);
    names.push_back(artifact.ptx.substr(begin, end - begin));
  }
  return names;
}

std::string tokenList(const std::vector<int64_t> &tokens, const char *separator) {
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i)
    text += (i ? separator : "") + std::to_string(tokens[i]);
  return text;
}

} // namespace

void printArtifactSummary(std::ostream &os, const LoadedArtifact &loaded) {
  const Artifact &artifact = loaded.artifact;
  const ModelFacts &facts = artifact.facts;
  os << "file: " << loaded.file->size() << " bytes (" << humanBytes(loaded.file->size())
     << "), .mk format version " << kMkFormatVersion << ", compiled by "
     << facts.compilerVersion << "\n";
  os << "dimensions: hidden " << facts.hidden << ", " << facts.numLayers << " layers, "
     << facts.numHeads << " heads, " << facts.numKvHeads << " KV heads, head dim "
     << facts.headDim << ", vocab " << facts.vocab << ", max context " << facts.maxContext
     << "\n";
  os << "target: " << facts.targetArch << ", " << facts.numSms << " SMs; kernel: ";
  if (hasKernel(artifact))
    os << "CUBIN " << artifact.cubin.size() << " bytes, PTX " << artifact.ptx.size()
       << " bytes, fingerprint " << facts.kernelFingerprint << "\n";
  else
    os << "none (compiled with --no-kernel or without NVRTC: runs on the CPU only)\n";
  os << "kernel options: "
     << (!hasKernel(artifact)               ? std::string("none (no kernel)")
         : facts.kernelOptions.empty() ? std::string("not recorded")
                                       : facts.kernelOptions)
     << "\n";
  // A step of several rows without its kernel in ROWKERNELS runs on the
  // CPU executor only.
  os << "steps: decode";
  for (size_t i = 0; i < artifact.rowSteps.size(); ++i)
    os << "; " << describeStep(artifact.rowSteps[i].graph)
       << (hasRowKernel(artifact, i) ? "" : " (the CPU executor only)");
  os << "\n";
  std::vector<std::string> prompts = promptKernels(artifact);
  os << "prompts on the GPU: "
     << (!hasKernel(artifact) ? "none (no kernel)"
         : prompts.empty()    ? "one token a step (the kernel holds no prompt kernels)"
                              : "of 32 tokens or more layer by layer (" +
                                    std::to_string(prompts.size()) + " prompt kernels)")
     << "\n";
  if (!artifact.ranks.empty()) {
    os << "tensor parallel: " << artifact.ranks.size() << " ranks, "
       << artifact.weightSlices.size() << " weight slices (the CPU executor runs them); ";
    const RankKernel &kernel = artifact.rankKernel;
    if (kernel.cubin.empty())
      os << "no kernel of their own\n";
    else
      os << "their kernel: CUBIN " << kernel.cubin.size() << " bytes, linked with NCCL "
         << ncclVersionText(kernel.ncclVersion) << "'s device API\n";
  }
  os << "EOS tokens: " << (facts.eosTokens.empty() ? "none" : tokenList(facts.eosTokens, ", "))
     << "\n";
  const GenerationFacts &generation = facts.generation;
  os << "tokenizer: ";
  bool carried = generation.bosToken || !generation.chatTemplate.empty();
  if (artifact.tokenizerJson.empty() && !carried)
    os << "none\n";
  else if (artifact.tokenizerJson.empty()) // a GGUF file's special tokens, no tokenizer.json
    os << "no tokenizer.json; from '" << generation.tokenizerSource << "': BOS "
       << (generation.bosToken ? std::to_string(*generation.bosToken) : "none") << "; chat template "
       << (generation.chatTemplate.empty() ? "none"
                                           : std::to_string(generation.chatTemplate.size()) + " characters")
       << "\n";
  else
    os << "tokenizer.json, " << artifact.tokenizerJson.size() << " bytes, from '"
       << generation.tokenizerSource << "'; BOS "
       << (generation.bosToken ? std::to_string(*generation.bosToken) : "none") << "; chat template "
       << (generation.chatTemplate.empty() ? "none"
                                           : std::to_string(generation.chatTemplate.size()) + " characters")
       << "\n";
  if (generation.temperature || generation.topK || generation.topP)
    os << "sampling defaults:" << (generation.temperature ? " temperature " + number(*generation.temperature) : "")
       << (generation.topK ? " top-k " + std::to_string(*generation.topK) : "")
       << (generation.topP ? " top-p " + number(*generation.topP) : "") << "\n";
  os << "sections:\n";
  for (const SectionEntry &entry : loaded.file->entries()) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-10s offset %12llu  size %12llu  crc %s\n",
                  sectionKindName(entry.kind).c_str(),
                  static_cast<unsigned long long>(entry.offset),
                  static_cast<unsigned long long>(entry.size), hex(entry.crc32).c_str());
    os << line;
  }
  std::vector<const WeightEntry *> sorted = bySize(artifact);
  os << "weights: " << sorted.size() << " tensors, " << totalWeightBytes(artifact) << " bytes ("
     << humanBytes(totalWeightBytes(artifact)) << ") of bf16; the largest:\n";
  for (size_t i = 0; i < sorted.size() && i < kLargestWeightsShown; ++i)
    os << "  " << sorted[i]->name << " [" << sorted[i]->rows << ", " << sorted[i]->cols << "] "
       << weightBytes(*sorted[i]) << " bytes\n";
}

void printArtifactJson(std::ostream &os, const LoadedArtifact &loaded) {
  const Artifact &artifact = loaded.artifact;
  const ModelFacts &facts = artifact.facts;
  os << "{\n    \"fileBytes\": " << loaded.file->size()
     << ",\n    \"formatVersion\": " << kMkFormatVersion
     << ",\n    \"compilerVersion\": " << jsonString(facts.compilerVersion)
     << ",\n    \"hidden\": " << facts.hidden << ",\n    \"numLayers\": " << facts.numLayers
     << ",\n    \"numHeads\": " << facts.numHeads << ",\n    \"numKvHeads\": " << facts.numKvHeads
     << ",\n    \"headDim\": " << facts.headDim << ",\n    \"vocab\": " << facts.vocab
     << ",\n    \"maxContext\": " << facts.maxContext
     << ",\n    \"targetArch\": " << jsonString(facts.targetArch)
     << ",\n    \"numSms\": " << facts.numSms
     << ",\n    \"hasKernel\": " << (hasKernel(artifact) ? "true" : "false")
     << ",\n    \"cubinBytes\": " << artifact.cubin.size()
     << ",\n    \"ptxBytes\": " << artifact.ptx.size()
     << ",\n    \"kernelFingerprint\": " << jsonString(facts.kernelFingerprint)
     << ",\n    \"kernelOptions\": " << jsonString(facts.kernelOptions)
     << ",\n    \"promptKernels\": [";
  std::vector<std::string> prompts = promptKernels(artifact);
  for (size_t i = 0; i < prompts.size(); ++i)
    os << (i ? ", " : "") << jsonString(prompts[i]);
  os << "]"
     << ",\n    \"eosTokens\": [" << tokenList(facts.eosTokens, ", ") << "]"
     << ",\n    \"rowSteps\": [";
  for (size_t i = 0; i < artifact.rowSteps.size(); ++i)
    os << (i ? ", " : "") << "{\"rows\": " << artifact.rowSteps[i].graph.rows
       << ", \"sequences\": " << artifact.rowSteps[i].graph.sequences
       << ", \"kernel\": " << (hasRowKernel(artifact, i) ? "true" : "false") << "}";
  os << "]"
     << ",\n    \"ranks\": " << artifact.ranks.size()
     << ",\n    \"rankKernelBytes\": " << artifact.rankKernel.cubin.size()
     << ",\n    \"tokenizerBytes\": " << artifact.tokenizerJson.size()
     << ",\n    \"bosToken\": "
     << (facts.generation.bosToken ? std::to_string(*facts.generation.bosToken) : "null")
     << ",\n    \"chatTemplate\": " << jsonString(facts.generation.chatTemplate)
     << ",\n    \"sections\": [";
  const std::vector<SectionEntry> &entries = loaded.file->entries();
  for (size_t i = 0; i < entries.size(); ++i)
    os << (i ? ",\n      " : "\n      ") << "{\"kind\": " << jsonString(sectionKindName(entries[i].kind))
       << ", \"offset\": " << entries[i].offset << ", \"size\": " << entries[i].size
       << ", \"crc32\": " << entries[i].crc32 << "}";
  os << "\n    ],\n    \"weightBytes\": " << totalWeightBytes(artifact)
     << ",\n    \"weights\": [";
  std::vector<const WeightEntry *> sorted = bySize(artifact);
  for (size_t i = 0; i < sorted.size(); ++i)
    os << (i ? ",\n      " : "\n      ") << "{\"name\": " << jsonString(sorted[i]->name)
       << ", \"rows\": " << sorted[i]->rows << ", \"cols\": " << sorted[i]->cols
       << ", \"bytes\": " << weightBytes(*sorted[i]) << "}";
  os << "\n    ]\n  }";
}

} // namespace mk
