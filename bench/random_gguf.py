"""GGUF files with a real model's shapes and random weights, for checks where no model fits.

A GPU machine we borrow is offline and takes at most 64 MiB of working tree, so no catalog
model travels. What does: the model's *shape* (every metadata scalar and every tensor's
name, dimensions and quantization type, read from the real GGUF header here and committed
as ``bench/gguf_shapes.json``) and its tokenizer arrays (tokens, token types, merges: a
few MB, gzipped JSON under ``.whl/``). ``write_random_gguf`` rebuilds a file llama.cpp
loads like the real one: same architecture, sizes, quantization type per tensor and
tokenizer, with random weights, so every kernel and every matmul size is the real model's
and timings are too (weights' values do not change a dense model's speed).

Random quantized blocks are random bytes with their scale fields (f16 ``d``/``dmin``) set so
the dequantized weights have mean ~0 and standard deviation ~``std``: no NaN, no overflow.
Norm weights are 1, biases 0.

    python -m specedit.bench.random_gguf shapes MODEL_GGUF... --out bench/gguf_shapes.json
    python -m specedit.bench.random_gguf vocab MODEL_GGUF --out .whl/qwen2.5-vocab.json.gz
    python -m specedit.bench.random_gguf write NAME --vocab V --out FILE [--shapes JSON]
    python -m specedit.bench.random_gguf rehearsal --out DIR   # tiny vocab + shapes (CPU)

``tiny_vocab()`` and ``tiny_shapes()`` are a 260-token byte-level vocabulary and the 0.5B's
metadata at toy sizes: the CPU rehearsal of the GPU check (``bench/gpu_check.sh llama``)
writes its "models" from them, and the tests use them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

log = logging.getLogger("specedit.bench.random_gguf")

SHAPES = Path(__file__).with_name("gguf_shapes.json")
VOCAB_KEYS = ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges")

# per quantization type: (byte offsets of the f16 scale ``d``, of ``dmin`` or None, the
# dequantized std of random bytes at d = 1, the dmin/d ratio that centres them)
_BLOCKS = {
    "Q4_0": ((0,), None, 4.61, 0.0),
    "Q4_1": ((0,), 2, 4.61, -7.5),  # q4_1: x = d*q + m, m at bytes 2..3
    "Q5_0": ((0,), None, 9.23, 0.0),
    "Q5_1": ((0,), 2, 9.23, -15.5),
    "Q8_0": ((0,), None, 73.9, 0.0),
    "Q4_K": ((0,), 2, 258.0, 7.5),  # x = d*sc*q - dmin*m, 6-bit sc and m
    "Q5_K": ((0,), 2, 527.0, 15.5),
    "Q6_K": ((208,), None, 1366.0, 0.0),  # x = d*sc*(q-32), int8 sc; d last
}


def read_shapes(paths: list[Path]) -> dict:
    """Every metadata scalar and every tensor's (name, dims, type) of each GGUF."""
    from gguf import GGUFReader, GGUFValueType

    out = {}
    for path in paths:
        r = GGUFReader(path)
        kv = []
        for key, f in r.fields.items():
            if key.startswith("GGUF.") or key in VOCAB_KEYS:
                continue
            vtype = f.types[0]
            if vtype == GGUFValueType.ARRAY:
                raise ValueError(f"{path}: array field {key} is not carried")
            kv.append([key, int(vtype), f.contents()])
        tensors = [[t.name, [int(x) for x in t.shape], t.tensor_type.name] for t in r.tensors]
        out[path.stem] = {"kv": kv, "tensors": tensors}
    return out


def read_vocab(path: Path) -> dict:
    """The tokenizer arrays of a GGUF: tokens, token types and merges."""
    from gguf import GGUFReader

    r = GGUFReader(path)
    return {key.rsplit(".", 1)[1]: r.fields[key].contents() for key in VOCAB_KEYS}


