"""The aiohttp application: OpenAI's routes over one model and its
generation queue. aiohttp parses HTTP; a request's handler is cancelled
when its client disconnects (the runner's handler_cancellation), and its
`finally` cancels the generation: skipped while queued, its stream closed
at the next text piece while running (which stops the kernel)."""
import json
import time

from aiohttp import web

from ..errors import ContextFullError, InvalidArgumentError, NoTokenizerError
from . import openai_requests, openai_responses
from .generation_queue import ERROR, PIECE, GenerationQueue

MODEL = web.AppKey("model", object)
MODEL_NAME = web.AppKey("model_name", str)
QUEUE = web.AppKey("queue", GenerationQueue)


def make_app(model, model_name, largest_batch=None):
    """The application serving `model` (an mkrt.Model) as `model_name`.
    The API answers text, so the file must carry its tokenizer. Up to
    `largest_batch` waiting requests share one batch launch (default: the
    file's largest batch, which also bounds it; 1: none do)."""
    if model.tokenizer is None:
        raise NoTokenizerError(
            f"'{model.path}' has no tokenizer, which the server needs (OpenAI's API is text): "
            "compile it with `mkc compile MODEL --tokenizer=DIR` (DIR holding tokenizer.json)")
    app = web.Application(middlewares=[_errors_as_json])
    app[MODEL], app[MODEL_NAME] = model, model_name
    most = max(model.batch_sizes, default=1)
    app[QUEUE] = GenerationQueue(most if largest_batch is None else min(largest_batch, most))
    app.on_cleanup.append(_close_queue)
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v1/chat/completions", chat_completions)
    return app


async def _close_queue(app):
    app[QUEUE].close()


def _error_response(status, message, kind="invalid_request_error", param=None, code=None):
    return web.json_response(openai_responses.error(message, kind, param, code), status=status)


@web.middleware
async def _errors_as_json(request, handler):
    # aiohttp's own refusals (no such route, wrong method, ...) in OpenAI's shape.
    try:
        return await handler(request)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        return _error_response(error.status, error.reason or error.text,
                               "invalid_request_error" if error.status < 500 else "server_error")


async def health(request):
    queue = request.app[QUEUE]
    return web.json_response({"status": "ok", "waiting": queue.waiting(),
                              "generating": queue.generating()})


async def models(request):
    name = request.app[MODEL_NAME]
    return web.json_response({"object": "list", "data": [
        {"id": name, "object": "model", "created": int(time.time()), "owned_by": "mkrt"}]})


async def completions(request):
    return await _answer(request, openai_requests.completion, openai_responses.Completion,
                         "completion")


async def chat_completions(request):
    return await _answer(request, openai_requests.chat_completion,
                         openai_responses.ChatCompletion, "chat")


def _failure(error):
    """The status and body for an exception of a generation."""
    if isinstance(error, openai_requests.BadRequest):
        return _error_response(400, str(error), param=error.param, code=error.code)
    if isinstance(error, (InvalidArgumentError, ContextFullError, NoTokenizerError)):
        return _error_response(400, str(error))
    return _error_response(500, f"the generation failed: {error}", "server_error")


async def _answer(request, parse, response_type, kind):
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return _error_response(400, f"the body is not JSON: {error}")
    if not isinstance(body, dict):
        return _error_response(400, "the body must be a JSON object")
    try:
        parsed = parse(body, request.app[MODEL])
    except openai_requests.BadRequest as error:
        return _failure(error)
    job = request.app[QUEUE].submit(parsed.generation, kind, whole=not parsed.stream)
    response = response_type(request.app[MODEL_NAME])
    try:
        # The first event says whether the generation started (libmkrt
        # checks the sampling settings then): a refusal is still a 400.
        event, value = await job.events.get()
        if event == ERROR:
            return _failure(value)
        if parsed.stream:
            return await _stream(request, job, response, parsed.include_usage, (event, value))
        pieces = []
        while event == PIECE:
            pieces.append(value)
            event, value = await job.events.get()
        if event == ERROR:
            return _failure(value)
        return web.json_response(response.whole("".join(pieces), job.generation))
    finally:
        job.cancel()  # nothing left to do when it is over; else the client is gone


async def _stream(request, job, response, include_usage, first):
    """Server-sent events: a chunk per text piece, then the one with the
    finish_reason, the usage when asked for, and [DONE]."""
    stream = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                         "Cache-Control": "no-cache"})
    await stream.prepare(request)

    async def send(data):
        await stream.write(b"data: " + json.dumps(data).encode() + b"\n\n")

    try:
        for chunk in response.opening_chunks():
            await send(chunk)
        event, value = first
        while event == PIECE:
            await send(response.piece_chunk(value))
            event, value = await job.events.get()
        if event == ERROR:
            # The status line is gone: the error comes as an event, as OpenAI's does.
            await send(openai_responses.error(f"the generation failed: {value}",
                                              "server_error"))
        else:
            await send(response.final_chunk(job.generation))
            if include_usage:
                await send(response.usage_chunk(job.generation))
        await stream.write(b"data: [DONE]\n\n")
        await stream.write_eof()
    except ConnectionError:
        pass  # the client went away mid-stream: the caller cancels the job
    return stream
