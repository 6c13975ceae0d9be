"""Text embedders for catalogue search.

Every embedder returns float32, L2-normalised rows; an empty or whitespace-only text
(or one whose tokens all vanish) maps to the zero vector, never to NaN. Nothing here
downloads at run time:

* `WordLlamaEmbedder` (the default) uses the 256-d static model shipped *inside* the
  wordllama wheel. A plain `WordLlama.load()` is buggy in wordllama 0.4.0.post1 (it
  looks for the tokenizer in the wrong folder and then tries Hugging Face), so it is
  loaded with ``cache_dir=<package dir>, disable_download=True``.
* `SentenceTransformerEmbedder` wraps a local sentence-transformers model (the
  optional ``st`` extra) with ``local_files_only=True``.

`get_embedder(spec)` turns a spec string into a cached, process-wide instance.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "WordLlamaEmbedder",
    "embedder_slug",
    "get_embedder",
    "normalize_rows",
]


@runtime_checkable
class Embedder(Protocol):
    """What search needs from an embedding model.

    `name` must be stable across processes and versions of the same model: it is part
    of the on-disk index cache key.
    """

    name: str

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """float32 array of shape (len(texts), dim), rows L2-normalised, blanks → 0."""
        ...


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """L2-normalise rows in place-safe fashion; zero / non-finite rows become zeros."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-d array, got shape {x.shape}")
    x = np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    ok = norms[:, 0] > 1e-12
    out = np.zeros_like(x)
    out[ok] = x[ok] / norms[ok]
    return out


