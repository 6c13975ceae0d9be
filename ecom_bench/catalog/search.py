"""Hybrid catalogue search: FAISS semantic + BM25 lexical, fused by reciprocal rank.

``SearchEngine.search_page(query, filters=..., depth=d, limit=k, offset=o)``:

1. semantic: the query embedding's top-``depth`` products by cosine (FAISS);
2. lexical: the top-``depth`` products by BM25 (bm25s, numpy backend) over the same
   ``Product.search_text()``; query words absent from the vocabulary are also tried
   with their closest vocabulary spellings (one edit: drop/insert/swap/replace a char),
   at half weight, so a typo'd brand still matches;
3. reciprocal-rank fusion, ``score = Σ 1/(RRF_K + rank)``, ranks from 1; the first
   ``depth`` fused candidates are the pool;
4. without filters, the results are the pool. With filters, they are every product of
   the catalogue that passes them: first those in the pool, by relevance, then the rest
   in catalogue order. A filter is a promise ("only products of this brand"): applied
   to the pool alone it would hide qualifying products behind a short list that looks
   complete. ``depth`` (the design's difficulty axis top_k(d), "retrieval depth") thus
   bounds the free text's reach: how many products a query can find by its words, and
   how many filter matches come ranked by relevance before the rest;
5. results ``offset + 1 .. offset + limit`` are returned, with the total they are part
   of (`SearchPage`); ``search(...)`` is the first page's hits.

Ordering is deterministic: fused score descending, ties by catalogue index.
The vector index and BM25 are built lazily, once per engine (thread-safe); the vector
index is cached on disk (see `ecom_bench.catalog.vector_index`).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ecom_bench.catalog.catalog import progress
from ecom_bench.catalog.embedders import Embedder, get_embedder
from ecom_bench.catalog.vector_index import IndexKind, VectorIndex, default_cache_dir, load_or_build_index
from ecom_bench.catalog.models import Product

if TYPE_CHECKING:
    from ecom_bench.catalog.catalog import Catalog

__all__ = ["RRF_K", "SearchEngine", "SearchFilters", "SearchHit", "SearchPage", "tokenize", "tokenize_corpus"]

log = logging.getLogger(__name__)

RRF_K = 60
_TYPO_WEIGHT = 0.5
_TYPO_MIN_LEN = 4
_ANN_MARGIN = 16  # extra FAISS neighbours fetched so tie order at the cut is by index

# ---------------------------------------------------------------------------- tokens

# Runs of letters/digits, optionally joined by - . / + ' (so "usb-c", "2.5mm", "65w",
# "wi-fi", "m.2" stay whole).
_TOKEN_RE = re.compile(r"[^\W_]+(?:[-./+'][^\W_]+)*")
_PART_RE = re.compile(r"[^\W_]+")

STOPWORDS = frozenset(
    """a an and are as at be but by for from has have i in is it its me my of on or our so
    than that the this to was were will with you your i'm im want need looking please
    some any something under below less cheap cheaper cheapest best buy get find show
    what which how about around within priced dollars usd""".split()
)


def tokenize(text: str) -> list[str]:
    """Lowercase lexical tokens, keeping model numbers and hyphenated names matchable.

    A compound like ``USB-C`` yields ``usb-c`` plus its parts ``usb``, ``c`` and, for
    hyphenated ones, the joined ``usbc``; so "USB-C", "usb c" and "usbc" all match.
    Plain tokens ("65w", "voltedge") stay as they are. Stopwords are dropped.
    """
    out: list[str] = []
    for m in _TOKEN_RE.finditer(text.lower()):
        tok = m.group(0)
        parts = _PART_RE.findall(tok)
        if len(parts) == 1:
            if tok not in STOPWORDS:
                out.append(tok)
            continue
        if tok not in STOPWORDS:
            out.append(tok)
        out.extend(p for p in parts if p not in STOPWORDS)
        if "-" in tok:
            out.append("".join(parts))
    return out


_EDIT_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def _edits1(word: str) -> set[str]:
    """All strings one edit (delete, adjacent swap, replace, insert) from `word`."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    swaps = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in _EDIT_ALPHABET]
    inserts = [a + c + b for a, b in splits for c in _EDIT_ALPHABET]
    return set(deletes + swaps + replaces + inserts)


# --------------------------------------------------------------------------- filters


def _norm(s: Any) -> str:
    return " ".join(str(s).split()).casefold()


def _levels(path: str) -> tuple[str, ...]:
    return tuple(_norm(x) for x in str(path).split(">") if x.strip())


@lru_cache(maxsize=65536)
def _singular(word: str) -> str:
    """The word as one item is called ("chargers" -> "charger", "mice" -> "mouse"; pair and
    mass nouns, codes and singulars as they are): a shopper's "wall charger" names the
    category "Wall Chargers"."""
    from ecom_bench.catalog.naming import noun_from

    one = noun_from(word).one.casefold()
    return one[:-2] + "y" if one.endswith("ie") else one  # "hoodie" / "hoody": one key, whichever inflection


@lru_cache(maxsize=65536)
def _words(level: str) -> frozenset[str]:
    return frozenset(map(_singular, _PART_RE.findall(level)))


def _level_matches(want: str, have: str) -> bool:
    """Equal, or every word of `want` is a word of `have`, singular or plural alike
    ("chargers" ~ "Chargers & Power", "mouse" ~ "Mice")."""
    if want == have:
        return True
    w = _words(want)
    return bool(w) and w <= _words(have)


