"""Tokenise exactly as azure-ai-evaluation does, with NLTK data shipped in this package.

ASCII text goes through NLTK's ``word_tokenize`` (Punkt sentences, then the Treebank-style word
tokenizer); any other text through ``NISTTokenizer().international_tokenize``. The tokenizers are
built once per process, and the data path is ours, so nothing is ever downloaded.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path
from typing import Any

NLTK_DATA = Path(__file__).resolve().parent / "nltk_data"


@cache
def use_shipped_nltk_data() -> None:
    """Put the shipped data first on NLTK's search path (before any NLTK module needs it)."""
    import nltk

    if str(NLTK_DATA) not in nltk.data.path:
        nltk.data.path.insert(0, str(NLTK_DATA))


@cache
def _tokenizers() -> tuple[Any, Any, Any]:
    use_shipped_nltk_data()
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.nist import NISTTokenizer
    from nltk.tokenize.punkt import PunktTokenizer

    return PunktTokenizer("english"), NLTKWordTokenizer(), NISTTokenizer()


@lru_cache(maxsize=4096)
def _tokenize_cached(text: str) -> tuple[str, ...]:
    punkt, words, nist = _tokenizers()
    if not text.isascii():
        return tuple(nist.international_tokenize(text))
    return tuple(token for sentence in punkt.tokenize(text) for token in words.tokenize(sentence))


def nltk_tokenize(text: str) -> tuple[str, ...]:
    """The peer's ``nltk_tokenize``; recent strings are cached so BLEU, GLEU and METEOR share work."""
    return _tokenize_cached(text)
