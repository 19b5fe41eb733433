"""Media types for the static file server.

The server answers with the ``Content-Type`` that ``content_type`` gives for the
requested file name, and compresses the answer when ``compressible`` says so.
"""

import posixpath

DEFAULT_CHARSET = "utf-8"
OCTET_STREAM = "application/octet-stream"

TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".json": "application/json",
    ".map": "application/json",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".wasm": "application/wasm",
}

COMPRESSIBLE_PREFIXES = ("text/",)
COMPRESSIBLE_TYPES = {"application/json", "application/xml", "image/svg+xml", "application/wasm"}


class UnknownTypeError(LookupError):
    """No media type is known for a file name."""


def extension(filename):
    """The lower-cased extension of ``filename`` with its dot ('' when none)."""
    base = posixpath.basename(filename)
    if base.startswith(".") and base.count(".") == 1:
        return ""
    return posixpath.splitext(base)[1].lower()


def content_type(filename):
    """The media type of ``filename``, from its extension."""
    ext = extension(filename)
    return TYPES.get(ext, OCTET_STREAM)


def is_text(media_type):
    return media_type.startswith("text/") or media_type in {"application/json", "application/xml", "image/svg+xml"}


def header_value(filename):
    """The full ``Content-Type`` header value, with a charset for text types."""
    media_type = content_type(filename)
    if is_text(media_type):
        return f"{media_type}; charset={DEFAULT_CHARSET}"
    return media_type


def compressible(media_type):
    """Whether answers of ``media_type`` are worth gzip-compressing."""
    return media_type.startswith(COMPRESSIBLE_PREFIXES) or media_type in COMPRESSIBLE_TYPES


def register(ext, media_type):
    """Add or replace the media type of extension ``ext`` ('.ext' or 'ext')."""
    if not ext.startswith("."):
        ext = "." + ext
    if "/" not in media_type:
        raise ValueError(f"not a media type: {media_type!r}")
    TYPES[ext.lower()] = media_type