def _path_matches(want: tuple[str, ...], path: Sequence[str]) -> bool:
    """Whether the levels `want` match a contiguous run of the category `path`'s levels."""
    levels = tuple(_norm(c) for c in path)
    n, m = len(levels), len(want)
    return any(all(_level_matches(want[j], levels[i + j]) for j in range(m)) for i in range(n - m + 1))


@dataclass(frozen=True)
class SearchFilters:
    """Hard constraints, applied to the whole catalogue (`SearchEngine.matching_rows`).

    * `category`: case-insensitive; matches when its levels (split on ">") match a
      contiguous run of the product's category path, so a single level ("Wall
      Chargers"), a prefix ("Electronics > Chargers & Power") or an inner run all match.
      A level matches when equal, or when all its words are words of the product's
      level, singular or plural alike: "chargers" and "charger" match "Chargers & Power"
      and "Wall Chargers", "mouse" matches "Mice".
    * `brand`: case-insensitive exact match on `Product.brand`.
    * `min_price` / `max_price`: inclusive bounds on the price the product is bought at: its
      listed price, or, when `features` names values of its variants, the price of one of
      those variants (a charger listed at $27 whose USB-C variant costs $24 is found under
      max_price=25 with features=["USB-C"], not without: bought as listed it costs $27).
    * `min_rating`: inclusive lower bound on the average rating.
    * `max_ship_days`: inclusive upper bound on shipping days.
    * `attributes`: every key must be present on `Product.attributes` with an equal
      value, both compared case-insensitively.
    * `features`: every value must be one the product can be bought with, whatever the
      attribute: one of its attributes' values or one of its variants' (case-insensitive),
      so a shopper's "USB-C" finds a charger sold in USB-C and Lightning.
    """

    category: str | None = None
    brand: str | None = None
    min_price: float | None = None
    max_price: float | None = None
    min_rating: float | None = None
    max_ship_days: int | None = None
    attributes: Mapping[str, str] | None = None
    features: tuple[str, ...] | None = None

    @property
    def is_empty(self) -> bool:
        return (
            not (self.category and self.category.strip())
            and not (self.brand and self.brand.strip())
            and self.min_price is None
            and self.max_price is None
            and self.min_rating is None
            and self.max_ship_days is None
            and not self.attributes
            and not self.wanted_features
        )

    @property
    def wanted_features(self) -> tuple[str, ...]:
        """The non-blank `features`, folded."""
        return tuple(dict.fromkeys(_norm(v) for v in self.features or () if v.strip()))

    def compile(self) -> _CompiledFilters:
        return _CompiledFilters(self)

    def matches(self, product: Product) -> bool:
        return self.compile()(product)


class _CompiledFilters:
    __slots__ = ("cat", "brand", "lo", "hi", "rating", "ship", "attrs", "features")

    def __init__(self, f: SearchFilters) -> None:
        self.cat = _levels(f.category) if f.category and f.category.strip() else None
        self.brand = _norm(f.brand) if f.brand and f.brand.strip() else None
        self.lo = f.min_price
        self.hi = f.max_price
        self.rating = f.min_rating
        self.ship = f.max_ship_days
        self.attrs = {_norm(k): _norm(v) for k, v in f.attributes.items()} if f.attributes else None
        self.features = f.wanted_features

    def column_mask(self, catalog: Catalog, rows: np.ndarray) -> np.ndarray:
        """The price, rating, shipping and brand tests on the catalogue's columns for `rows`
        (the same comparisons `__call__` makes on a product)."""
        ok = np.ones(rows.size, dtype=bool)
        if self.lo is not None or self.hi is not None:
            ok &= self._priced_within(catalog, rows)
        if self.rating is not None:
            ok &= ~(catalog.ratings[rows] < self.rating)
        if self.ship is not None:
            ok &= ~(catalog.ship_days[rows] > self.ship)
        if self.brand is not None:
            ok &= catalog.folded_brands[rows] == self.brand
        return ok

    def _in_range(self, prices: np.ndarray) -> np.ndarray:
        ok = np.ones(prices.shape, dtype=bool)
        if self.lo is not None:
            ok &= ~(prices < self.lo)
        if self.hi is not None:
            ok &= ~(prices > self.hi)
        return ok

    def _priced_within(self, catalog: Catalog, rows: np.ndarray) -> np.ndarray:
        """For each of `rows`: is the price it is bought at in range (`SearchFilters`)?"""
        ok = self._in_range(catalog.prices[rows])
        if not self.features or not rows.size:
            return ok
        codes = catalog.variant_codes
        wanted = [codes.value_code[f] for f in self.features if f in codes.value_code]
        owner, flat = catalog.variants_of(rows)
        chosen = np.isin(codes.value[flat], wanted)
        has_chosen = np.zeros(rows.size, dtype=bool)
        has_chosen[owner[chosen]] = True
        within = np.zeros(rows.size, dtype=bool)
        within[owner[chosen & self._in_range(catalog.variant_prices[flat])]] = True
        return np.where(has_chosen, within, ok)

    def _bought_prices(self, p: Product) -> list[float]:
        """The prices `p` is bought at: its features' variants', or else its listing's."""
        chosen = [v.price for v in p.variants if _norm(v.value) in self.features] if self.features else []
        return chosen or [p.price]

    def __call__(self, p: Product) -> bool:
        if (self.lo is not None or self.hi is not None) and not self._in_range(
                np.array(self._bought_prices(p))).any():
            return False
        if self.rating is not None and p.rating < self.rating:
            return False
        if self.ship is not None and p.ship_days > self.ship:
            return False
        if self.brand is not None and _norm(p.brand) != self.brand:
            return False
        if self.cat is not None and not _path_matches(self.cat, p.category):
            return False
        if self.attrs:
            have = {_norm(k): _norm(v) for k, v in p.attributes.items()}
            for k, v in self.attrs.items():
                if have.get(k) != v:
                    return False
        if self.features:
            offered = {_norm(v) for v in p.attributes.values()} | {_norm(v.value) for v in p.variants}
            if not offered.issuperset(self.features):
                return False
        return True


