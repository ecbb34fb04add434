"""Text on both sides of the model: the artifact's tokenizer.json through HF
`tokenizers`, its chat template through jinja2, and the assembly of
generated tokens into text pieces that never split a character and stop at
stop strings."""
import json

from .errors import NoTokenizerError

# What a byte-level decoder gives for bytes of a character still to come.
_INCOMPLETE = "\ufffd"


class Tokenizer:
    """The .mk file's tokenizer.json, and its BOS as the manifest says."""

    def __init__(self, tokenizer_json, bos_token=None):
        import tokenizers  # imported here: ids alone need no tokenizer

        self._tokenizer = tokenizers.Tokenizer.from_str(tokenizer_json)
        self.bos_token = bos_token

    def encode(self, text, add_bos=True):
        # The manifest's BOS, not the tokenizer's post-processor, decides the
        # first token: both adding it would give two.
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        if add_bos and self.bos_token is not None:
            ids = [self.bos_token] + ids
        return ids

    def decode(self, ids):
        return self._tokenizer.decode(list(ids), skip_special_tokens=True)

    def token_text(self, token):
        """A token's own string ("</s>"), for the chat template's variables."""
        return self._tokenizer.id_to_token(token) if token is not None else None


def require_tokenizer(tokenizer, what):
    if tokenizer is None:
        raise NoTokenizerError(
            f"{what} needs a tokenizer, and this .mk file has none: compile it with "
            "`mkc compile MODEL --tokenizer=DIR` (DIR holding tokenizer.json), "
            "or give token ids")
    return tokenizer


class ChatTemplate:
    """The model's own chat template, rendered as HF transformers renders it:
    a sandboxed jinja2 environment, trim_blocks and lstrip_blocks, the
    messages, add_generation_prompt, the BOS and EOS strings."""

    def __init__(self, source, bos_text=None, eos_text=None):
        import jinja2.sandbox

        def raise_exception(message):
            raise jinja2.exceptions.TemplateError(message)

        environment = jinja2.sandbox.ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True)
        environment.globals["raise_exception"] = raise_exception
        environment.filters["tojson"] = lambda value, indent=None: json.dumps(
            value, ensure_ascii=False, indent=indent)
        self._template = environment.from_string(source)
        self._variables = {"bos_token": bos_text or "", "eos_token": eos_text or ""}

    def render(self, messages, add_generation_prompt=True):
        return self._template.render(messages=list(messages),
                                     add_generation_prompt=add_generation_prompt,
                                     **self._variables)


def normalize_messages(messages):
    """A list of {"role", "content"} dicts; a lone string is one user turn."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        messages = [messages]
    result = []
    for message in messages:
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            raise TypeError(f"a chat message is a dict with 'role' and 'content', got {message!r}")
        result.append(dict(message))
    return result


class TextAssembler:
    """Generated tokens in, text pieces out. Each push decodes all the tokens
    so far (quadratic, but a decode is cheap next to a decode step, and it
    gives exactly what decoding the whole gives, whatever the decoder does
    with spaces) and lets out only what is settled: not a trailing
    replacement character (bytes of a character still to come), not a
    suffix that may grow into a stop string. So the pieces concatenate to
    the text, and the text ends before the first stop string."""

    def __init__(self, decode, stop=()):
        self._decode = decode
        self._stop = [s for s in stop if s]
        self.ids = []
        self.text = ""  # what has been let out
        self.stopped = False

    def push(self, token):
        self.ids.append(token)
        whole = self._decode(self.ids)
        cut = self._first_stop(whole)
        if cut is not None:
            self.stopped = True
            return self._let_out(whole[:cut], len(whole[:cut]))
        if whole.endswith(_INCOMPLETE):
            return ""
        return self._let_out(whole, len(whole) - self._held_back(whole))

    def finish(self):
        """The rest, once no token will come."""
        if self.stopped:
            return ""
        whole = self._decode(self.ids)
        return self._let_out(whole, len(whole))

    def _let_out(self, whole, end):
        if end <= len(self.text) or not whole.startswith(self.text):
            return ""
        piece = whole[len(self.text):end]
        self.text += piece
        return piece

    def _first_stop(self, whole):
        hits = [whole.find(s) for s in self._stop]
        hits = [h for h in hits if h >= 0]
        return min(hits) if hits else None

    def _held_back(self, whole):
        # The longest end of the text that begins a stop string.
        longest = 0
        for s in self._stop:
            for n in range(min(len(s) - 1, len(whole)), longest, -1):
                if whole.endswith(s[:n]):
                    longest = n
                    break
        return longest
