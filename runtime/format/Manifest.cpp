#include "runtime/format/Manifest.h"

#include "manifest.pb.h"

#include <climits>

namespace mk {

std::vector<uint8_t> encodeManifest(const Manifest &manifest) {
  format::Manifest message;
  const ModelFacts &facts = manifest.facts;
  message.set_compiler_version(facts.compilerVersion);
  format::ModelConfig *model = message.mutable_model();
  model->set_num_layers(facts.numLayers);
  model->set_hidden(facts.hidden);
  model->set_num_heads(facts.numHeads);
  model->set_num_kv_heads(facts.numKvHeads);
  model->set_head_dim(facts.headDim);
  model->set_vocab(facts.vocab);
  model->set_max_context(facts.maxContext);
  message.mutable_target()->set_arch(facts.targetArch);
  message.mutable_target()->set_num_sms(facts.numSms);
  format::BufferLayout *buffers = message.mutable_buffers();
  buffers->set_activation_elements(manifest.layout.activationElements);
  buffers->set_kv_elements(manifest.layout.kvElements);
  buffers->set_params(manifest.layout.params);
  format::Io *io = message.mutable_io();
  io->set_token_slot(manifest.layout.tokenSlot);
  io->set_logits_offset(manifest.layout.logitsOffset);
  io->set_logits_length(manifest.layout.logitsLength);
  for (int64_t token : facts.eosTokens)
    io->add_eos_token_ids(token);
  for (const WeightEntry &entry : manifest.weights) {
    format::Weight *weight = message.add_weights();
    weight->set_name(entry.name);
    weight->set_rows(entry.rows);
    weight->set_cols(entry.cols);
    weight->set_offset(entry.offset);
  }
  message.mutable_kernel()->set_present(manifest.hasKernel);
  message.mutable_kernel()->set_fingerprint(facts.kernelFingerprint);
  message.mutable_kernel()->set_options(facts.kernelOptions);
  const GenerationFacts &generation = facts.generation;
  format::Generation *out = message.mutable_generation();
  out->set_has_bos(generation.bosToken.has_value());
  out->set_bos_token_id(generation.bosToken.value_or(0));
  out->set_chat_template(generation.chatTemplate);
  out->set_has_temperature(generation.temperature.has_value());
  out->set_temperature(generation.temperature.value_or(0.0f));
  out->set_has_top_k(generation.topK.has_value());
  out->set_top_k(generation.topK.value_or(0));
  out->set_has_top_p(generation.topP.has_value());
  out->set_top_p(generation.topP.value_or(0.0f));
  out->set_tokenizer_source(generation.tokenizerSource);

  std::string bytes = message.SerializeAsString();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

std::string decodeManifest(std::span<const uint8_t> bytes, Manifest &manifest) {
  format::Manifest message;
  if (bytes.size() > INT_MAX ||
      !message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return "manifest: not a valid mk.format.Manifest message (" + std::to_string(bytes.size()) +
           " bytes)";
  Manifest decoded;
  ModelFacts &facts = decoded.facts;
  facts.compilerVersion = message.compiler_version();
  facts.numLayers = message.model().num_layers();
  facts.hidden = message.model().hidden();
  facts.numHeads = message.model().num_heads();
  facts.numKvHeads = message.model().num_kv_heads();
  facts.headDim = message.model().head_dim();
  facts.vocab = message.model().vocab();
  facts.maxContext = message.model().max_context();
  facts.targetArch = message.target().arch();
  facts.numSms = message.target().num_sms();
  facts.eosTokens.assign(message.io().eos_token_ids().begin(), message.io().eos_token_ids().end());
  facts.kernelFingerprint = message.kernel().fingerprint();
  facts.kernelOptions = message.kernel().options();
  const format::Generation &generation = message.generation();
  if (generation.has_bos())
    facts.generation.bosToken = generation.bos_token_id();
  facts.generation.chatTemplate = generation.chat_template();
  if (generation.has_temperature())
    facts.generation.temperature = generation.temperature();
  if (generation.has_top_k())
    facts.generation.topK = generation.top_k();
  if (generation.has_top_p())
    facts.generation.topP = generation.top_p();
  facts.generation.tokenizerSource = generation.tokenizer_source();
  decoded.hasKernel = message.kernel().present();
  decoded.layout = {message.buffers().activation_elements(),
                    message.buffers().kv_elements(),
                    message.buffers().params(),
                    message.io().token_slot(),
                    message.io().logits_offset(),
                    message.io().logits_length()};
  for (const format::Weight &weight : message.weights())
    decoded.weights.push_back({weight.name(), weight.rows(), weight.cols(), weight.offset()});
  manifest = std::move(decoded);
  return "";
}

} // namespace mk
