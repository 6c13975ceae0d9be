"""Exact single-query search over a flat index that reads a half-precision copy first.

A flat search of one query is one matrix-vector product over every stored vector: memory-bound
(20 MB of float32 at 20k products, ~2 ms when the vectors are not in cache). `Prescan` keeps a
float16 copy of the vectors (a FAISS ``IndexScalarQuantizer`` QT_fp16: half the bytes) and
answers in two steps:

1. scan the fp16 copy for the top k+margin approximate scores (FAISS, exhaustive);
2. re-score, exactly, every row whose approximate score is within ``2·E(q)`` of the k-th
   approximate score, and rank those by (exact score desc, row asc).

**Why the result is the exact top-k.** E(q) bounds |approximate − exact| for every row (below).
Let t be the k-th approximate score and A the k rows at or above it. A row whose approximate
score is below t − 2E has an exact score below t − E, and each row of A has one of at least
t − E: k rows beat it strictly, so it is not in the exact top-k, whatever the tie rule. Its
rows are therefore among the candidates, which are re-scored and ranked like the full scan.

**The bound.** The fp16 codes x̂ satisfy |x̂ᵢ − xᵢ| ≤ 2⁻¹¹·|xᵢ| + ρ, with ρ measured on the
stored vectors when the copy is built (≤ 2⁻²⁵, fp16's subnormal half-spacing; measured in
float32, plus the rounding of that measurement), so |q·x̂ − q·x| ≤ 2⁻¹¹·‖q‖·‖x‖ + ρ·‖q‖₁. Each float32 dot product of d
terms (FAISS's over x̂, BLAS's over x) is within γ_d·‖q‖·‖x‖ of its real value, γ_d =
d·u/(1 − d·u), u = 2⁻²⁴, in any summation order. E(q) is the sum of the three over the
largest stored norms, doubled for safety (the window stays ~2e-3 wide at d = 256: a few rows
beyond k are re-scored).

**Bit for bit the full scan's scores.** The full scan (`q @ xb.T`, a BLAS gemv) computes rows in
groups; a score's last bits depend on the kernel that computed it, so re-scoring a row alone
can differ from the scan in the last bit and reorder near-ties. The candidates are re-scored by
aligned 4-row blocks (one gemv per block, numpy's batched matmul), which on OpenBLAS's kernels
gives the scan's bits. That is not assumed: `Prescan.build` re-scores every row that way for a
few probe queries and compares with the full scan bit for bit (and checks the approximate
scores against E); on any difference, or a non-finite vector, it returns None and the index
keeps the full scan. A query whose candidates tie across the k-th place (where the full scan's
`argpartition` picks among them) also falls back to the full scan. So the answer is the full
scan's, ids, order and scores.

Built in memory from the flat index's own vectors on first use (~10 ms and 10 MB at 20k, with
its checks ~20 ms): no cache file, since checking a stored copy against the vectors costs what
building it does.
"""

from __future__ import annotations

import math

import faiss
import numpy as np

__all__ = ["BLOCK", "Prescan"]

#: Rows per re-scoring block (the gemv kernels' group: see the module docstring).
BLOCK = 4
_U = 2.0 ** -24  # float32 unit roundoff
_FP16_REL = 2.0 ** -11  # fp16 unit roundoff (normal range)
_SAFETY = 2.0
_CHECK_ROWS = 1024  # rows per chunk when the copy's error is measured
_PROBES = 2  # probe queries of the self-test: a random one and a stored vector
_PROBE_SEED = 20261204


