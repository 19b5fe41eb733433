"""Fused speculative-decoding verification: one Triton launch per draft block.

Contract: given target logits ``[n+1, V]``, draft tokens ``[n]`` and optionally draft probabilities
``[n, V]``, the kernel writes ``num_accepted`` and ``tokens [n+1]`` (accepted drafts, then one
*recovered* or *bonus* token, then -1) exactly as ``specedit.engine.rejection.verify`` defines them,
with ``p_i = softmax(top_p(top_k(logits[i] / T)))``. Its randomness (``u ~ U[0, 1)``, ``E, E' ~
Exp(1)``) is given (``uniforms [n]``, ``noise [n+1, V]``) or drawn in-kernel from Philox keyed on
the output position as ``engine.sampling`` defines it: row i decides ``t = position + i``; column
``c`` of its noise is lane ``c % 4`` of ``tl.randint4x(seed, ((t * 4 + stream) << 32) + c // 4)``
(stream 0: E, 2: E'), its uniform the top 24 bits of lane 0 at counter ``(t * 4 + 1) << 32``.

Grid ``(n+1, SPLITS)``: program ``(i, s)`` owns row ``i`` and column slice ``s``; the last program
to finish (an atomic counter, reset by it) merges the slices and writes the outputs. No probability
tensor is written to global memory. Precision: fp32 with fp64 sums against the reference's
float64; decisions differ only where a comparison falls within fp32 rounding of its threshold.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _sort_key(x):
    """fp32 -> uint32 whose unsigned order is the float order; -0.0 and +0.0 share a key."""
    bits = x.to(tl.uint32, bitcast=True)
    key = bits ^ tl.where((bits >> 31) != 0, 0xFFFFFFFF, 0x80000000)
    return tl.where(x == 0.0, 0x80000000, key)


@triton.jit
def _exp1(r):
    """uint32 Philox output -> Exp(1) noise, accurate near 0 where the winner of p/E is decided."""
    v = r.to(tl.float32) * 2.3283064365386963e-10 + 1.1641532182693481e-10  # (r + 1/2) / 2^32
    small = v * (1.0 + v * (0.5 + v * 0.3333333432674408))  # -log1p(-v) for v < 2^-7
    return tl.where(v < 0.0078125, small, -tl.log(1.0 - v))


@triton.jit
def _philox_exp(seed, ctr0, BLOCK: tl.constexpr):
    """Exp(1) noise for BLOCK consecutive columns whose first column group has counter ctr0."""
    ctr = ctr0 + tl.arange(0, BLOCK // 4)
    r0, r1, r2, r3 = tl.randint4x(seed, ctr)
    # column 4c + k takes output k of counter c
    return _exp1(tl.interleave(tl.interleave(r0, r2), tl.interleave(r1, r3)))


@triton.jit
def _target_probs(
    lg,
    cols,
    valid,
    m,
    temperature,
    s,
    kept_mass,
    kth,
    cut_key,
    cut_col,
    USE_TOP_K: tl.constexpr,
    USE_TOP_P: tl.constexpr,
):
    """p of logits ``lg`` (any shape) given the row statistics; 0 where dropped or not valid."""
    p = tl.exp((lg - m) / temperature) / s
    keep = valid
    if USE_TOP_K or USE_TOP_P:
        key = _sort_key(lg)
        if USE_TOP_K:
            keep = keep & (key >= kth)
        if USE_TOP_P:
            keep = keep & ((key > cut_key) | ((key == cut_key) & (cols <= cut_col)))
            p = p / kept_mass
    return tl.where(keep, p, 0.0)


@triton.jit
def _radix_select(
    row_ptr,  # [V] logits of one row
    V,
    target,
    m,
    temperature,
    s,
    kth,
    MASS: tl.constexpr,
    USE_TOP_K: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Key K where the weight of keys >= K first reaches ``target``, walking down from the top.

    Weight is 1 per token (``MASS=False``: K is the key of the target-th largest logit) or
    p (``MASS=True``). Returns K and the weight strictly above K. When the total weight
    falls short of ``target`` (fp rounding at top_p ~ 1), K ends below every token.
    """
    bins = tl.arange(0, 16)
    prefix = tl.full([], 0, tl.uint32)
    above = tl.full([], 0.0, tl.float64)
    for stage in tl.static_range(8):
        shift = 28 - 4 * stage
        hist = tl.zeros([16], dtype=tl.float64)
        for start in range(0, V, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            valid = cols < V
            lg = tl.load(row_ptr + cols, mask=valid, other=float("-inf")).to(tl.float32)
            key = _sort_key(lg)
            sel = valid
            if stage > 0:
                sel = sel & ((key >> (shift + 4)) == prefix)
            if MASS:
                w = _target_probs(
                    lg, cols, sel, m, temperature, s, 1.0, kth, 0, 0, USE_TOP_K, False
                )
            else:
                w = tl.where(sel, 1.0, 0.0)
            digit = ((key >> shift) & 15).to(tl.int32)
            onehot = digit[:, None] == bins[None, :]
            hist += tl.sum(tl.where(onehot, w[:, None], 0.0), axis=0).to(tl.float64)
        # suffix[b] = weight of digits >= b within the current prefix
        suffix = tl.sum(tl.where(bins[None, :] >= bins[:, None], hist[None, :], 0.0), axis=1)
        b = tl.max(tl.where(above + suffix >= target, bins, 0), axis=0)
        above += tl.sum(tl.where(bins > b, hist, 0.0), axis=0)
        prefix = (prefix << 4) | b.to(tl.uint32)
    return prefix, above


@triton.jit
def _row_stats(row_ptr, V, temperature, kth, USE_TOP_K: tl.constexpr, BLOCK: tl.constexpr):
    """Online max and sum of exp((lg - max) / T) over the (top-k) kept logits of a row."""
    m = tl.full([], float("-inf"), tl.float32)
    s = tl.full([], 0.0, tl.float64)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        lg = tl.load(row_ptr + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        if USE_TOP_K:
            lg = tl.where(_sort_key(lg) >= kth, lg, float("-inf"))
        m_new = tl.maximum(m, tl.max(lg, axis=0))
        m_ref = tl.where(m_new > float("-inf"), m_new, 0.0)  # no -inf - -inf while all are -inf
        scale = tl.where(m_new > m, tl.exp((m - m_ref) / temperature), 1.0)
        e = tl.where(lg > float("-inf"), tl.exp((lg - m_ref) / temperature), 0.0)
        s = s * scale.to(tl.float64) + tl.sum(e, axis=0).to(tl.float64)
        m = m_new
    return m, s


@triton.jit
def _top_p_cut(
    row_ptr,
    V,
    top_p,
    cut_key,
    above,
    m,
    temperature,
    s,
    kth,
    USE_TOP_K: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Last column kept among the tokens tied at ``cut_key`` and the kept mass (fp64)."""
    ties = tl.full([], 0, tl.int32)
    kept = tl.full([], 0.0, tl.float64)
    cut_col = tl.full([], -1, tl.int32)
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        valid = cols < V
        lg = tl.load(row_ptr + cols, mask=valid, other=float("-inf")).to(tl.float32)
        p = _target_probs(lg, cols, valid, m, temperature, s, 1.0, kth, 0, 0, USE_TOP_K, False)
        key = _sort_key(lg)
        inset = valid
        if USE_TOP_K:
            inset = inset & (key >= kth)
        tie = inset & (key == cut_key)
        rank = ties + tl.cumsum(tie.to(tl.int32), axis=0) - 1  # index order among the ties
        # mass strictly before a tied token in the stable sort: G + rank * p(K)
        keep_tie = tie & (above + rank.to(tl.float64) * p.to(tl.float64) < top_p)
        keep = (inset & (key > cut_key)) | keep_tie
        kept += tl.sum(tl.where(keep, p, 0.0), axis=0).to(tl.float64)
        cut_col = tl.maximum(cut_col, tl.max(tl.where(keep_tie, cols, -1), axis=0))
        ties += tl.sum(tie.to(tl.int32), axis=0)
    return kept, cut_col


@triton.jit
def _greedy_slice(row_ptr, col_lo, col_hi, BLOCK: tl.constexpr):
    """Max logit of a column slice and its first column."""
    best = tl.full([], float("-inf"), tl.float32)
    best_col = col_lo
    for start in range(col_lo, col_hi, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        lg = tl.load(row_ptr + cols, mask=cols < col_hi, other=float("-inf")).to(tl.float32)
        bm = tl.max(lg, axis=0)
        better = bm > best
        best_col = tl.where(better, start + tl.argmax(lg, axis=0), best_col)
        best = tl.where(better, bm, best)
    return best, best_col


@triton.jit
def _finalize(
    draft_ptr,  # [n] int
    accept_ptr,  # [n+1] int32
    cand_score_ptr,  # [n+1, splits, 3] fp32
    cand_col_ptr,  # [n+1, splits, 2] int32
    num_accepted_ptr,  # [1] int64
    tokens_ptr,  # [n+1] int64
    n,
    splits,
    MATCH: tl.constexpr,
    HAS_DRAFT_PROBS: tl.constexpr,
    MAX_SPLITS: tl.constexpr,
    ROWS: tl.constexpr,
):
    """Merge the slices' candidates, find the first rejected row j, write the outputs."""
    sp = tl.arange(0, MAX_SPLITS)
    j = n + 1  # row n (the bonus row) always counts as rejected, so j <= n at the end
    token = tl.full([], 0, tl.int32)
    for r0 in range(0, n + 1, ROWS):
        rows = r0 + tl.arange(0, ROWS)
        slot = rows[:, None] * splits + sp[None, :]
        ok = (rows[:, None] <= n) & (sp[None, :] < splits)
        score = tl.load(cand_score_ptr + slot * 3, mask=ok, other=float("-inf"), volatile=True)
        col = tl.load(cand_col_ptr + slot * 2, mask=ok, other=0, volatile=True)
        if HAS_DRAFT_PROBS:
            # a residual max(p - q, 0) that is all zero means p == q: draw from p instead
            rmass = tl.load(cand_score_ptr + slot * 3 + 2, mask=ok, other=0.0, volatile=True)
            use_p = (tl.sum(rmass, axis=1) <= 0.0)[:, None]
            pscore = tl.load(cand_score_ptr + slot * 3 + 1, mask=ok, other=0.0, volatile=True)
            pcol = tl.load(cand_col_ptr + slot * 2 + 1, mask=ok, other=0, volatile=True)
            score = tl.where(use_p, pscore, score)
            col = tl.where(use_p, pcol, col)
        best = tl.argmax(score, axis=1)  # first slice wins ties: lowest column, like np.argmax
        tok = tl.sum(tl.where(sp[None, :] == best[:, None], col, 0), axis=1)
        is_draft = rows < n
        if MATCH:  # greedy, or a deterministic draft: kept iff it is the row's draw
            x = tl.load(draft_ptr + rows, mask=is_draft, other=-1).to(tl.int32)
            acc = is_draft & (tok == x)
        else:
            acc = is_draft & (
                tl.load(accept_ptr + rows, mask=is_draft, other=0, volatile=True) != 0
            )
        jc = tl.min(tl.where((rows <= n) & ~acc, rows, n + 1), axis=0)
        tok_j = tl.sum(tl.where(rows == jc, tok, 0), axis=0)
        token = tl.where((j > n) & (jc <= n), tok_j, token)
        j = tl.minimum(j, jc)
    for r0 in range(0, n + 1, ROWS):
        rows = r0 + tl.arange(0, ROWS)
        x = tl.load(draft_ptr + rows, mask=rows < j, other=-1).to(tl.int64)
        out = tl.where(rows < j, x, tl.where(rows == j, token.to(tl.int64), -1))
        tl.store(tokens_ptr + rows, out, mask=rows <= n)
    tl.store(num_accepted_ptr, j.to(tl.int64))


@triton.jit(do_not_specialize=["n", "top_k", "seed", "position", "split_blocks"])
def verify_kernel(
    logits_ptr,  # [n+1, V] fp32/fp16/bf16, row stride stride_l, column stride 1
    draft_ptr,  # [n] int32/int64
    draft_probs_ptr,  # [n, V] float, row stride stride_q (read iff HAS_DRAFT_PROBS)
    uniforms_ptr,  # [n] fp32 U[0, 1) (read iff EXPLICIT_RANDOMS)
    noise_ptr,  # [n+1, V] fp32 Exp(1), row stride stride_e (read iff EXPLICIT_RANDOMS)
    accept_ptr,  # [n+1] int32 scratch: draft i passed its test (with draft probs)
    cand_score_ptr,  # [n+1, splits, 3] fp32 scratch: best residual/E, best p/E, residual mass
    cand_col_ptr,  # [n+1, splits, 2] int32 scratch: the columns of those two bests
    counter_ptr,  # [1] int32: 0 before the launch, reset to 0 by the last program
    num_accepted_ptr,  # [1] int64 out
    tokens_ptr,  # [n+1] int64 out
    n,
    V,
    stride_l,
    stride_q,
    stride_e,
    temperature,  # max(T, 1e-6)
    top_k,
    top_p_hi,
    top_p_lo,  # top_p = top_p_hi + top_p_lo (fp64 split in two fp32)
    seed,  # Philox key (unless EXPLICIT_RANDOMS)
    position,  # output position t of row 0: Philox counters are keyed on t + row
    split_blocks,  # BLOCKs of columns per slice
    GREEDY: tl.constexpr,
    USE_TOP_K: tl.constexpr,
    USE_TOP_P: tl.constexpr,
    HAS_DRAFT_PROBS: tl.constexpr,
    EXPLICIT_RANDOMS: tl.constexpr,
    MAX_SPLITS: tl.constexpr,
    BLOCK: tl.constexpr,
    RADIX_BLOCK: tl.constexpr,
    ROWS: tl.constexpr,
):
    row = tl.program_id(0)
    split = tl.program_id(1)
    splits = tl.num_programs(1)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_l
    col_lo = split * split_blocks * BLOCK  # a multiple of BLOCK: aligned, vectorised loads
    col_hi = tl.minimum(col_lo + split_blocks * BLOCK, V)
    slot = row * splits + split
    if GREEDY:
        best, best_col = _greedy_slice(row_ptr, col_lo, col_hi, BLOCK)
        tl.store(cand_score_ptr + slot * 3, best)
        tl.store(cand_col_ptr + slot * 2, best_col)
    else:
        is_draft = row < n
        x = tl.load(draft_ptr + row, mask=is_draft, other=-1).to(tl.int32)
        kth = tl.full([], 0, tl.uint32)
        if USE_TOP_K:
            kth, _ = _radix_select(
                row_ptr,
                V,
                tl.to_tensor(top_k).to(tl.float64),
                0.0,
                temperature,
                1.0,
                kth,
                False,
                False,
                RADIX_BLOCK,
            )
        m, s64 = _row_stats(row_ptr, V, temperature, kth, USE_TOP_K, BLOCK)
        s = s64.to(tl.float32)
        cut_key = tl.full([], 0, tl.uint32)
        cut_col = tl.full([], -1, tl.int32)
        kept = 1.0
        if USE_TOP_P:
            top_p = tl.to_tensor(top_p_hi).to(tl.float64) + tl.to_tensor(top_p_lo).to(tl.float64)
            cut_key, above = _radix_select(
                row_ptr, V, top_p, m, temperature, s, kth, True, USE_TOP_K, RADIX_BLOCK
            )
            kept64, cut_col = _top_p_cut(
                row_ptr, V, top_p, cut_key, above, m, temperature, s, kth, USE_TOP_K, BLOCK
            )
            kept = kept64.to(tl.float32)

        # Philox counters of this row: high word t * 4 + stream (engine.sampling's layout)
        t = tl.to_tensor(position).to(tl.int64) + row.to(tl.int64)
        stream = 0  # E: the row's own draw (lookup drafts, the bonus row)
        if HAS_DRAFT_PROBS:
            stream = tl.where(is_draft, 2, 0)  # E': the recovered token's draw
        ctr_row = (t * 4 + stream) << 32
        if HAS_DRAFT_PROBS:
            # acceptance test of draft token x: u < min(1, p(x) / q(x))
            xs = tl.maximum(x, 0)
            lg_x = tl.load(row_ptr + xs).to(tl.float32)
            p_x = _target_probs(
                lg_x,
                xs,
                is_draft,
                m,
                temperature,
                s,
                kept,
                kth,
                cut_key,
                cut_col,
                USE_TOP_K,
                USE_TOP_P,
            )
            q_x = tl.load(
                draft_probs_ptr + row.to(tl.int64) * stride_q + xs, mask=is_draft, other=0.0
            )
            q_x = q_x.to(tl.float32)
            if EXPLICIT_RANDOMS:
                u = tl.load(uniforms_ptr + row, mask=is_draft, other=1.0)
            else:
                r, _, _, _ = tl.randint4x(seed, (t * 4 + 1) << 32)
                u = (r >> 8).to(tl.float32) * 5.960464477539063e-08  # 24 bits: u in [0, 1)
            ratio = p_x / tl.where(q_x > 0.0, q_x, 1.0)
            acc = is_draft & (q_x > 0.0) & (u < tl.minimum(1.0, ratio))
            tl.store(accept_ptr + row, acc.to(tl.int32), mask=split == 0)
        q_row = draft_probs_ptr + row.to(tl.int64) * stride_q

        # this slice's candidates: argmax(residual / E), and argmax(p / E) for the p == q case
        noise_row = noise_ptr + row.to(tl.int64) * stride_e
        best_r = tl.full([], -1.0, tl.float32)
        col_r = col_lo
        best_p = tl.full([], -1.0, tl.float32)
        col_p = col_lo
        rmass = tl.full([], 0.0, tl.float32)
        for start in range(col_lo, col_hi, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            valid = cols < col_hi
            lg = tl.load(row_ptr + cols, mask=valid, other=float("-inf")).to(tl.float32)
            p = _target_probs(
                lg,
                cols,
                valid,
                m,
                temperature,
                s,
                kept,
                kth,
                cut_key,
                cut_col,
                USE_TOP_K,
                USE_TOP_P,
            )
            if EXPLICIT_RANDOMS:
                e = tl.load(noise_row + cols, mask=valid, other=1.0)
            else:
                e = _philox_exp(seed, ctr_row + start // 4, BLOCK)
            if HAS_DRAFT_PROBS:
                # A block-shaped mask: the interpreter of triton 3.9 refuses a
                # block & scalar-bool mask ("mask has unsupported dtype").
                q_ok = cols < tl.where(is_draft, col_hi, 0)
                q = tl.load(q_row + cols, mask=q_ok, other=0.0).to(tl.float32)
                res = tl.maximum(p - q, 0.0)
                rmass += tl.sum(res, axis=0)
                sc = p / e
                bm = tl.max(sc, axis=0)
                col_p = tl.where(bm > best_p, start + tl.argmax(sc, axis=0), col_p)
                best_p = tl.maximum(bm, best_p)
            else:
                res = p  # the row's draw argmax(p / E); x is kept iff it wins
            sc = res / e
            bm = tl.max(sc, axis=0)
            col_r = tl.where(bm > best_r, start + tl.argmax(sc, axis=0), col_r)
            best_r = tl.maximum(bm, best_r)
        tl.store(cand_score_ptr + slot * 3, best_r)
        tl.store(cand_score_ptr + slot * 3 + 1, best_p)
        tl.store(cand_score_ptr + slot * 3 + 2, rmass)
        tl.store(cand_col_ptr + slot * 2, col_r)
        tl.store(cand_col_ptr + slot * 2 + 1, col_p)

    # the last program to arrive merges every row's candidates (no second launch)
    tl.debug_barrier()
    arrived = tl.atomic_add(counter_ptr, 1, sem="acq_rel", scope="gpu")
    if arrived == (n + 1) * splits - 1:
        _finalize(
            draft_ptr,
            accept_ptr,
            cand_score_ptr,
            cand_col_ptr,
            num_accepted_ptr,
            tokens_ptr,
            n,
            splits,
            GREEDY or not HAS_DRAFT_PROBS,
            HAS_DRAFT_PROBS,
            MAX_SPLITS,
            ROWS,
        )
        tl.atomic_xchg(counter_ptr, 0, sem="relaxed", scope="gpu")
