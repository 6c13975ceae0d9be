"""The real sentence-transformers path, on a small local model built in the test.

The model is the wordllama static embedding re-packaged as a sentence-transformers
`StaticEmbedding` and saved to a temporary folder, so the test exercises the real
loader (`SentenceTransformer(path, local_files_only=True)`) with no download. CI
installs the `st` extra (torch CPU + sentence-transformers) so this runs there; a
bare `.[dev]` install skips it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

st = pytest.importorskip("sentence_transformers")


@pytest.fixture(scope="module")
def local_model(tmp_path_factory) -> Path:
    import wordllama
    from safetensors.numpy import load_file
    from sentence_transformers import SentenceTransformer
    try:
        from sentence_transformers.sentence_transformer.modules import Normalize, StaticEmbedding
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Normalize, StaticEmbedding
    from tokenizers import Tokenizer

    pkg = Path(wordllama.__file__).parent
    weights = load_file(pkg / "weights" / "l2_supercat_256.safetensors")["embedding.weight"].astype("float32")
    tokenizer = Tokenizer.from_file(str(pkg / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    model = SentenceTransformer(modules=[StaticEmbedding(tokenizer, embedding_weights=weights), Normalize()],
                                device="cpu")
    out = tmp_path_factory.mktemp("st-model")
    model.save(str(out))
    return out


def test_local_st_model_matches_wordllama(local_model):
    from ecom_bench.catalog.embedders import get_embedder

    texts = ["VoltEdge PowerPort Wall Charger, 65W", "braided usb c cable 6ft", "", "Tank Top XS"]
    st_vecs = get_embedder(f"st:{local_model}").encode(texts)
    wl_vecs = get_embedder("wordllama").encode(texts)
    assert st_vecs.shape == (4, 256) and st_vecs.dtype == np.float32
    assert not np.isnan(st_vecs).any() and np.allclose(st_vecs[2], 0)
    cos = (st_vecs * wl_vecs).sum(axis=1)
    assert np.allclose(cos[[0, 1, 3]], 1.0, atol=1e-4)


def test_search_and_episodes_run_on_the_st_embedder(local_model, tmp_path):
    from ecom_bench.agents import get_policy
    from ecom_bench.envs.context import CatalogSpec, load_context
    from ecom_bench.episode import new_episode
    from ecom_bench.runner import run_policy

    ctx = load_context(CatalogSpec(size=500), embedder=f"st:{local_model}")
    top = ctx.catalog.products[7]
    hits = ctx.search_engine.search(top.title.split(",")[0], limit=3)
    assert top.id in [h.product.id for h in hits]
    run = run_policy(new_episode("cart", 4, context=ctx), get_policy("cart", "oracle"))
    assert run.result.reward.success


def test_missing_local_model_is_a_clear_error(tmp_path):
    from ecom_bench.catalog.embedders import SentenceTransformerEmbedder

    with pytest.raises(Exception, match="no-such-model"):
        SentenceTransformerEmbedder(str(tmp_path / "no-such-model")).encode(["x"])