class Prescan:
    """A float16 copy of a flat index's vectors and the bound that makes its pre-scan exact.

    Use `Prescan.build(xb)`; `search(q, k)` answers one query, or None when the caller must
    run the full scan (a non-finite query, too many rows near the cut, a tie at the k-th place).
    """

    def __init__(self, xb: np.ndarray, owner: object = None) -> None:
        self.xb = xb
        #: what owns `xb`'s memory when it is a view of a FAISS index's storage (kept alive with it)
        self.owner = owner
        self.n, self.d = int(xb.shape[0]), int(xb.shape[1])
        self.nfull = self.n // BLOCK  # complete blocks; rows after nfull·BLOCK are the tail
        self.blocks = xb[: self.nfull * BLOCK].reshape(self.nfull, BLOCK, self.d)
        self.sq = faiss.IndexScalarQuantizer(self.d, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
        self.sq.add(xb)
        codes = faiss.rev_swig_ptr(self.sq.codes.data(), self.n * self.d * 2).view(np.float16)
        codes = codes.reshape(self.n, self.d)  # a view of the index's codes: its fp16 values
        excesses, norms2, tops = [0.0], [0.0], [0.0]
        diff = np.empty((_CHECK_ROWS, self.d), np.float32)
        scaled = np.empty((_CHECK_ROWS, self.d), np.float32)
        for s in range(0, self.n, _CHECK_ROWS):  # in place, a chunk at a time: ~13 ms at 20k
            x = xb[s : s + _CHECK_ROWS]
            dd, aa = diff[: len(x)], scaled[: len(x)]
            dd[...] = codes[s : s + _CHECK_ROWS]
            np.abs(np.subtract(dd, x, out=dd), out=dd)  # |x̂ − x|
            np.abs(x, out=aa)
            tops.append(float(aa.max()))
            aa *= np.float32(_FP16_REL)
            excesses.append(float((dd - aa).max()))  # max of |x̂ − x| − 2⁻¹¹·|x|
            norms2.append(float(np.einsum("ij,ij->i", x, x).max()))
        # (np.max, not max(): a NaN anywhere must show)
        excess, norm2, top = float(np.max(excesses)), float(np.max(norms2)), float(np.max(tops))
        # what float32 rounding could hide in those measurements: three roundings of terms up to
        # 2⁻¹⁰·|x| in the excess, γ_d in the squared norms; ‖x̂‖ <= ‖x‖·(1 + 2⁻¹¹) + ρ·√d
        gamma = self.d * _U / (1.0 - self.d * _U)
        rho = max(excess, 0.0) + 3 * _U * 2.0 ** -10 * top
        norm = math.sqrt(norm2 * (1 + gamma))
        norm_hat = norm * (1 + _FP16_REL) + rho * math.sqrt(self.d)
        self._per_l2 = _SAFETY * (_FP16_REL * norm + gamma * (norm + norm_hat))
        self._per_l1 = _SAFETY * rho
        self.finite = all(math.isfinite(v) for v in (norm, norm_hat, rho))

    @classmethod
    def build(cls, xb: np.ndarray, owner: object = None) -> Prescan | None:
        """The pre-scan over `xb` ((n, d) float32, C-contiguous; `owner`: what owns its memory, if
        it is a view), or None where it would not give the full scan's answer bit for bit on this
        machine (see the module docstring)."""
        if xb.ndim != 2 or xb.dtype != np.float32 or not xb.flags.c_contiguous or xb.shape[0] < 2 * BLOCK:
            return None
        pre = cls(xb, owner)
        return pre if pre.finite and pre._self_test() else None

    def window(self, q: np.ndarray) -> float:
        """2·E(q): how far below the k-th approximate score a row may still be in the exact top-k."""
        q64 = q.astype(np.float64)
        return 2.0 * (self._per_l2 * float(np.linalg.norm(q64)) + self._per_l1 * float(np.abs(q64).sum()))

    def rescore(self, q: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Exact float32 scores of `rows` for `q`, each computed within its aligned block."""
        blk = rows // BLOCK
        inner = blk < self.nfull
        out = np.empty(rows.size, np.float32)
        if inner.any():
            ub = np.unique(blk[inner])
            s = np.matmul(self.blocks[ub], q)  # one gemv per block
            out[inner] = s[np.searchsorted(ub, blk[inner]), rows[inner] % BLOCK]
        if not inner.all():
            start = self.nfull * BLOCK
            out[~inner] = (self.xb[start:] @ q)[rows[~inner] - start]
        return out

    def _self_test(self) -> bool:
        """Every row re-scored by blocks equals the full scan's bits for a few probe queries, and
        the pre-scan's approximate scores lie within E of the exact ones."""
        rng = np.random.default_rng(_PROBE_SEED)
        probes = [rng.standard_normal(self.d).astype(np.float32) for _ in range(_PROBES - 1)]
        probes.append(np.ascontiguousarray(self.xb[self.n // 2]))  # a stored vector: a real-looking query
        chunk = 1024 * BLOCK
        for q in probes:
            q = q / np.float32(max(float(np.linalg.norm(q)), 1e-12))
            full = (q[None] @ self.xb.T)[0]  # the flat search's own expression
            for s in range(0, self.n, chunk):
                rows = np.arange(s, min(self.n, s + chunk))
                if not np.array_equal(self.rescore(q, rows), full[rows]):
                    return False
            approx, ids = self.sq.search(q[None], min(self.n, 256))
            if not np.all(np.abs(approx[0].astype(np.float64) - full[ids[0]]) <= self.window(q) / 4):
                return False
        return True

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(scores, rows) of the exact top-k of one query (float32, (d,)), score desc then row asc,
        as the full scan gives them; None when the caller must run the full scan."""
        if not 0 < k < self.n or not np.all(np.isfinite(q)):
            return None
        width = self.window(q)
        k2 = min(self.n, k + max(64, k // 4))
        approx, ids = self.sq.search(q[None], k2)
        approx, ids = approx[0], ids[0]
        cut = float(approx[k - 1]) - width
        if k2 < self.n and float(approx[k2 - 1]) >= cut:
            return None  # rows beyond the k2 fetched may be within the window
        cand = ids[approx >= cut]
        if cand.size < k or cand.min() < 0:
            return None
        scores = self.rescore(q, cand)
        order = np.lexsort((cand, -scores))
        if cand.size > k and scores[order[k - 1]] == scores[order[k]]:
            return None  # a tie across the cut: the full scan's argpartition decides which rows stay
        order = order[:k]
        return scores[order], cand[order]
