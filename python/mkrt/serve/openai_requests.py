"""The bodies of OpenAI's /v1/completions and /v1/chat/completions requests,
read into a generation of the package (model._Generation, not started yet).
What is wrong with a body is a BadRequest naming the field; the sampling
settings' ranges are left to libmkrt, which refuses a bad one by name when
the generation starts (the server answers 400 then, before any output)."""
from jinja2 import TemplateError

from ..errors import ContextFullError, InvalidArgumentError, NoTokenizerError
from ..model import _Generation, sampling_of

# OpenAI's default max_tokens for /v1/completions; a chat reply may fill
# the context, as OpenAI's chat endpoint does without max_tokens.
COMPLETION_MAX_TOKENS = 16

# Generation settings OpenAI defines that this server does not implement:
# each is accepted only at the value that means "off".
UNSUPPORTED = {
    "n": (1,), "best_of": (1,), "echo": (False,), "logprobs": (False, 0),
    "top_logprobs": (0,), "suffix": ("",), "presence_penalty": (0,),
    "frequency_penalty": (0,), "logit_bias": ({},), "tools": ([],),
    "tool_choice": ("none",), "functions": ([],), "function_call": ("none",),
}

# Sampling settings of OpenAI's API, and the package's extensions beyond it.
SAMPLING_FIELDS = ("temperature", "top_p", "seed", "top_k", "min_p", "repetition_penalty")

ROLES = ("system", "developer", "user", "assistant", "tool")


class BadRequest(Exception):
    """A request the server refuses with 400, naming the field (param)."""

    def __init__(self, message, param=None, code=None):
        super().__init__(message)
        self.param, self.code = param, code


class Request:
    """A parsed request: its generation, and how to answer (streamed or not)."""

    def __init__(self, generation, stream, include_usage):
        self.generation = generation
        self.stream = stream
        self.include_usage = include_usage  # stream_options.include_usage


def completion(body, model):
    """The Request of a /v1/completions body."""
    _check_common(body)
    tokens = _prompt_tokens(body.get("prompt"), model)
    return _request(body, model, tokens, _optional_int(body, "max_tokens"),
                    COMPLETION_MAX_TOKENS)


def chat_completion(body, model):
    """The Request of a /v1/chat/completions body, through the model's chat
    template (which writes the BOS it wants)."""
    _check_common(body)
    messages = _messages(body.get("messages"))
    try:
        text = model.render_chat(messages)
        tokens = model.encode(text, add_bos=False)
    except (InvalidArgumentError, NoTokenizerError, TemplateError) as error:
        raise BadRequest(f"cannot apply the chat template: {error}", "messages")
    max_tokens = _optional_int(body, "max_completion_tokens")
    if max_tokens is None:
        max_tokens = _optional_int(body, "max_tokens")
    room = model.session_max_context - len(tokens) + 1
    return _request(body, model, tokens, max_tokens, max(room, 1))


def _request(body, model, tokens, max_tokens, default_max_tokens):
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise BadRequest(f"'stream' must be a boolean, got {stream!r}", "stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise BadRequest("'stream_options' must be an object", "stream_options")
    include_usage = options.get("include_usage") or False
    if not isinstance(include_usage, bool):
        raise BadRequest("'stream_options.include_usage' must be a boolean", "stream_options")
    stop = _stop(body.get("stop"))
    sampling = _sampling(body, model)
    if max_tokens is None:
        max_tokens = default_max_tokens
    if max_tokens < 1:
        raise BadRequest(f"'max_tokens' must be at least 1, got {max_tokens}", "max_tokens")
    try:
        generation = _Generation(model, object(), tokens, True, max_tokens, stop, True, sampling)
    except ContextFullError as error:
        raise BadRequest(str(error), "max_tokens", "context_length_exceeded")
    except InvalidArgumentError as error:
        raise BadRequest(str(error))
    return Request(generation, stream, include_usage)


def _check_common(body):
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise BadRequest(f"'model' must be a string, got {model!r}", "model")
    for name, off in UNSUPPORTED.items():
        value = body.get(name)
        if value is not None and not _is_off(value, off):
            raise BadRequest(f"'{name}' is not supported by this server "
                             f"(only {off[0]!r} is accepted), got {value!r}", name)


def _is_off(value, off):
    # True == 1 in Python: a boolean matches only a boolean.
    return any(value == o and isinstance(value, bool) == isinstance(o, bool) for o in off)


def _optional_int(body, name):
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"'{name}' must be an integer, got {value!r}", name)
    return value


def _prompt_tokens(prompt, model):
    """A string, one string in a list, or one list of token ids."""
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]
    if isinstance(prompt, str):
        if not prompt:
            raise BadRequest("'prompt' is empty", "prompt")
        try:
            return model.encode(prompt)
        except NoTokenizerError as error:
            raise BadRequest(str(error), "prompt")
    if isinstance(prompt, list) and prompt and all(
            isinstance(t, int) and not isinstance(t, bool) for t in prompt):
        bad = [t for t in prompt if not 0 <= t < model.vocab]
        if bad:
            raise BadRequest(f"token {bad[0]} of 'prompt' is outside the vocabulary of "
                             f"{model.vocab}", "prompt")
        return list(prompt)
    if isinstance(prompt, list) and len(prompt) > 1 and all(isinstance(p, str) for p in prompt):
        raise BadRequest("one prompt per request: this server answers one choice", "prompt")
    raise BadRequest("'prompt' must be a non-empty string or a list of token ids, "
                     f"got {prompt!r}", "prompt")


def _messages(messages):
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list of messages", "messages")
    result = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise BadRequest(f"messages[{i}] must be an object, got {message!r}", "messages")
        role = message.get("role")
        if role not in ROLES:
            raise BadRequest(f"messages[{i}].role must be one of {', '.join(ROLES)}, "
                             f"got {role!r}", "messages")
        # OpenAI's newer name for the system role, which templates do not know.
        result.append({"role": "system" if role == "developer" else role,
                       "content": _content(message.get("content"), i)})
    return result


def _content(content, i):
    """A message's text: a string, or text parts (OpenAI's content array)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or \
                    not isinstance(part.get("text"), str):
                raise BadRequest(f"messages[{i}].content: only text parts are supported, "
                                 f"got {part!r}", "messages")
            texts.append(part["text"])
        return "".join(texts)
    raise BadRequest(f"messages[{i}].content must be a string or a list of text parts, "
                     f"got {content!r}", "messages")


def _stop(stop):
    if stop is None:
        return []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
        raise BadRequest(f"'stop' must be a non-empty string or a list of them, got {stop!r}",
                         "stop")
    return stop


def _sampling(body, model):
    """The mkrt_sampling of the request's settings; a setting it leaves out
    takes the .mk file's default (its generation_config), as the model's
    authors meant it to be run, else the package's (greedy)."""
    settings = {name: body[name] for name in SAMPLING_FIELDS if body.get(name) is not None}
    for name, value in model.sampling_defaults.items():
        settings.setdefault(name, value)
    try:
        return sampling_of(settings)
    except InvalidArgumentError as error:
        name = str(error).split(" ", 1)[0]
        raise BadRequest(str(error), name if name in SAMPLING_FIELDS else None)
