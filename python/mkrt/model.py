"""A loaded .mk file (Model) and conversations over it (Session), on one
libmkrt session: its engine (on the GPU, one copy of the weights) and its
kept context (mkrt_continue), which belongs to whoever ran last."""
import contextlib
import ctypes
import os
import queue
import threading

from . import _lib
from .errors import ContextFullError, InvalidArgumentError
from .sampling import NAMES as SAMPLING_NAMES, settings_for
from .text import (ChatTemplate, TextAssembler, Tokenizer, normalize_messages,
                   require_tokenizer)

DEVICES = ("auto", "cpu", "gpu")


def _common_prefix(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _token_ids(prompt):
    ids = list(prompt)
    for token in ids:
        if isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"a prompt of token ids holds ints, got {token!r}")
    return ids


class _Context:
    """The libmkrt session's kept context: the tokens its cache holds, and
    who they belong to. A caller hands in the whole context it wants
    continued; only what the cache lacks (past the common prefix) is fed."""

    def __init__(self, session):
        self._session = session
        self._fed = []
        self._owner = None
        self._lock = threading.Lock()
        self._consumers = set()  # threads iterating a stream, whose call holds the lock
        self.last_fed = 0  # tokens the last call fed: what keeping the cache saves shows here

    def close(self):
        with self._lock:
            self._session = None

    def _refuse_reentry(self):
        # The stream's libmkrt call holds the lock until it ends: its own
        # consumer asking for more would wait on itself forever.
        if threading.get_ident() in self._consumers:
            raise InvalidArgumentError(
                "this model is streaming on this thread: finish or close the stream first")

    def _to_feed(self, owner, tokens):
        """How many of `tokens` the cache already holds for `owner`, and the
        rest, to feed. At least one token is fed: the last one's step gives
        the next token or the logits. Called with the lock held."""
        if self._session is None:
            raise InvalidArgumentError("the model is closed")
        if self._owner is not owner:
            self._owner, self._fed = owner, []
        keep = min(_common_prefix(self._fed, tokens), len(tokens) - 1)
        return keep, tokens[keep:]

    def extend(self, owner, tokens, n_new, sampling=None, on_token=None):
        """Up to n_new tokens after `tokens`, through the first EOS, picked by
        the kernel as `sampling` (a mkrt_sampling; None: greedy) says, all in
        one libmkrt call. `on_token(token)`, when given, is called as each
        token is produced (mkrt_continue_stream); True stops after it."""
        lib = _lib.lib()
        self._refuse_reentry()
        with self._lock:
            keep, fed = self._to_feed(owner, tokens)
            out = (ctypes.c_int64 * max(n_new, 1))()
            produced = ctypes.c_size_t(0)
            try:
                _lib.check(lib.mkrt_session_rewind(self._session, keep))
                _lib.check(lib.mkrt_session_set_sampling(
                    self._session, ctypes.byref(sampling) if sampling is not None else None))
                if on_token is None:
                    _lib.check(lib.mkrt_continue(self._session, _lib.int64_array(fed), len(fed),
                                                 n_new, out, ctypes.byref(produced), None))
                else:
                    callback = _lib.TokenCallback(
                        lambda _user, token, _index: 1 if on_token(token) else 0)
                    _lib.check(lib.mkrt_continue_stream(
                        self._session, _lib.int64_array(fed), len(fed), n_new, callback, None,
                        out, ctypes.byref(produced), None))
            except BaseException:
                # libmkrt may have ended its context: start afresh next time.
                self._fed = []
                lib.mkrt_session_rewind(self._session, 0)
                raise
            generated = list(out[:produced.value])
            self.last_fed = len(fed)
            # mkrt_continue returns its last token without feeding it.
            self._fed = list(tokens) + generated[:-1]
            return generated

    def stream(self, owner, tokens, n_new, sampling=None):
        """The tokens of extend() one by one as the kernel produces them: the
        libmkrt call runs on a thread of its own, its callback handing each
        token over. Closing the iterator early stops the generation after
        the token being produced (the callback's stop), and waits for it."""
        tokens_out = queue.Queue()
        closed = threading.Event()
        done = object()
        failure = []

        def on_token(token):
            tokens_out.put(token)
            return closed.is_set()

        def run():
            try:
                self.extend(owner, tokens, n_new, sampling, on_token)
            except BaseException as error:  # handed to the consumer
                failure.append(error)
            finally:
                tokens_out.put(done)

        self._refuse_reentry()
        worker = threading.Thread(target=run, name="mkrt-stream", daemon=True)
        consumer = threading.get_ident()
        self._consumers.add(consumer)
        worker.start()
        try:
            while True:
                token = tokens_out.get()
                if token is done:
                    break
                yield token
        finally:
            closed.set()
            worker.join()
            self._consumers.discard(consumer)
        if failure:
            raise failure[0]

    def logits(self, owner, tokens, vocab):
        """The logits after the last of `tokens` (the whole context), feeding
        only what the cache lacks."""
        import numpy as np

        lib = _lib.lib()
        self._refuse_reentry()
        with self._lock:
            keep, fed = self._to_feed(owner, tokens)
            rows = np.empty((len(fed), vocab), dtype=np.float32)
            try:
                _lib.check(lib.mkrt_session_rewind(self._session, keep))
                _lib.check(lib.mkrt_continue_logits(
                    self._session, _lib.int64_array(fed), len(fed),
                    rows.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))
            except BaseException:
                self._fed = []
                lib.mkrt_session_rewind(self._session, 0)
                raise
            self.last_fed = len(fed)
            self._fed = list(tokens)
            return rows[-1]


