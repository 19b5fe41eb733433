"""Trim llama-cpp-python's source distribution to what a build for one backend needs.

The sdist (77 MB) carries llama.cpp's models, docs, tests, tools and every ggml backend;
a machine that takes at most 64 MiB of files needs only the CMake project of the Python
package: its ``CMakeLists.txt`` and ``llama_cpp/`` package, and from llama.cpp the
library (``src``, ``include``, ``common``, ``vendor``, ``cmake``, licenses) and ggml with
the CPU backend plus the one asked for. The result builds with llama-cpp-python's own
CMakeLists and ``-DLLAVA_BUILD=OFF`` (the multimodal library lives under ``tools/``,
which is dropped).

    python -m specedit.bench.trim_llama_sdist SDIST.tar.gz OUT.tar.gz [--backend cuda]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tarfile
from pathlib import Path

log = logging.getLogger("specedit.bench.trim_llama_sdist")

TOP = ("CMakeLists.txt", "pyproject.toml", "LICENSE.md", "README.md", "llama_cpp/")
LLAMA = (
    "CMakeLists.txt",
    "LICENSE",
    "cmake/",
    "include/",
    "src/",
    "common/",
    "vendor/",
    "licenses/",
    "ggml/CMakeLists.txt",
    "ggml/cmake/",
    "ggml/include/",
    "ggml/src/",
)
BACKEND_DIRS = {"cuda": "ggml-cuda", "vulkan": "ggml-vulkan", "metal": "ggml-metal", "cpu": None}


def keep(rel: str, backend: str) -> bool:
    """Whether the sdist member at ``rel`` (below the sdist's top folder) is kept."""
    if not rel.startswith("vendor/llama.cpp/"):
        return rel == "" or any(rel == t or rel.startswith(t) for t in TOP)
    sub = rel[len("vendor/llama.cpp/") :]
    if sub == "" or not any(sub == k or sub.startswith(k) for k in LLAMA):
        return sub == ""
    if sub.startswith("ggml/src/ggml-") and "/" in sub[len("ggml/src/") :]:
        folder = sub[len("ggml/src/") :].split("/")[0]
        return folder in ("ggml-cpu", BACKEND_DIRS[backend])
    return True


def trim(sdist: Path, out: Path, backend: str = "cuda") -> dict:
    """Write ``out`` (.tar.gz) with the members of ``sdist`` that ``keep`` keeps."""
    if backend not in BACKEND_DIRS:
        raise ValueError(f"backend {backend!r}: use {', '.join(BACKEND_DIRS)}")
    kept = dropped = raw = 0
    with tarfile.open(sdist) as src, tarfile.open(out, "w:gz", compresslevel=9) as dst:
        for m in src:
            top, _, rel = m.name.partition("/")
            if not keep(rel, backend):
                dropped += 1
                continue
            kept += 1
            raw += m.size
            dst.addfile(m, src.extractfile(m) if m.isfile() else None)
    return {"kept": kept, "dropped": dropped, "raw_bytes": raw, "bytes": out.stat().st_size}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="trim_llama_sdist", description=__doc__.split("\n")[0])
    p.add_argument("sdist", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--backend", default="cuda", choices=sorted(BACKEND_DIRS))
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    info = trim(a.sdist, a.out, a.backend)
    log.info(
        "%s: %d files kept (%.1f MB), %d dropped; %.1f MB compressed",
        a.out,
        info["kept"],
        info["raw_bytes"] / 1e6,
        info["dropped"],
        info["bytes"] / 1e6,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