def embedder_slug(name: str) -> str:
    """A file-name-safe, stable rendering of an embedder name (for cache keys)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-") or "embedder"
    if len(slug) > 64:
        import hashlib

        slug = slug[:48] + "-" + hashlib.sha256(name.encode()).hexdigest()[:12]
    return slug


def _blank_mask(texts: Sequence[str]) -> np.ndarray:
    return np.fromiter((not (t and t.strip()) for t in texts), dtype=bool, count=len(texts))


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of strings, not a single string")
    out = list(texts)
    for t in out:
        if not isinstance(t, str):
            raise TypeError(f"encode() texts must be str, got {type(t).__name__}")
    return out


#: Distinct words whose token ids an embedder keeps (a synthetic catalogue has a few thousand).
_WORD_CACHE_MAX = 1_000_000
#: Up to this many texts, `WordLlamaEmbedder._token_ids` splits them in Python, not Arrow.
_FEW_TEXTS = 8
#: Texts whose token embeddings are summed together (one token position at a time: a
#: 1 MB accumulator that stays in cache, rather than gathering every token of a group at once).
_SUM_ROWS = 1024


def _cache_words(tok: Any, cache: dict[str, list[int]], words: Iterable[str]) -> None:
    """Tokenise the distinct `words` not in `cache` yet (one batch call) and keep their ids."""
    missing = [w for w in words if w not in cache]
    if missing:
        for w, e in zip(missing, tok.encode_batch(missing, add_special_tokens=False), strict=True):
            cache[w] = e.ids


class WordLlamaEmbedder:
    """The wordllama static embedding (l2_supercat, 256-d) shipped in the wheel.

    The model loads lazily, once per process (shared by every instance), under a lock.
    About 30k catalogue texts/s on 2 cores (loaded); 0.05 ms per single query.
    """

    name = "wordllama-l2_supercat-256"
    _model: Any = None
    _tokenizer: Any = None
    _lock = threading.RLock()

    def __init__(self, dim: int = 256) -> None:
        if dim != 256:
            # The wheel ships only the 256-d weights; truncated dims would need a download.
            raise ValueError(f"WordLlamaEmbedder supports dim=256 only (the shipped weights), got {dim}")
        self._dim = dim
        self._word_ids: dict[str, list[int]] = {}

    @property
    def dim(self) -> int:
        return self._dim

    @classmethod
    def _load(cls) -> Any:
        if cls._model is None:
            with cls._lock:
                if cls._model is None:
                    import wordllama
                    from wordllama import WordLlama

                    pkg_dir = Path(wordllama.__file__).parent
                    cls._model = WordLlama.load(
                        config="l2_supercat", dim=256, cache_dir=pkg_dir, disable_download=True
                    )
        return cls._model

    @classmethod
    def _plain_tokenizer(cls) -> Any:
        """The model's tokenizer without padding (wordllama's pads every batch to its longest text)."""
        if cls._tokenizer is None:
            from tokenizers import Tokenizer

            with cls._lock:
                if cls._tokenizer is None:
                    tok = Tokenizer.from_str(cls._load().tokenizer.to_str())
                    tok.no_padding()
                    tok.no_truncation()
                    cls._tokenizer = tok
        return cls._tokenizer

    def _token_ids(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each text's token ids, exactly as wordllama's tokenizer gives them, as (ids, offsets):
        text j's are ids[offsets[j]:offsets[j+1]]. Its SentencePiece BPE normalises " " to "▁"
        and has no vocabulary piece with "▁" after its first character, so no merge crosses a
        word boundary: a text's ids are its words' ids in order (a text with leading, trailing
        or repeated spaces is tokenised whole). So the texts are split into words by Arrow,
        each distinct word is tokenised once (and cached), and the texts' ids are gathered
        from the words' with numpy: no Python loop over the texts."""
        import pyarrow as pa
        import pyarrow.compute as pc

        tok = self._plain_tokenizer()
        cache = self._word_ids
        if len(cache) > _WORD_CACHE_MAX:  # a fresh dict: other threads keep the one they hold
            cache = self._word_ids = {}
        if len(texts) <= _FEW_TEXTS:
            return self._few_token_ids(texts, tok, cache)
        arr = pa.array(texts, pa.string())
        words = pc.split_pattern(arr, " ")
        enc = pc.dictionary_encode(words.values)
        names = enc.dictionary.to_pylist()
        _cache_words(tok, cache, names)
        per_word = [cache[w] for w in names]
        word_len = np.fromiter(map(len, per_word), np.int64, len(per_word))
        word_ids = np.fromiter((i for ids in per_word for i in ids), np.int64, int(word_len.sum()))
        word_at = np.concatenate(([0], np.cumsum(word_len)))
        codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)
        lens = word_len[codes]  # tokens of each word occurrence
        ends = np.cumsum(lens)
        ids = word_ids[np.repeat(word_at[codes] - (ends - lens), lens) + np.arange(int(ends[-1]) if ends.size else 0)]
        offsets = np.concatenate(([0], ends))[np.asarray(words.offsets, np.int64)]
        whole = np.flatnonzero(np.asarray(pc.or_(pc.or_(pc.match_substring(arr, "  "), pc.starts_with(arr, " ")),
                                                 pc.ends_with(arr, " ")).to_numpy(zero_copy_only=False), bool))
        if whole.size:  # rare: such texts are tokenised whole and spliced in
            parts = np.split(ids, offsets[1:-1])
            for j, e in zip(whole.tolist(), tok.encode_batch([texts[j] for j in whole], add_special_tokens=False),
                            strict=True):
                parts[j] = np.asarray(e.ids, np.int64)
            lengths = np.fromiter(map(len, parts), np.int64, len(parts))
            ids = np.concatenate(parts) if parts else np.zeros(0, np.int64)
            offsets = np.concatenate(([0], np.cumsum(lengths)))
        return ids, offsets

    @staticmethod
    def _few_token_ids(texts: list[str], tok: Any, cache: dict[str, list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """`_token_ids` for a handful of texts (a search query) in plain Python: the same words
        (split on " "), the same cache, the same whole-text rule; Arrow's fixed cost per call
        (~0.3 ms) is most of the time for one short text."""
        parts: list[list[int]] = []
        for text in texts:
            if "  " in text or text.startswith(" ") or text.endswith(" "):
                parts.append(tok.encode(text, add_special_tokens=False).ids)
                continue
            words = text.split(" ")
            _cache_words(tok, cache, dict.fromkeys(words))
            parts.append([i for w in words for i in cache[w]])
        lengths = np.fromiter(map(len, parts), np.int64, len(parts))
        ids = np.fromiter((i for p in parts for i in p), np.int64, int(lengths.sum()))
        return ids, np.concatenate(([0], np.cumsum(lengths)))

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Mean of the token embeddings, L2-normalised: bit for bit what wordllama's
        ``embed(norm=False)`` gives (then normalised), computed on texts grouped by token count
        (no padded positions to multiply by zero) from cached word tokenisations. A group's
        sums are accumulated one token position at a time: the same additions in the same
        order as numpy's sum over the token axis (so the same bits), ~2x faster."""
        texts = _check_texts(texts)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        n = len(texts)
        out = np.zeros((n, self._dim), dtype=np.float32)
        if n == 0:
            return out
        blank = _blank_mask(texts)
        idx = np.flatnonzero(~blank)
        if idx.size == 0:
            return out
        table = self._load().embedding
        vocab_max = table.shape[0] - 1
        chunk = max(batch_size, 1) * 64
        for s in range(0, idx.size, chunk):
            rows = idx[s : s + chunk]
            ids, offsets = self._token_ids([texts[i] for i in rows])
            np.clip(ids, 0, vocab_max, out=ids)
            lengths = np.diff(offsets)
            sums = np.zeros((len(rows), self._dim), dtype=np.float32)
            for length in np.unique(lengths).tolist():
                if length == 0:
                    continue
                same = np.flatnonzero(lengths == length)
                for b in range(0, same.size, _SUM_ROWS):
                    part = same[b : b + _SUM_ROWS]
                    at = offsets[part]
                    # wordllama's avg_pool: the sum over the tokens, in order, then / count
                    acc = table[ids[at]]
                    for j in range(1, length):
                        acc += table[ids[at + j]]
                    sums[part] = acc / np.float32(length)
            out[rows] = normalize_rows(sums)
        return out

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder(name={self.name!r}, dim={self._dim})"


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (optional ``st`` extra); never downloads.

    `model_name_or_path` is a local directory, or a hub id already present in the local
    Hugging Face cache (loaded with ``local_files_only=True``).
    """

    def __init__(self, model_name_or_path: str, device: str = "cpu") -> None:
        if not model_name_or_path or not str(model_name_or_path).strip():
            raise ValueError("SentenceTransformerEmbedder needs a model name or path")
        self.model_name_or_path = str(model_name_or_path)
        self.device = device
        self.name = f"st:{self.model_name_or_path}"
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        from sentence_transformers import SentenceTransformer
                    except ImportError as e:  # pragma: no cover - depends on the env
                        raise ImportError(
                            "SentenceTransformerEmbedder needs the optional 'st' extra: first "
                            "`pip install torch==2.13.0` (the CPU wheel; otherwise pip pulls the "
                            "multi-GB CUDA build), then `pip install 'ecom-bench[st]'`."
                        ) from e
                    path = self.model_name_or_path
                    if path.startswith((".", "/", "~")) and not Path(path).expanduser().exists():
                        # a path, not a hub id: name it (`load_context` loads eagerly, so this
                        # surfaces when the task is built, not inside the first sample)
                        raise ValueError(f"embedder model path does not exist: {path!r}")
                    model = SentenceTransformer(path, device=self.device, local_files_only=True)
                    get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                    dim = get_dim()
                    if dim is None:
                        dim = int(model.encode(["dimension probe"], convert_to_numpy=True).shape[1])
                    self._dim = int(dim)
                    self._model = model
        return self._model

    @property
    def dim(self) -> int:
        self._load()
        assert self._dim is not None
        return self._dim

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        texts = _check_texts(texts)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        model = self._load()
        assert self._dim is not None
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        blank = _blank_mask(texts)
        idx = np.flatnonzero(~blank)
        if idx.size:
            vecs = model.encode(
                [texts[i] for i in idx],
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
            out[idx] = normalize_rows(np.asarray(vecs, dtype=np.float32))
        return out

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model_name_or_path!r}, device={self.device!r})"


_EMBEDDERS: dict[str, Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(spec: str = "wordllama") -> Embedder:
    """Embedder for a spec string, cached per spec for the process.

    * ``"wordllama"``: the default static model shipped in the wordllama wheel.
    * ``"st:<name-or-path>"``: a local sentence-transformers model (``st`` extra).
    """
    if not isinstance(spec, str):
        raise TypeError(f"embedder spec must be a str, got {type(spec).__name__}")
    key = spec.strip()
    if key.lower() == "wordllama":
        key = "wordllama"
    elif key[:3].lower() == "st:":
        key = "st:" + key[3:].strip()
    with _EMBEDDERS_LOCK:
        emb = _EMBEDDERS.get(key)
        if emb is not None:
            return emb
        if key == "wordllama":
            emb = WordLlamaEmbedder()
        elif key.startswith("st:") and len(key) > 3:
            emb = SentenceTransformerEmbedder(key[3:])
        else:
            raise ValueError(
                f"unknown embedder spec {spec!r}: expected 'wordllama' or 'st:<model-name-or-path>'"
            )
        _EMBEDDERS[key] = emb
        return emb
