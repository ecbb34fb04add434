"""The JSON the OpenAI API answers with: whole completions, the chunks of a
streamed one, usage counts, errors."""
import time
import uuid


def error(message, kind="invalid_request_error", param=None, code=None):
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def usage(generation):
    # Every token the model produced counts, the EOS that ended it included.
    prompt, completion = len(generation.tokens), len(generation.generated)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


class Completion:
    """/v1/completions: "text_completion" objects, the text in choices[0].text."""

    def __init__(self, model_name):
        self.id = f"cmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model_name = model_name

    def _object(self, choice):
        return {"id": self.id, "object": "text_completion", "created": self.created,
                "model": self.model_name, "choices": [choice] if choice else []}

    def whole(self, text, generation):
        result = self._object({"index": 0, "text": text, "logprobs": None,
                               "finish_reason": generation.finish_reason})
        result["usage"] = usage(generation)
        return result

    def opening_chunks(self):
        return []

    def piece_chunk(self, piece):
        return self._object({"index": 0, "text": piece, "logprobs": None, "finish_reason": None})

    def final_chunk(self, generation):
        return self._object({"index": 0, "text": "", "logprobs": None,
                             "finish_reason": generation.finish_reason})

    def usage_chunk(self, generation):
        result = self._object(None)
        result["usage"] = usage(generation)
        return result


class ChatCompletion(Completion):
    """/v1/chat/completions: a "chat.completion" whole, or
    "chat.completion.chunk"s whose deltas give the role, then the text."""

    def __init__(self, model_name):
        super().__init__(model_name)
        self.id = f"chatcmpl-{uuid.uuid4().hex}"

    def _chunk(self, choice):
        result = self._object(choice)
        result["object"] = "chat.completion.chunk"
        return result

    def whole(self, text, generation):
        result = self._object({"index": 0, "message": {"role": "assistant", "content": text},
                               "logprobs": None, "finish_reason": generation.finish_reason})
        result["object"] = "chat.completion"
        result["usage"] = usage(generation)
        return result

    def opening_chunks(self):
        return [self._chunk({"index": 0, "delta": {"role": "assistant", "content": ""},
                             "logprobs": None, "finish_reason": None})]

    def piece_chunk(self, piece):
        return self._chunk({"index": 0, "delta": {"content": piece}, "logprobs": None,
                            "finish_reason": None})

    def final_chunk(self, generation):
        return self._chunk({"index": 0, "delta": {}, "logprobs": None,
                            "finish_reason": generation.finish_reason})

    def usage_chunk(self, generation):
        result = self._chunk(None)
        result["usage"] = usage(generation)
        return result
