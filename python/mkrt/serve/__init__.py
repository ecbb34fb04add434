"""An OpenAI-compatible HTTP server over one .mk file:

    python -m mkrt.serve model.mk --port 8000 [--host 127.0.0.1] [--device auto|cpu|gpu]

POST /v1/completions and /v1/chat/completions (server-sent events with
"stream": true), GET /v1/models and /health. Generations run one at a time
in the order they came; a client that disconnects cancels its own. See
python/README.md."""
from .app import make_app

__all__ = ["make_app"]
