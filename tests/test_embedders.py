"""Embedders: offline loading, normalisation, blanks, determinism, spec parsing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ecom_bench.catalog.embedders import (
    Embedder,
    SentenceTransformerEmbedder,
    WordLlamaEmbedder,
    embedder_slug,
    get_embedder,
    normalize_rows,
)


@pytest.fixture(scope="module")
def wl() -> WordLlamaEmbedder:
    emb = get_embedder("wordllama")
    assert isinstance(emb, WordLlamaEmbedder)
    return emb


def test_wordllama_loads_offline_in_a_fresh_process(tmp_path):
    """A fresh interpreter with the hub unreachable must still load and embed."""
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_ENDPOINT="http://127.0.0.1:9",  # nothing listens: any download attempt fails
        HF_HOME=str(tmp_path / "hf"),
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
    )
    code = textwrap.dedent(
        """
        import numpy as np
        from ecom_bench.catalog.embedders import get_embedder
        e = get_embedder()
        v = e.encode(["VoltEdge PowerPort Wall Charger, 65W USB-C"])
        assert v.shape == (1, e.dim) == (1, 256), v.shape
        assert abs(float(np.linalg.norm(v[0])) - 1) < 1e-5
        print("ok", e.name)
        """
    )
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok wordllama")
    assert not (tmp_path / "hf").exists() or not any((tmp_path / "hf").rglob("*.safetensors"))


def test_protocol_and_shape(wl):
    assert isinstance(wl, Embedder)
    assert wl.dim == 256
    v = wl.encode(["usb-c charger 65w", "air fryer with activated carbon filter"])
    assert v.shape == (2, 256) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_blank_texts_are_zero_vectors_not_nan(wl):
    v = wl.encode(["", "   ", "\n\t", "tank top"])
    assert not np.isnan(v).any()
    assert np.all(v[:3] == 0)
    assert abs(float(np.linalg.norm(v[3])) - 1) < 1e-5
    assert wl.encode([]).shape == (0, 256)
    odd = wl.encode(["日本語 😀", "x" * 5000, "!!!"])
    assert np.isfinite(odd).all()
    norms = np.linalg.norm(odd, axis=1)
    assert np.all((np.abs(norms - 1) < 1e-5) | (norms == 0))


def test_deterministic_and_batch_independent(wl):
    texts = [f"SonicWave Keypad {i} wireless keyboard" for i in range(50)]
    a = wl.encode(texts, batch_size=7)
    b = wl.encode(texts, batch_size=256)
    c = wl.encode(texts[10:11])
    np.testing.assert_allclose(a, b, atol=1e-6)
    np.testing.assert_allclose(a[10:11], c, atol=1e-6)
    # semantic sanity: a charger query is nearer a charger than a fryer
    q, charger, fryer = wl.encode(["phone charger", "65W USB-C wall charger", "5 quart air fryer"])
    assert q @ charger > q @ fryer


def test_encode_rejects_bad_input(wl):
    with pytest.raises(TypeError):
        wl.encode("a single string")
    with pytest.raises(TypeError):
        wl.encode(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="batch_size"):
        wl.encode(["x"], batch_size=0)


def test_get_embedder_specs_and_cache():
    assert get_embedder("wordllama") is get_embedder("wordllama")
    assert get_embedder() is get_embedder(" WordLlama ")
    st = get_embedder("st:/models/does-not-exist")
    assert isinstance(st, SentenceTransformerEmbedder)
    assert st.name == "st:/models/does-not-exist"
    assert get_embedder("st:/models/does-not-exist") is st
    for bad in ("bogus", "st:", "", "openai:text-embedding-3"):
        with pytest.raises(ValueError, match=repr(bad)):
            get_embedder(bad)


def test_sentence_transformer_missing_dependency_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import fail
    st = SentenceTransformerEmbedder("/nonexistent/model")
    with pytest.raises(ImportError) as ei:
        st.encode(["x"])
    msg = str(ei.value)
    assert "'st' extra" in msg and "torch==2.13.0" in msg


def test_normalize_rows_and_slug():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [np.nan, 1.0]], dtype=np.float32)
    y = normalize_rows(x)
    np.testing.assert_allclose(y[0], [0.6, 0.8], atol=1e-6)
    assert np.all(y[1] == 0) and np.isfinite(y).all()
    assert embedder_slug("st:/a b/c") == "st_a_b_c"
    long = embedder_slug("st:" + "x" * 200)
    assert len(long) <= 64 and long != embedder_slug("st:" + "x" * 199)