class Model:
    """A .mk file opened with a libmkrt session on `device`."""

    def __init__(self, path, device="auto", max_context=0, prompt_by_step=False):
        path = os.fspath(path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such .mk file: '{path}'")
        if device not in DEVICES:
            raise InvalidArgumentError(
                f"unknown device '{device}' (available: {', '.join(DEVICES)})")
        lib = _lib.lib()
        error = ctypes.create_string_buffer(1024)
        model = ctypes.c_void_p()
        status = lib.mkrt_open(path.encode(), ctypes.byref(model), error, len(error))
        _lib.check(status, f"cannot open '{path}': ")
        self._model = model
        self._session = None
        session = ctypes.c_void_p()
        status = lib.mkrt_session_create(model, device.encode(), max_context,
                                         ctypes.byref(session), error, len(error))
        if status != 0:
            self.close()
            _lib.check(status, f"'{path}' on device {device}: ")
        self._session = session
        if prompt_by_step:
            _lib.check(lib.mkrt_session_set_prompt_by_step(session, 1))
        self._max_context = max_context
        self._context = _Context(session)
        self.path = path
        self.device = lib.mkrt_session_device(session).decode()
        self._read_facts(lib)

    def _read_facts(self, lib):
        info = _lib.Info()
        _lib.check(lib.mkrt_model_info(self._model, ctypes.byref(info)))
        self.vocab = info.vocab
        self.max_context = info.max_context  # the compiled one
        self.session_max_context = self._max_context or info.max_context
        self.has_kernel = bool(info.has_kernel)
        self.eos_tokens = tuple(info.eos_tokens[i] for i in range(info.num_eos_tokens))
        generation = _lib.GenerationInfo()
        _lib.check(lib.mkrt_model_generation_info(self._model, ctypes.byref(generation)))
        self.bos_token = generation.bos_token if generation.has_bos else None
        self.chat_template = generation.chat_template.decode("utf-8")
        self.sampling_defaults = {
            name: getattr(generation, name)
            for name in ("temperature", "top_k", "top_p") if getattr(generation, "has_" + name)
        }
        self.tokenizer_json = ctypes.string_at(generation.tokenizer_json,
                                               generation.tokenizer_json_size).decode("utf-8")
        count = ctypes.c_size_t()
        _lib.check(lib.mkrt_model_batch_sizes(self._model, None, 0, ctypes.byref(count)))
        sizes = (ctypes.c_int64 * max(count.value, 1))()
        _lib.check(lib.mkrt_model_batch_sizes(self._model, sizes, count.value, ctypes.byref(count)))
        # The sequences generate_batch may run in one launch (`mkc compile --batch=B`).
        self.batch_sizes = tuple(sizes[:count.value])
        self._tokenizer = None
        self._template = None

    @property
    def tokenizer(self):
        """The file's Tokenizer, or None when it was compiled without one."""
        if self._tokenizer is None and self.tokenizer_json:
            self._tokenizer = Tokenizer(self.tokenizer_json, self.bos_token)
        return self._tokenizer

    def encode(self, text, add_bos=True):
        return require_tokenizer(self.tokenizer, "text").encode(text, add_bos)

    def decode(self, ids):
        return require_tokenizer(self.tokenizer, "decoding").decode(ids)

    def render_chat(self, messages, add_generation_prompt=True):
        """The chat template's text for `messages`."""
        if not self.chat_template:
            raise InvalidArgumentError(
                f"'{self.path}' has no chat template (its tokenizer files had none)")
        if self._template is None:
            tokenizer = require_tokenizer(self.tokenizer, "chat")
            eos = self.eos_tokens[0] if self.eos_tokens else None
            self._template = ChatTemplate(self.chat_template,
                                          tokenizer.token_text(self.bos_token),
                                          tokenizer.token_text(eos))
        return self._template.render(normalize_messages(messages), add_generation_prompt)

    def generate(self, prompt, max_new_tokens=64, stop=None, stream=False, **sampling):
        """Generation after `prompt`, a new context each call.

        Text (str) in: text out, the prompt encoded with the file's BOS,
        generation ending at an EOS token (left out of the text) or before
        the first of `stop`. Token ids (a list of ints) in: the new ids out,
        through the first EOS as mkrun prints them. stream=True: an
        iterator of text pieces (or of ids) instead, as the kernel produces
        them. Greedy unless temperature (> 0), top_k, top_p or min_p ask for
        sampling, in the kernel, reproducible by `seed`; repetition_penalty
        applies either way (mkrt/sampling.py)."""
        text_mode = isinstance(prompt, str)
        tokens = self.encode(prompt) if text_mode else _token_ids(prompt)
        return _Generation(self, object(), tokens, text_mode, max_new_tokens, stop, stream,
                           sampling_of(sampling)).result()

    def stream(self, prompt, max_new_tokens=64, stop=None, **sampling):
        return self.generate(prompt, max_new_tokens, stop, stream=True, **sampling)

    def chat(self, messages, max_new_tokens=256, stop=None, stream=False, **sampling):
        """The assistant's reply to `messages` (a list of {"role", "content"},
        or one user string), through the model's own chat template."""
        text = self.render_chat(messages)
        ids = self.encode(text, add_bos=False)  # the template writes the BOS it wants
        return _Generation(self, object(), ids, True, max_new_tokens, stop, stream,
                           sampling_of(sampling)).result()

    def generate_batch(self, prompts, max_new_tokens=64, **sampling):
        """Several independent generations in one launch, a row of each step
        per prompt (a file compiled with `mkc compile --batch=B`; the GPU
        runs the batch's kernel): each prompt's result is what generate()
        gives it alone,
        text for a str (its EOS left out), ids for a list of ints (through
        the first EOS). A new context each call; the Session's is kept."""
        if not prompts:
            raise InvalidArgumentError("no prompts")
        if max_new_tokens < 1:
            raise InvalidArgumentError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        text_modes = [isinstance(prompt, str) for prompt in prompts]
        batch = [self.encode(prompt) if text else _token_ids(prompt)
                 for prompt, text in zip(prompts, text_modes)]
        results = []
        for ids, text in zip(self._batch_tokens(batch, max_new_tokens, sampling_of(sampling)),
                             text_modes):
            if text:
                if ids and ids[-1] in self.eos_tokens:
                    ids = ids[:-1]
                results.append(self.decode(ids))
            else:
                results.append(ids)
        return results

    def _batch_tokens(self, batch, n_new, settings):
        """Each token list of `batch` continued by up to n_new tokens (through
        its first EOS) in one mkrt_generate_batch call: the lists of new tokens."""
        lib = _lib.lib()
        arrays = [_lib.int64_array(tokens) for tokens in batch]
        starts = (ctypes.POINTER(ctypes.c_int64) * len(batch))(
            *(ctypes.cast(array, ctypes.POINTER(ctypes.c_int64)) for array in arrays))
        lengths = (ctypes.c_size_t * len(batch))(*(len(tokens) for tokens in batch))
        out = (ctypes.c_int64 * (len(batch) * n_new))()
        produced = (ctypes.c_size_t * len(batch))()
        self._context._refuse_reentry()
        with self._context._lock:
            _lib.check(lib.mkrt_session_set_sampling(self._session, ctypes.byref(settings)))
            _lib.check(lib.mkrt_generate_batch(self._session, starts, lengths, len(batch),
                                               n_new, out, produced, None))
        return [list(out[index * n_new:index * n_new + produced[index]])
                for index in range(len(batch))]

    def session(self):
        return Session(self)

    def close(self):
        """Frees the session and the model; later calls raise."""
        if getattr(self, "_session", None):
            self._context.close()
            _lib.lib().mkrt_session_destroy(self._session)
            self._session = None
        if getattr(self, "_model", None):
            _lib.lib().mkrt_close(self._model)
            self._model = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return f"mkrt.Model('{self.path}', device='{self.device}')"


def sampling_of(sampling):
    """The mkrt_sampling of generate()'s keyword arguments."""
    unknown = set(sampling) - set(SAMPLING_NAMES)
    if unknown:
        raise TypeError(f"unexpected arguments: {', '.join(sorted(unknown))}")
    return settings_for(**sampling)


class _Generation:
    """One request: the context's tokens, then the new tokens, as text or ids."""

    def __init__(self, model, owner, tokens, text_mode, max_new_tokens, stop, stream,
                 sampling):
        self.sampling = sampling  # a mkrt_sampling, applied by the kernel
        if max_new_tokens < 1:
            raise InvalidArgumentError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        self.model, self.owner, self.stream = model, owner, stream
        self.max_new = max_new_tokens
        self.text_mode = text_mode
        if isinstance(stop, str):
            stop = [stop]
        self.stop = list(stop or [])
        if self.stop and not text_mode:
            raise InvalidArgumentError(
                "stop strings need a text prompt (token ids in, token ids out)")
        self.tokens = tokens  # the whole context to continue
        if not self.tokens:
            raise InvalidArgumentError("the prompt is empty")
        # Checked before the first step, so that a stream fails at once
        # rather than midway (libmkrt checks each call again).
        room = model.session_max_context
        if len(tokens) + max_new_tokens - 1 > room:
            raise ContextFullError(
                f"{len(tokens)} context tokens and {max_new_tokens} new tokens pass the "
                f"max context of {room}: ask for fewer tokens, or compile with a larger "
                "`mkc compile --max-context`")
        self.generated = []  # the new tokens so far, EOS included
        # "stop" at an EOS token or a stop string, "length" at max_new_tokens;
        # None while going, or when the caller closed the stream early.
        self.finish_reason = None

    def result(self):
        return self._pieces() if self.stream else self._whole()

    def _steps(self):
        """The new tokens as the kernel produces them, in one libmkrt call."""
        return self.model._context.stream(self.owner, self.tokens, self.max_new, self.sampling)

    def _whole(self):
        # Every step in one libmkrt call (one launch on the GPU).
        return self.finish(self.model._context.extend(self.owner, self.tokens, self.max_new,
                                                      self.sampling))

    def batchable_with(self, others):
        """Whether this generation can run in one batch launch with `others`
        (run_together): the same sampling settings, and every context's room
        for the most new tokens any of them asks for."""
        together = [self, *others]
        n_new = max(g.max_new for g in together)
        return (all(bytes(g.sampling) == bytes(self.sampling) for g in others)
                and all(len(g.tokens) + n_new - 1 <= self.model.session_max_context
                        for g in together))

    def finish(self, tokens):
        """The result of the new tokens `tokens` (the kernel's, as many as it
        made): cut at an EOS, a stop string or max_new_tokens; sets
        generated and finish_reason."""
        assembler = self._assembler() if self.text_mode else None
        self.finish_reason = "length"
        for token in tokens[:self.max_new]:
            self.generated.append(token)
            if token in self.model.eos_tokens:
                self.finish_reason = "stop"
                break
            if assembler is not None:
                assembler.push(token)
                if assembler.stopped:
                    self.finish_reason = "stop"
                    break
        if assembler is None:
            return list(self.generated)
        return assembler.text + assembler.finish()

    def _pieces(self):
        assembler = self._assembler() if self.text_mode else None
        with contextlib.closing(self._steps()) as steps:
            yield from self._assemble(steps, assembler)

    def _assemble(self, steps, assembler):
        for token in steps:
            self.generated.append(token)
            if assembler is None:
                yield token
                if token in self.model.eos_tokens:
                    self.finish_reason = "stop"
                    return
                continue
            if token in self.model.eos_tokens:
                self.finish_reason = "stop"
                break
            piece = assembler.push(token)
            if piece:
                yield piece
            if assembler.stopped:
                self.finish_reason = "stop"
                return
        else:
            self.finish_reason = "length"
        if assembler is not None:
            piece = assembler.finish()
            if piece:
                yield piece

    def _assembler(self):
        return TextAssembler(self.model.tokenizer.decode, self.stop)


def run_together(generations):
    """Runs `generations` (of one model, batchable_with one another, each
    answered whole) in one launch of a batch step: each one's result, what
    it gives alone (the CPU executor: the same tokens; the GPU: the same
    within the bf16 tolerance). Their contexts start new; the model's kept
    one is not touched."""
    model = generations[0].model
    n_new = max(g.max_new for g in generations)
    produced = model._batch_tokens([g.tokens for g in generations], n_new,
                                   generations[0].sampling)
    return [g.finish(tokens) for g, tokens in zip(generations, produced)]


class Session:
    """A conversation kept in the KV cache: each turn feeds only what the
    cache does not hold yet. Sessions of one Model share its engine; the
    cache belongs to the last one that ran, and another finds its tokens
    gone and feeds its whole context again (the same results, more steps)."""

    def __init__(self, model):
        self.model = model
        self.tokens = []    # the context: every turn's prompt and reply tokens
        self.messages = []  # the chat turns, for chat()

    def reset(self):
        self.tokens, self.messages = [], []

    def generate(self, prompt, max_new_tokens=64, stop=None, stream=False, **sampling):
        """Appends `prompt` (text, encoded with the BOS only at the start of
        the session; or ids) and the reply to the context; returns the reply
        as Model.generate does."""
        if isinstance(prompt, str):
            context = self.tokens + self.model.encode(prompt, add_bos=not self.tokens)
        else:
            context = self.tokens + _token_ids(prompt)
        request = _Generation(self.model, self, context, isinstance(prompt, str), max_new_tokens,
                              stop, stream, sampling_of(sampling))
        return self._keep(request, lambda reply: None)

    def chat(self, message, max_new_tokens=256, stop=None, stream=False, **sampling):
        """Adds a user turn (a string, or a message dict or list of them),
        returns the assistant's reply and adds it to the messages."""
        turn = self.messages + normalize_messages(message)
        text = self.model.render_chat(turn)
        context = self.model.encode(text, add_bos=False)
        request = _Generation(self.model, self, context, True, max_new_tokens, stop, stream,
                              sampling_of(sampling))

        def remember(reply):
            self.messages = turn + [{"role": "assistant", "content": reply}]
        return self._keep(request, remember)

    def _keep(self, request, remember):
        # The context grows by the prompt and the reply's tokens (EOS
        # included: the model saw it), once the reply is whole.
        if request.stream:
            return self._keep_stream(request, remember)
        reply = request.result()
        self.tokens = request.tokens + request.generated
        remember(reply)
        return reply

    def _keep_stream(self, request, remember):
        pieces = []
        for piece in request.result():
            pieces.append(piece)
            yield piece
        self.tokens = request.tokens + request.generated
        remember("".join(pieces) if request.text_mode else pieces)