def _scalar_blocks(qtype: str, n_blocks: int, rng: np.random.Generator, std: float):
    """``n_blocks`` random blocks of ``qtype`` whose weights have std ~``std``, as uint8."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    if qtype not in _BLOCKS:
        raise ValueError(f"random blocks of {qtype} are not supported ({', '.join(_BLOCKS)})")
    d_at, m_at, unit, ratio = _BLOCKS[qtype]
    _, size = GGML_QUANT_SIZES[GGMLQuantizationType[qtype]]
    blocks = rng.integers(0, 256, size=(n_blocks, size), dtype=np.uint8)
    d = np.float16(std / unit)
    for off in d_at:
        blocks[:, off : off + 2] = np.frombuffer(d.tobytes(), np.uint8)
    if m_at is not None:
        blocks[:, m_at : m_at + 2] = np.frombuffer(np.float16(ratio * d).tobytes(), np.uint8)
    return blocks


def random_tensor(name: str, dims: list[int], qtype: str, rng, std: float = 0.02):
    """(array, raw_dtype) for ``GGUFWriter.add_tensor``: ``dims`` in GGUF order (ne0 first)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    shape = list(reversed(dims))  # numpy order
    if qtype == "F32":
        if name.endswith("norm.weight"):
            return np.ones(shape, np.float32), None
        if name.endswith(".bias"):
            return np.zeros(shape, np.float32), None
        return rng.normal(0, std, shape).astype(np.float32), None
    if qtype == "F16":
        return rng.normal(0, std, shape).astype(np.float16), None
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType[qtype]]
    if dims[0] % block:
        raise ValueError(f"{name}: {dims[0]} columns are not a multiple of {qtype}'s {block}")
    rows = int(np.prod(dims[1:], dtype=np.int64)) if len(dims) > 1 else 1
    n_blocks = rows * dims[0] // block
    data = _scalar_blocks(qtype, n_blocks, rng, std)
    return data.reshape(*shape[:-1], dims[0] // block * size), GGMLQuantizationType[qtype]


def write_random_gguf(
    name: str, out: Path, vocab: dict, shapes: dict | None = None, seed: int = 0
) -> dict:
    """Write ``out``: model ``name`` of ``shapes`` with random weights and ``vocab``'s
    tokenizer. Returns {"tensors", "bytes", "seconds"}."""
    from gguf import GGUFValueType, GGUFWriter

    shapes = shapes or json.loads(SHAPES.read_text())
    if name not in shapes:
        raise ValueError(f"no shapes for {name!r}: {', '.join(shapes)}")
    spec = shapes[name]
    t0 = time.perf_counter()
    kv = {k: (t, v) for k, t, v in spec["kv"]}
    w = GGUFWriter(out, arch=kv.pop("general.architecture")[1])
    for key, (vtype, value) in kv.items():
        if key == "general.name":
            value = f"{value} (random weights)"
        w.add_key_value(key, value, GGUFValueType(vtype))
    w.add_key_value(
        "tokenizer.ggml.tokens", vocab["tokens"], GGUFValueType.ARRAY, GGUFValueType.STRING
    )
    w.add_key_value(
        "tokenizer.ggml.token_type", vocab["token_type"], GGUFValueType.ARRAY, GGUFValueType.INT32
    )
    w.add_key_value(
        "tokenizer.ggml.merges", vocab["merges"], GGUFValueType.ARRAY, GGUFValueType.STRING
    )
    rng = np.random.default_rng(seed)
    for tname, dims, qtype in spec["tensors"]:
        data, raw = random_tensor(tname, dims, qtype, rng)
        w.add_tensor(tname, data, raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return {
        "tensors": len(spec["tensors"]),
        "bytes": out.stat().st_size,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _byte_symbols() -> list[str]:
    """GPT-2's byte-to-unicode table: the 256 byte tokens of a byte-level BPE vocabulary."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    keep += range(ord("®"), ord("ÿ") + 1)
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return [out[b] for b in range(256)]


def tiny_vocab() -> dict:
    tokens = [*_byte_symbols(), "re", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    return {"tokens": tokens, "token_type": [1] * 257 + [3] * 3, "merges": ["r e"]}


def tiny_shapes(vocab: int = 260, dim: int = 64, ff: int = 128, blocks: int = 2) -> dict:
    """The 0.5B's metadata with small numbers, and the qwen2 tensors at those sizes."""
    small = {
        "qwen2.block_count": blocks,
        "qwen2.context_length": 1024,
        "qwen2.embedding_length": dim,
        "qwen2.feed_forward_length": ff,
        "qwen2.attention.head_count": 4,
        "qwen2.attention.head_count_kv": 2,
        "tokenizer.ggml.eos_token_id": vocab - 1,
        "tokenizer.ggml.padding_token_id": vocab - 3,
        "tokenizer.ggml.bos_token_id": vocab - 3,
    }
    real = json.loads(SHAPES.read_text())["qwen2.5-coder-0.5b"]
    kv = [[k, t, small.get(k, v)] for k, t, v in real["kv"]]
    kvd = dim // 2  # 2 kv heads of dim / 4
    tensors = [
        ["token_embd.weight", [dim, vocab], "Q8_0"],
        ["output_norm.weight", [dim], "F32"],
        ["output.weight", [dim, vocab], "Q8_0"],
    ]
    for i in range(blocks):
        b = f"blk.{i}."
        tensors += [
            [b + "attn_norm.weight", [dim], "F32"],
            [b + "attn_q.weight", [dim, dim], "Q5_0"],
            [b + "attn_q.bias", [dim], "F32"],
            [b + "attn_k.weight", [dim, kvd], "Q8_0"],
            [b + "attn_k.bias", [kvd], "F32"],
            [b + "attn_v.weight", [dim, kvd], "Q8_0"],
            [b + "attn_v.bias", [kvd], "F32"],
            [b + "attn_output.weight", [dim, dim], "Q5_0"],
            [b + "ffn_norm.weight", [dim], "F32"],
            [b + "ffn_gate.weight", [dim, ff], "Q8_0"],
            [b + "ffn_up.weight", [dim, ff], "Q8_0"],
            [b + "ffn_down.weight", [ff, dim], "Q8_0"],
        ]
    return {"tiny": {"kv": kv, "tensors": tensors}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="random_gguf", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shapes", help="read real GGUF headers into a shapes JSON")
    s.add_argument("models", nargs="+", type=Path)
    s.add_argument("--out", type=Path, default=SHAPES)
    v = sub.add_parser("vocab", help="read a GGUF's tokenizer arrays into a .json.gz")
    v.add_argument("model", type=Path)
    v.add_argument("--out", type=Path, required=True)
    w = sub.add_parser("write", help="write a random-weights GGUF of a model in the shapes")
    w.add_argument("name")
    w.add_argument("--vocab", type=Path, required=True)
    w.add_argument("--out", type=Path, required=True)
    w.add_argument("--shapes", type=Path, default=SHAPES)
    w.add_argument("--seed", type=int, default=0)
    r = sub.add_parser("rehearsal", help="tiny vocab.json.gz + shapes.json under the catalog names")
    r.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if a.cmd == "shapes":
        data = read_shapes(a.models)
        a.out.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n")
        log.info("wrote %s (%d bytes): %s", a.out, a.out.stat().st_size, ", ".join(data))
    elif a.cmd == "vocab":
        with gzip.open(a.out, "wt", encoding="utf-8") as f:
            json.dump(read_vocab(a.model), f, separators=(",", ":"))
        log.info("wrote %s (%d bytes)", a.out, a.out.stat().st_size)
    elif a.cmd == "rehearsal":
        a.out.mkdir(parents=True, exist_ok=True)
        with gzip.open(a.out / "vocab.json.gz", "wt", encoding="utf-8") as f:
            json.dump(tiny_vocab(), f)
        tiny = tiny_shapes()["tiny"]
        names = json.loads(SHAPES.read_text())
        (a.out / "shapes.json").write_text(json.dumps({n: tiny for n in names}))
        log.info("wrote %s/vocab.json.gz and shapes.json (%s)", a.out, ", ".join(names))
    else:
        with gzip.open(a.vocab, "rt", encoding="utf-8") as f:
            vocab = json.load(f)
        shapes = json.loads(a.shapes.read_text())
        info = write_random_gguf(a.name, a.out, vocab, shapes, seed=a.seed)
        log.info("wrote %s: %s", a.out, json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
