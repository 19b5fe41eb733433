"""``specedit serve``: one loaded model, served to editor plugins over a local socket.

Modules: ``rpc`` (JSON-RPC 2.0 with LSP framing on one connection), ``params`` (request
validation), ``jobs`` (the job queue and the rewrites' notifications), ``answers`` (questions
answered over context files, on the same queue), ``paths`` (where the socket lives and who
may use it), ``core`` (the server: connections, bounds, methods), ``serve`` (running it:
``serve_main``, the CLI entry, and ``ServerThread``).
``serve --http``, the OpenAI-compatible HTTP API over the same kind of loaded model:
``http_api`` (the routes on Starlette and uvicorn), ``http_conn`` (the connection bounds,
on uvicorn's h11 protocol), ``http_generation`` (the one-at-a-time queue, cancellation,
the streamed answer), ``openai_wire`` (requests, responses and errors in OpenAI's
shape), ``openai_run`` (one request on the model), ``http_serve`` (running it).
The wire protocol is documented in ``docs/protocol.md``.
"""

from .core import Server
from .serve import ServerThread, serve_main

__all__ = ["Server", "ServerThread", "serve_main"]
