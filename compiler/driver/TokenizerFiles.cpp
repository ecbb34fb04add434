#include "compiler/driver/TokenizerFiles.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace mk {

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string pathIn(const std::string &folder, const char *name) {
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

// The file's text, or nothing when it does not exist; an error when it
// exists and cannot be read.
llvm::Expected<std::optional<std::string>> readIfPresent(const std::string &path) {
  if (!llvm::sys::fs::exists(path))
    return std::nullopt;
  if (!llvm::sys::fs::is_regular_file(path))
    return error("'" + path + "' is not a regular file");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error("cannot read '" + path + "': " + buffer.getError().message());
  return std::optional<std::string>((*buffer)->getBuffer().str());
}

llvm::Expected<llvm::json::Object> parseObject(const std::string &path, const std::string &text) {
  auto value = llvm::json::parse(text);
  if (!value)
    return error("'" + path + "' is not JSON: " + llvm::toString(value.takeError()));
  if (!value->getAsObject())
    return error("'" + path + "' holds no JSON object at its top");
  return std::move(*value->getAsObject());
}

// Token text to id, from the tokenizer's model vocabulary and its added tokens.
struct Vocabulary {
  llvm::StringMap<int64_t> ids;
  int64_t size = 0;

  void add(llvm::StringRef token, int64_t id) {
    ids[token] = id;
    size = std::max(size, id + 1);
  }
};

llvm::Expected<Vocabulary> vocabularyOf(const std::string &path, const llvm::json::Object &root) {
  Vocabulary vocabulary;
  const llvm::json::Object *model = root.getObject("model");
  if (!model)
    return error("'" + path + "' has no \"model\" object: not an HF tokenizers file");
  if (const llvm::json::Object *vocab = model->getObject("vocab")) {
    for (const auto &[token, id] : *vocab) {
      auto value = id.getAsInteger();
      if (!value || *value < 0)
        return error("'" + path + "': model.vocab[\"" + token.str() + "\"] is not a token id");
      vocabulary.add(token, *value);
    }
  } else if (const llvm::json::Array *pieces = model->getArray("vocab")) {
    // Unigram: [piece, score] pairs, the id is the place.
    for (size_t i = 0; i < pieces->size(); ++i) {
      const llvm::json::Array *pair = (*pieces)[i].getAsArray();
      llvm::Optional<llvm::StringRef> piece;
      if (pair && !pair->empty())
        piece = (*pair)[0].getAsString();
      if (!piece)
        return error("'" + path + "': model.vocab[" + llvm::Twine(i) + "] is not a [piece, score] pair");
      vocabulary.add(*piece, static_cast<int64_t>(i));
    }
  } else {
    return error("'" + path + "': model.vocab is neither an object nor a list");
  }
  if (const llvm::json::Array *added = root.getArray("added_tokens")) {
    for (size_t i = 0; i < added->size(); ++i) {
      const llvm::json::Object *token = (*added)[i].getAsObject();
      llvm::Optional<int64_t> id;
      llvm::Optional<llvm::StringRef> content;
      if (token) {
        id = token->getInteger("id");
        content = token->getString("content");
      }
      if (!id || *id < 0 || !content)
        return error("'" + path + "': added_tokens[" + llvm::Twine(i) +
                     "] has no integer id and string content");
      vocabulary.add(*content, *id);
    }
  }
  return vocabulary;
}

// A token named in tokenizer_config.json: a string or {"content": string}.
std::optional<std::string> namedToken(const llvm::json::Object &config, llvm::StringRef key) {
  const llvm::json::Value *value = config.get(key);
  if (!value)
    return std::nullopt;
  if (auto text = value->getAsString())
    return text->str();
  if (const llvm::json::Object *object = value->getAsObject())
    if (auto content = object->getString("content"))
      return content->str();
  return std::nullopt;
}

llvm::Expected<int64_t> idOf(const Vocabulary &vocabulary, const std::string &token,
                             const std::string &path, llvm::StringRef key) {
  auto found = vocabulary.ids.find(token);
  if (found == vocabulary.ids.end())
    return error("'" + path + "': " + key + " '" + token + "' is not a token of tokenizer.json");
  return found->second;
}

// The chat template: a string, or a list of {name, template} with "default".
std::string chatTemplateOf(const llvm::json::Object &config) {
  if (auto text = config.getString("chat_template"))
    return text->str();
  if (const llvm::json::Array *templates = config.getArray("chat_template"))
    for (const llvm::json::Value &entry : *templates)
      if (const llvm::json::Object *named = entry.getAsObject())
        if (named->getString("name") == llvm::StringRef("default"))
          if (auto text = named->getString("template"))
            return text->str();
  return "";
}

llvm::Error readTokenizerConfig(const std::string &path, const llvm::json::Object &config,
                                const Vocabulary &vocabulary, TokenizerFiles &files) {
  files.generation.chatTemplate = chatTemplateOf(config);
  if (std::optional<std::string> eos = namedToken(config, "eos_token")) {
    auto id = idOf(vocabulary, *eos, path, "eos_token");
    if (!id)
      return id.takeError();
    files.eosTokens = {*id};
  }
  if (std::optional<std::string> bos = namedToken(config, "bos_token")) {
    auto id = idOf(vocabulary, *bos, path, "bos_token");
    if (!id)
      return id.takeError();
    files.generation.bosToken = *id;
  }
  return llvm::Error::success();
}

// generation_config.json: ids override tokenizer_config.json's; sampling
// defaults only where it samples (do_sample), as HF's generate reads them.
llvm::Error readGenerationConfig(const std::string &path, const llvm::json::Object &config,
                                 TokenizerFiles &files) {
  if (const llvm::json::Value *eos = config.get("eos_token_id")) {
    std::vector<int64_t> ids;
    if (auto one = eos->getAsInteger()) {
      ids.push_back(*one);
    } else if (const llvm::json::Array *many = eos->getAsArray()) {
      for (const llvm::json::Value &id : *many) {
        auto value = id.getAsInteger();
        if (!value)
          return error("'" + path + "': eos_token_id holds a value that is not a token id");
        ids.push_back(*value);
      }
    } else if (!eos->getAsNull()) {
      return error("'" + path + "': eos_token_id is neither a token id nor a list of them");
    }
    if (!ids.empty())
      files.eosTokens = std::move(ids);
  }
  if (const llvm::json::Value *bos = config.get("bos_token_id"); bos && !bos->getAsNull()) {
    auto value = bos->getAsInteger();
    if (!value)
      return error("'" + path + "': bos_token_id is not a token id");
    files.generation.bosToken = *value;
  }
  if (config.getBoolean("do_sample").value_or(false)) {
    if (auto temperature = config.getNumber("temperature"))
      files.generation.temperature = static_cast<float>(*temperature);
    if (auto topK = config.getInteger("top_k"))
      files.generation.topK = *topK;
    if (auto topP = config.getNumber("top_p"))
      files.generation.topP = static_cast<float>(*topP);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<TokenizerFiles> readTokenizerFiles(const std::string &folder) {
  TokenizerFiles files;
  files.generation.tokenizerSource = folder;
  std::string tokenizerPath = pathIn(folder, "tokenizer.json");
  auto tokenizerText = readIfPresent(tokenizerPath);
  if (!tokenizerText)
    return tokenizerText.takeError();
  if (!*tokenizerText)
    return error("no tokenizer.json in '" + folder + "'");
  auto tokenizer = parseObject(tokenizerPath, **tokenizerText);
  if (!tokenizer)
    return tokenizer.takeError();
  auto vocabulary = vocabularyOf(tokenizerPath, *tokenizer);
  if (!vocabulary)
    return vocabulary.takeError();
  files.tokenizerJson = std::move(**tokenizerText);
  files.vocabSize = static_cast<uint64_t>(vocabulary->size);

  // tokenizer_config.json first: generation_config.json's ids win.
  auto readConfig = [&](const char *name, auto read) -> llvm::Error {
    std::string path = pathIn(folder, name);
    auto text = readIfPresent(path);
    if (!text)
      return text.takeError();
    if (!*text)
      return llvm::Error::success();
    auto config = parseObject(path, **text);
    if (!config)
      return config.takeError();
    return read(path, *config);
  };
  if (auto problem = readConfig("tokenizer_config.json", [&](const std::string &path,
                                                             const llvm::json::Object &config) {
        return readTokenizerConfig(path, config, *vocabulary, files);
      }))
    return std::move(problem);
  if (auto problem = readConfig("generation_config.json", [&](const std::string &path,
                                                              const llvm::json::Object &config) {
        return readGenerationConfig(path, config, files);
      }))
    return std::move(problem);
  return files;
}

std::optional<std::string> tokenizerBeside(const std::string &model) {
  llvm::SmallString<256> folder(model);
  llvm::sys::path::remove_filename(folder);
  if (folder.empty())
    folder = ".";
  if (!llvm::sys::fs::is_regular_file(pathIn(std::string(folder), "tokenizer.json")))
    return std::nullopt;
  return std::string(folder);
}

} // namespace mk