@dataclass(frozen=True)
class SearchHit:
    product: Product
    score: float  # the fused relevance score; 0.0 for a filter match beyond the search's depth

    @property
    def product_id(self) -> str:
        return self.product.id


@dataclass(frozen=True)
class SearchPage:
    """One page of a search, and what it says about the rest.

    `total` is how many products the search reaches: with filters, every product in the
    catalogue that passes them; without, the `depth` candidates of the query. The first
    `ranked` of them are ordered by relevance to the query (they are among its `depth`
    best candidates); the rest are filter matches in catalogue order. `hits` are results
    ``offset + 1`` to ``offset + len(hits)``.
    """

    hits: list[SearchHit]
    total: int
    ranked: int
    offset: int
    filtered: bool

    @property
    def next_offset(self) -> int | None:
        """Where the next page starts, or None when this one is the last."""
        end = self.offset + len(self.hits)
        return end if end < self.total else None


# ---------------------------------------------------------------------------- engine


def _check_positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _top_by_score(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest positive scores; score desc, ties by index asc."""
    cand = np.flatnonzero(scores > 0)
    if cand.size > k:
        s = scores[cand]
        kth = np.partition(s, s.size - k)[s.size - k]
        above = cand[s > kth]
        ties = cand[s == kth]  # ascending index
        cand = np.concatenate([above, ties[: k - above.size]])
    return cand[np.lexsort((cand, -scores[cand]))]


#: Bump when `tokenize` or the lexical index layout changes: part of the BM25 cache key.
LEXICAL_VERSION = 1


def tokenize_corpus(texts: Iterable[str]) -> tuple[list[list[int]], dict[str, int]]:
    """Every text's `tokenize` tokens as ids into a vocabulary (first appearance order). A text
    without tokens gets the empty token "" (bm25s's placeholder), as `bm25s` would be given
    ``[""]``. (`tokenize_flat`, as lists.)"""
    ids, offsets, vocab = tokenize_flat(texts)
    flat = ids.tolist()
    return [flat[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)], vocab


#: Postings scored at once in `build_bm25`.
_SCORE_CHUNK = 1 << 22
#: Texts tokenised per Arrow batch in `tokenize_flat`.
_TOKENIZE_CHUNK = 1 << 16


def tokenize_flat(texts: Iterable[str] | pa.Array) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """`tokenize_corpus` as (ids, offsets, vocab): text j's token ids are ids[offsets[j]:
    offsets[j + 1]] (int32). No token spans whitespace (tokens are runs of word characters
    and -./+'), so a text's tokens are its space-separated words' tokens in order: Arrow
    splits the texts into words, each distinct word is tokenised once, and the texts' ids
    are gathered from the words' with numpy (no Python loop over the texts). Vocabulary ids
    are in order of first appearance, "" at the place of the first text without tokens."""
    arr = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(list(texts), pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    vocab: dict[str, int] = {}
    known: dict[str, np.ndarray] = {}
    first_text: list[int] = []  # per token id, the text it first appears in
    id_parts: list[np.ndarray] = []
    len_parts: list[np.ndarray] = []
    for s in range(0, len(arr), _TOKENIZE_CHUNK):
        words = pc.split_pattern(arr[s : s + _TOKENIZE_CHUNK], " ")
        word_off = np.asarray(words.offsets, np.int64)
        word_off -= word_off[0]
        enc = pc.dictionary_encode(words.flatten())
        codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)
        names = enc.dictionary.to_pylist()
        new = [k for k, w in enumerate(names) if w not in known]
        if new:  # codes number the words in order of first appearance: where each first occurs
            firsts = np.flatnonzero(np.concatenate(([True], np.diff(np.maximum.accumulate(codes)) > 0)))
            texts_of = (np.searchsorted(word_off, firsts, side="right") - 1 + s).tolist()
            for k in new:
                before = len(vocab)
                known[names[k]] = np.array([vocab.setdefault(t, len(vocab)) for t in tokenize(names[k])], np.int32)
                first_text.extend([texts_of[k]] * (len(vocab) - before))
        per_word = [known[w] for w in names]
        word_len = np.fromiter(map(len, per_word), np.int64, len(per_word))
        word_ids = np.concatenate(per_word) if per_word else np.zeros(0, np.int32)
        word_at = np.concatenate(([0], np.cumsum(word_len)))
        lens = word_len[codes]
        ends = np.cumsum(lens)
        total = int(ends[-1]) if ends.size else 0
        id_parts.append(word_ids[np.repeat(word_at[codes] - (ends - lens), lens) + np.arange(total)])
        len_parts.append(np.diff(np.concatenate(([0], ends))[word_off]))
    ids = np.concatenate(id_parts) if id_parts else np.zeros(0, np.int32)
    lengths = np.concatenate(len_parts) if len_parts else np.zeros(0, np.int64)
    empty = np.flatnonzero(lengths == 0)
    if empty.size:  # "" takes the id it had when the first empty text came; later ids move up one
        at = int(np.searchsorted(np.asarray(first_text, np.int64), empty[0]))
        ids[ids >= at] += 1
        moved = [(t, i + (i >= at)) for t, i in vocab.items()]
        vocab = dict(moved[:at] + [("", at)] + moved[at:])
        starts = np.concatenate(([0], np.cumsum(lengths)))[empty]
        ids = np.insert(ids, starts, np.int32(at))
        lengths[empty] = 1
    return ids.astype(np.int32, copy=False), np.concatenate(([0], np.cumsum(lengths))), vocab


def build_bm25(ids: np.ndarray, offsets: np.ndarray, vocab: dict[str, int]) -> Any:
    """A `bm25s.BM25` (numpy backend, its default Lucene scoring) over token-id documents,
    equal array for array to ``bm25s.BM25().index((corpus, vocab))``, computed on whole
    arrays: bm25s counts terms with a `Counter` per document and scores document by
    document (~40 s at 2M). Uses bm25s's own idf and tf formulas; (token, document) pairs
    are counted by scipy's CSR -> CSC conversion, which also gives bm25s's layout (each
    token's postings in document order)."""
    import bm25s
    import scipy.sparse as sp
    from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer

    bm = bm25s.BM25(backend="numpy")
    n_docs, n_vocab = len(offsets) - 1, len(vocab)
    lengths = np.diff(offsets).astype(np.int64)
    avg_doc_len = lengths.mean() if n_docs else np.float64("nan")
    counts = sp.csr_matrix((np.ones(len(ids), np.float32), ids, offsets), shape=(n_docs, n_vocab))
    counts.sum_duplicates()
    tf = counts.tocsc()
    del counts
    tf.sort_indices()
    doc = tf.indices.astype(np.int32, copy=False)
    indptr = tf.indptr.astype(np.int64)
    df = np.diff(indptr)
    idf_of = _select_idf_scorer(bm.idf_method)
    idf = np.zeros(n_vocab, dtype=bm.dtype)
    for t in np.flatnonzero(df).tolist():
        idf[t] = idf_of(int(df[t]), N=n_docs)
    token = np.repeat(np.arange(n_vocab, dtype=np.int32), df)
    tfc_of = _select_tfc_scorer(bm.method)
    data = np.empty(len(doc), dtype=bm.dtype)
    for s in range(0, len(doc), _SCORE_CHUNK):  # in slices: float64 temporaries of a slice, not of all
        e = s + _SCORE_CHUNK
        tfc = tfc_of(tf_array=tf.data[s:e], l_d=lengths[doc[s:e]], l_avg=avg_doc_len, k1=bm.k1, b=bm.b, delta=bm.delta)
        data[s:e] = idf[token[s:e]] * tfc
    del token, tf
    bm.nonoccurrence_array = None
    bm.scores = {"data": data, "indices": doc, "indptr": indptr, "num_docs": n_docs}
    vocab = dict(vocab)
    if "" not in vocab:  # as `index` does: the placeholder token, with no postings
        vocab[""] = max(vocab.values(), default=-1) + 1
    bm.vocab_dict = vocab
    bm.unique_token_ids_set = set(vocab.values())
    return bm


class _Lexical:
    """bm25s over tokenised search texts, plus one-edit typo expansion.

    Built from token ids (`tokenize_flat`, `build_bm25`); with `cache_path`, saved there
    after a build and loaded memory-mapped (``bm25s`` ``mmap=True``), so a 2M-product index
    costs page cache rather than heap. `texts` may be a function giving them: it is called
    only when there is no cache to load (a 2M catalogue's texts take ~1 s and 800 MB)."""

    def __init__(self, texts: Iterable[str] | pa.Array | Callable[[], pa.Array] | None = None, *,
                 cache_path: Path | None = None, show_progress: bool = False) -> None:
        import bm25s

        # bm25s sets its own logger to DEBUG at import, so its chatter reaches any
        # root handler; let it follow the application's logging configuration instead.
        bm25_log = logging.getLogger("bm25s")
        if bm25_log.level == logging.DEBUG:
            bm25_log.setLevel(logging.NOTSET)
        self.bm25: Any = None
        if cache_path is not None and (cache_path / "params.index.json").exists():
            try:
                self.bm25 = bm25s.BM25.load(str(cache_path), mmap=True)
            except (OSError, ValueError, KeyError) as e:
                log.warning("BM25 cache %s is unreadable (%s); rebuilding", cache_path, e)
        if self.bm25 is None:
            if texts is None:
                raise ValueError("no texts to index and no cached BM25 index")
            with progress(2, "Building the BM25 index (cached afterwards)", "step", show=show_progress) as bar:
                tokens = tokenize_flat(texts() if callable(texts) else texts)
                bar.update(1)
                self.bm25 = build_bm25(*tokens)
                del tokens
                bar.update(1)
            if cache_path is not None and self._save(cache_path):
                self.bm25 = bm25s.BM25.load(str(cache_path), mmap=True)  # page cache, not heap
            pa.default_memory_pool().release_unused()
        self.vocab: dict[str, int] = self.bm25.vocab_dict
        self.n = int(self.bm25.scores["num_docs"])
        self._data = self.bm25.scores["data"]
        self._indices = self.bm25.scores["indices"]
        self._indptr = np.asarray(self.bm25.scores["indptr"])
        self._df = np.diff(self._indptr)  # documents per token id
        self._typo_cache: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()
        self._local = threading.local()  # per-thread score buffers (`top`)
        self._bounds: dict[int, float] = {}

    def _save(self, path: Path) -> bool:
        """Write the index to `path` (whole or not at all); whether it was written."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            self.bm25.save(str(tmp), show_progress=False)
            if path.exists():
                shutil.rmtree(path, ignore_errors=True)
            os.replace(tmp, path)
            return True
        except OSError as e:
            log.warning("could not write BM25 cache %s (%s); continuing uncached", path, e)
            return False
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _corrections(self, tok: str) -> tuple[int, ...]:
        hit = self._typo_cache.get(tok)
        if hit is not None:
            return hit
        ids: tuple[int, ...] = ()
        if len(tok) >= _TYPO_MIN_LEN and tok.isalnum():
            cands = sorted(t for t in _edits1(tok) if t in self.vocab)
            if cands:
                # the most frequent spellings, at most two (ties: alphabetical)
                cands.sort(key=lambda t: -int(self._df[self.vocab[t]]))
                ids = tuple(self.vocab[t] for t in cands[:2])
        with self._lock:
            if len(self._typo_cache) > 100_000:
                self._typo_cache.clear()
            self._typo_cache[tok] = ids
        return ids

    def _scores_from_ids(self, ids: list[int]) -> np.ndarray:
        """BM25 scores of every document for these token ids: bm25s's sum, done with one
        scatter-add per token (a token's postings name each document once, so this is the
        float32 arithmetic of bm25s's ``np.add.at``, several times faster)."""
        if self.bm25.nonoccurrence_array is not None:  # pragma: no cover - BM25L/BM25+ only
            return self.bm25.get_scores_from_ids(ids)
        scores = np.zeros(self.n, dtype=np.float32)
        for t in ids:
            a, b = int(self._indptr[t]), int(self._indptr[t + 1])
            scores[self._indices[a:b]] += self._data[a:b]
        return scores

    def _terms(self, query: str) -> tuple[list[int], list[int]]:
        """The query's token ids: those in the vocabulary, and the typo corrections of the rest."""
        exact: list[int] = []
        fuzzy: list[int] = []
        for tok in tokenize(query):
            tid = self.vocab.get(tok)
            if tid is not None and tok:
                exact.append(tid)
            else:
                fuzzy.extend(self._corrections(tok))
        return exact, fuzzy

    def scores(self, query: str) -> np.ndarray:
        """Every document's score for `query` (exact tokens, plus typo corrections at half weight)."""
        exact, fuzzy = self._terms(query)
        total = np.zeros(self.n, dtype=np.float32)
        if exact:
            total += self._scores_from_ids(exact)
        if fuzzy:
            total += _TYPO_WEIGHT * self._scores_from_ids(fuzzy)
        return total

    def top(self, query: str, k: int) -> np.ndarray:
        """The k best documents for `query` (score desc, ties by index asc; positive scores only):
        `_top_by_score(self.scores(query), k)`, computed without looking at every document.

        Scores are summed into per-thread buffers in the order `scores` sums them (the same
        float32 arithmetic), read back only at the query tokens' postings and zeroed there
        after. MaxScore pruning: θ, the k-th best score among the documents of the rarest
        token, bounds the final k-th score from below; a document holding only tokens whose
        largest contributions add up to less than θ cannot reach it, so only the postings of
        the other ("essential") tokens are candidates. At 2M products a name query touches
        ~240k postings but selects among a few hundred documents instead of all 2M scores."""
        if self.bm25.nonoccurrence_array is not None:  # pragma: no cover - BM25L/BM25+ only
            return _top_by_score(self.scores(query), k)
        exact, fuzzy = self._terms(query)
        if not exact and not fuzzy:
            return np.zeros(0, np.int64)
        a, b = self._buffers(bool(fuzzy))
        terms: list[tuple[np.ndarray, float]] = []  # (postings, largest contribution)
        touched: list[tuple[np.ndarray, np.ndarray]] = []
        try:
            for ids, buf, weight in ((exact, a, 1.0), (fuzzy, b, _TYPO_WEIGHT)):
                for t in ids:
                    lo, hi = int(self._indptr[t]), int(self._indptr[t + 1])
                    if hi > lo:
                        rows = self._indices[lo:hi]
                        touched.append((buf, rows))
                        np.add.at(buf, rows, self._data[lo:hi])
                        terms.append((rows, self._bound(t) * weight))
            return self._select(terms, a, b if fuzzy else None, k)
        finally:  # zero what was summed: a scatter when it was little, else one memset
            if sum(rows.size for _, rows in touched) > self.n >> 5:
                a.fill(0)
                if fuzzy:
                    b.fill(0)
            else:
                for buf, rows in touched:
                    buf[rows] = 0

    def _buffers(self, both: bool) -> tuple[np.ndarray, np.ndarray]:
        local = self._local
        a = getattr(local, "a", None)
        if a is None:
            a = local.a = np.zeros(self.n, dtype=np.float32)
        b = getattr(local, "b", None)
        if b is None and both:
            b = local.b = np.zeros(self.n, dtype=np.float32)
        return a, b if b is not None else a

    def _bound(self, t: int) -> float:
        """Token t's largest contribution to a document's score (cached)."""
        ub = self._bounds.get(t)
        if ub is None:
            lo, hi = int(self._indptr[t]), int(self._indptr[t + 1])
            ub = self._bounds[t] = float(np.max(self._data[lo:hi])) if hi > lo else 0.0
        return ub

    @staticmethod
    def _select(terms: list[tuple[np.ndarray, float]], a: np.ndarray, b: np.ndarray | None, k: int) -> np.ndarray:
        """`top`'s selection, from the summed buffers (`b`: the typo corrections', or None)."""
        def total(rows: np.ndarray) -> np.ndarray:
            return a[rows] if b is None else a[rows] + np.float32(_TYPO_WEIGHT) * b[rows]

        if not terms:
            return np.zeros(0, np.int64)
        theta = 0.0
        rarest = min(terms, key=lambda t: t[0].size)[0]
        if rarest.size >= k:
            s = total(rarest)
            theta = float(np.partition(s, s.size - k)[s.size - k])
        essential = terms
        if theta > 0:  # the tokens whose bounds add up to less than θ are not essential
            by_bound = sorted(terms, key=lambda t: t[1])
            bound, cut = 0.0, 0
            for _, ub in by_bound:
                bound += ub
                if bound * (1 + 1e-5) >= theta:  # margin: float32 sums round
                    break
                cut += 1
            essential = by_bound[cut:]
        cand = np.concatenate([t[0] for t in essential]) if len(essential) > 1 else essential[0][0]
        s = total(cand)
        keep = s >= theta if theta > 0 else s > 0
        cand = cand[keep]
        if len(essential) > 1:  # a document in several essential postings: once (a sort: fewer than hashing)
            cand.sort()
            cand = cand[np.concatenate(([True], cand[1:] != cand[:-1]))]
        s = total(cand)
        order = np.lexsort((cand, -s))[:k]
        return cand[order].astype(np.int64)


#: Distinct (query, depth) candidate pools a `SearchEngine` keeps (~3 KB each at depth 200).
POOL_CACHE = 1024

#: Distinct category filters whose matching category paths a `SearchEngine` keeps.
CATEGORY_CACHE = 4096

#: Catalogues from this size keep their BM25 index on disk (smaller ones build it in < 1 s).
LEXICAL_CACHE_MIN = 50_000


class SearchEngine:
    """Hybrid search over one catalogue (see the module docstring).

    Parameters: `embedder` defaults to ``get_embedder("wordllama")`` (a spec string is
    accepted too); `cache_dir` is where the FAISS index is cached (default
    ``$ECOM_BENCH_CACHE`` or ``~/.cache/ecom_bench``); `index_kind` is ``"auto"``,
    ``"flat"`` or ``"ivf"``; `use_cache=False` never touches the disk.
    """

    def __init__(
        self,
        catalog: Catalog,
        embedder: Embedder | str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        *,
        index_kind: IndexKind | str = "auto",
        use_cache: bool = True,
        rrf_k: int = RRF_K,
    ) -> None:
        self.catalog = catalog
        if embedder is None or isinstance(embedder, str):
            embedder = get_embedder(embedder or "wordllama")
        self.embedder: Embedder = embedder
        self.cache_dir = cache_dir
        self.index_kind = index_kind
        self.use_cache = use_cache
        self.rrf_k = _check_positive("rrf_k", rrf_k)
        self._vindex: VectorIndex | None = None
        self._lexical: _Lexical | None = None
        self._vlock = threading.Lock()
        self._llock = threading.Lock()
        #: single-query candidate pools by (query, depth), most recent last (see `_pool_of`)
        self._pools: OrderedDict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._plock = threading.Lock()
        #: category filter (levels) -> the codes of the category paths it matches (`_category_codes`)
        self._categories: dict[tuple[str, ...], np.ndarray] = {}
        self._brand_codes: tuple[np.ndarray, list[str]] | None = None

    # -- lazy parts -------------------------------------------------------------
    @property
    def vector_index(self) -> VectorIndex:
        if self._vindex is None:
            with self._vlock:
                if self._vindex is None:
                    self._vindex = load_or_build_index(
                        self.catalog,
                        self.embedder,
                        kind=self.index_kind,
                        cache_dir=self.cache_dir,
                        use_cache=self.use_cache,
                    )
        return self._vindex

    @property
    def lexical(self) -> _Lexical:
        if self._lexical is None:
            with self._llock:
                if self._lexical is None:
                    path = (default_cache_dir(self.cache_dir) / f"{self.catalog.fingerprint}-bm25-v{LEXICAL_VERSION}"
                            if self.use_cache and len(self.catalog) >= LEXICAL_CACHE_MIN else None)
                    self._lexical = _Lexical(self.catalog.search_texts, cache_path=path,
                                             show_progress=len(self.catalog) >= LEXICAL_CACHE_MIN)
        return self._lexical

    def warm(self) -> SearchEngine:
        """Build (or load) the vector index, its pre-scan and BM25 now rather than on first search."""
        self.vector_index.prescan()
        _ = self.lexical
        return self

    # -- search -----------------------------------------------------------------
    @staticmethod
    def _check_query(query: str) -> str:
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        if not query.strip():
            raise ValueError("query must not be empty")
        return query

    def _fuse(self, sem_ids: np.ndarray, lex_ids: np.ndarray, depth: int) -> list[tuple[int, float]]:
        """Reciprocal-rank fusion of the two rankings' first `depth`: (row, score) by score desc,
        ties by row. Vectorised, with the float64 arithmetic of summing 1/(rrf_k + rank) per row
        in the order semantic, then lexical (bincount adds in that order)."""
        s, lx = np.asarray(sem_ids[:depth], np.int64), np.asarray(lex_ids[:depth], np.int64)
        rows = np.concatenate((s, lx))
        if rows.size == 0:
            return []
        contrib = np.concatenate((1.0 / (self.rrf_k + np.arange(1, s.size + 1)),
                                  1.0 / (self.rrf_k + np.arange(1, lx.size + 1))))
        uniq, inv = np.unique(rows, return_inverse=True)
        fused = np.bincount(inv, weights=contrib, minlength=uniq.size)
        order = np.lexsort((uniq, -fused))[:depth]
        return list(zip(uniq[order].tolist(), fused[order].tolist(), strict=True))

    def _semantic(self, qvecs: np.ndarray, depth: int) -> list[np.ndarray]:
        vi = self.vector_index
        out: list[np.ndarray] = [np.zeros(0, np.int64)] * len(qvecs)
        live = [r for r in range(len(qvecs)) if np.any(qvecs[r])]  # a zero query vector ranks nothing
        if live:
            _, ids = vi.search(qvecs[live], depth + _ANN_MARGIN)
            for j, r in enumerate(live):
                row = ids[j]
                out[r] = row[row >= 0][:depth]
        return out

    def _finish(self, pool: list[tuple[int, float]], filters: SearchFilters | None, limit: int,
                offset: int = 0) -> SearchPage:
        """The page of results ``offset + 1 .. offset + limit``: the pool's candidates, or, with
        filters, every catalogue product that passes them, the pool's first (by relevance)."""
        products = self.catalog.products
        if filters is None or filters.is_empty:
            page = pool[offset : offset + limit]
            return SearchPage([SearchHit(products[i], float(s)) for i, s in page], len(pool), len(pool), offset,
                              filtered=False)
        ok = self._match_mask(filters)
        pool_rows = np.fromiter((i for i, _ in pool), np.int64, len(pool))
        keep = ok[pool_rows]
        ranked = [c for c, k in zip(pool, keep.tolist(), strict=True) if k]
        total = int(np.count_nonzero(ok))
        hits = [SearchHit(products[i], float(s)) for i, s in ranked[offset : offset + limit]]
        if len(hits) < limit and offset + len(hits) < total:  # the filter matches beyond the pool
            ok[pool_rows] = False
            start = max(0, offset - len(ranked))
            hits += [SearchHit(products[i], 0.0)
                     for i in np.flatnonzero(ok)[start : start + limit - len(hits)].tolist()]
        return SearchPage(hits, total, len(ranked), offset, filtered=True)

    # -- exhaustive filtering ------------------------------------------------------
    def matching_rows(self, filters: SearchFilters) -> np.ndarray:
        """Every catalogue row that passes `filters` (ascending)."""
        return np.flatnonzero(self._match_mask(filters))

    def matches_category(self, category: str) -> bool:
        """Whether some product's category path matches `category` (as the filter reads it)."""
        return bool(category.strip()) and bool(self._category_codes(_levels(category)).size)

    def similar_categories(self, category: str, n: int = 5) -> list[str]:
        """Up to `n` category names (levels of the catalogue's paths) sharing the most words with
        `category`, singular or plural alike: what to offer when it names no category ("green
        tea bags" -> "Green Tea"). Ties: fewer other words first, then by name."""
        want = set().union(*(_words(level) for level in _levels(category))) if category.strip() else set()
        names = {name for path in self.catalog.category_paths for name in path}
        scored = [(-len(want & _words(_norm(name))), len(_words(_norm(name)) - want), name) for name in names]
        return [name for shared, _, name in sorted(scored) if shared < 0][:n]

    def _match_mask(self, filters: SearchFilters) -> np.ndarray:
        """A fresh bool mask over the catalogue: which products pass `filters`. The category and
        brand tests read per-catalogue codes (a lookup per distinct path or brand, then one
        gather), the others the catalogue's columns: no `Product` is made (but for `attributes`)."""
        check = filters.compile()
        n = len(self.catalog)
        ok = np.ones(n, dtype=bool)
        if check.cat is not None:
            lut = np.zeros(len(self.catalog.category_paths), dtype=bool)
            lut[self._category_codes(check.cat)] = True
            ok = lut[self.catalog.category_codes] if n else ok
        if check.brand is not None:
            codes, names = self._brands
            lut = np.fromiter((b == check.brand for b in names), bool, len(names))
            ok &= lut[codes] if len(names) else False
        for value in check.features:
            ok &= self.catalog.offering_any(value)
        if check.rating is not None:
            ok &= ~(self.catalog.ratings < check.rating)
        if check.ship is not None:
            ok &= ~(self.catalog.ship_days > check.ship)
        if check.lo is not None or check.hi is not None:  # on the rows left: the variant test reads their variants
            rows = np.flatnonzero(ok)
            ok[rows[~check._priced_within(self.catalog, rows)]] = False
        if check.attrs:
            products = self.catalog.products
            for i in np.flatnonzero(ok).tolist():
                ok[i] = check(products[i])
        return ok

    def _category_codes(self, want: tuple[str, ...]) -> np.ndarray:
        """The codes of the catalogue's category paths that `want` matches (kept per `want`)."""
        got = self._categories.get(want)
        if got is None:
            paths = self.catalog.category_paths
            got = np.array([c for c, path in enumerate(paths) if _path_matches(want, path)], dtype=np.int64)
            with self._plock:
                if len(self._categories) >= CATEGORY_CACHE:
                    self._categories.clear()
                self._categories[want] = got
        return got

    @property
    def _brands(self) -> tuple[np.ndarray, list[str]]:
        """Each product's brand as a code, and the codes' folded brand names (built once)."""
        if self._brand_codes is None:
            with self._plock:
                if self._brand_codes is None:
                    enc = pc.dictionary_encode(self.catalog.table.column("brand").combine_chunks())
                    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
                    self._brand_codes = (codes, [_norm(b) for b in enc.dictionary.to_pylist()])
        return self._brand_codes

    # -- search -------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        filters: SearchFilters | None = None,
        depth: int = 200,
        limit: int = 10,
    ) -> list[SearchHit]:
        """Hybrid search: the first `limit` results (`search_page`'s first page)."""
        return self.search_batch([query], filters=filters, depth=depth, limit=limit)[0]

    def search_page(
        self,
        query: str,
        *,
        filters: SearchFilters | None = None,
        depth: int = 200,
        limit: int = 10,
        offset: int = 0,
    ) -> SearchPage:
        """Results ``offset + 1 .. offset + limit`` of the search, with how many there are in all."""
        query = self._check_query(query)
        depth = _check_positive("depth", depth)
        limit = _check_positive("limit", limit)
        if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or offset < 0:
            raise ValueError(f"offset must be a non-negative integer, got {offset!r}")
        pool = self._pool_of(query, depth) if len(self.catalog) else []
        return self._finish(pool, filters, limit, int(offset))

    def search_batch(
        self,
        queries: Sequence[str],
        *,
        filters: SearchFilters | Sequence[SearchFilters | None] | None = None,
        depth: int = 200,
        limit: int = 10,
    ) -> list[list[SearchHit]]:
        """`search` for many queries; one embedding call and one FAISS call for all.

        `filters` is one SearchFilters for every query or one per query. Results equal
        per-query `search` except, rarely, the order of near-tied semantic scores
        (batched FAISS goes through BLAS, whose rounding differs in the last bits).
        """
        if isinstance(queries, str):
            raise TypeError("search_batch takes a sequence of queries, not a str")
        qs = [self._check_query(q) for q in queries]
        depth = _check_positive("depth", depth)
        limit = _check_positive("limit", limit)
        if filters is None or isinstance(filters, SearchFilters):
            per_query: list[SearchFilters | None] = [filters] * len(qs)
        else:
            per_query = list(filters)
            if len(per_query) != len(qs):
                raise ValueError(f"got {len(per_query)} filters for {len(qs)} queries")
        if not qs:
            return []
        if len(self.catalog) == 0:
            return [[] for _ in qs]
        if len(qs) == 1:
            return [self._finish(self._pool_of(qs[0], depth), per_query[0], limit).hits]
        qvecs = self.embedder.encode(qs)
        sem = self._semantic(qvecs, depth)
        lex = self.lexical
        out: list[list[SearchHit]] = []
        for r, q in enumerate(qs):
            pool = self._fuse(sem[r], lex.top(q, depth), depth)
            out.append(self._finish(pool, per_query[r], limit).hits)
        return out

    def clear_query_cache(self) -> None:
        """Forget the kept candidate pools (`_pool_of`): answers do not change, only their cost."""
        with self._plock:
            self._pools.clear()

    def _pool_of(self, query: str, depth: int) -> list[tuple[int, float]]:
        """One query's fused candidate pool, kept for the next POOL_CACHE distinct (query, depth).

        The pool does not depend on the filters (they are applied to it after), and agents
        repeat a search with other filters, or the same words in another episode: a repeat
        costs a lookup instead of the embedding, both retrievals and the fusion. Only pools
        computed for a single query are kept and served (a batch's semantic scores can differ
        in the last bits: see `search_batch`), so an answer never depends on what came before."""
        key = (query, depth)
        with self._plock:
            got = self._pools.get(key)
            if got is not None:
                self._pools.move_to_end(key)
        if got is None:
            sem = self._semantic(self.embedder.encode([query]), depth)[0]
            pool = self._fuse(sem, self.lexical.top(query, depth), depth)
            got = (np.fromiter((r for r, _ in pool), np.int64, len(pool)),
                   np.fromiter((f for _, f in pool), np.float64, len(pool)))
            with self._plock:
                self._pools[key] = got
                while len(self._pools) > POOL_CACHE:
                    self._pools.popitem(last=False)
            return pool
        return list(zip(got[0].tolist(), got[1].tolist(), strict=True))

    # -- vectors ----------------------------------------------------------------
    def _row(self, product_id: str) -> int:
        i = self.catalog.index_of(product_id)
        if i is None:
            raise KeyError(f"unknown product id {product_id!r}")
        return i

    def vector(self, product_id: str) -> np.ndarray:
        """The product's L2-normalised embedding (float32, a copy; zeros if it has no text)."""
        return self.vector_index.vector(self._row(product_id))

    def similarity(self, pid_a: str, pid_b: str) -> float:
        """Cosine similarity of two products' embeddings, in [-1, 1]."""
        a, b = self.vector(pid_a), self.vector(pid_b)
        return float(np.clip(np.dot(a, b), -1.0, 1.0))

    def similarities(self, product_id: str, others: Sequence[str]) -> np.ndarray:
        """Cosine of `product_id` against each of `others` (float32 array)."""
        if not others:
            return np.zeros(0, np.float32)
        return self.similarities_at(product_id, np.fromiter(map(self._row, others), np.int64, len(others)))

    def similarities_at(self, product_id: str, rows: np.ndarray) -> np.ndarray:
        """`similarities` for the products at catalogue `rows` (a caller that has rows, such as
        an evaluation pool, need not look up each id again)."""
        a = self.vector(product_id)
        if not len(rows):
            return np.zeros(0, np.float32)
        m = self.vector_index.vectors(rows)
        return np.clip(m @ a, -1.0, 1.0).astype(np.float32)
