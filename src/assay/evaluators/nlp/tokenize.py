"""Tokenise exactly as azure-ai-evaluation does, with NLTK data shipped in this package.

ASCII text goes through NLTK's ``word_tokenize`` (Punkt sentences, then ``NLTKWordTokenizer``);
any other text through ``NISTTokenizer().international_tokenize``.

NLTK 3.10 runs every regular expression through ``nltk.redos``: the third-party ``regex``
engine plus a wall-clock timeout on each call, which makes its tokenizers several times slower
than the patterns themselves. Our patterns are NLTK's own fixed rules, not user input, so we
replay the same rule lists in the same order with the wrapped patterns compiled by ``re``
(falling back to the unwrapped ``regex`` object where ``re`` cannot compile one). A property
test checks the tokens against NLTK's own functions.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import unescape

NLTK_DATA = Path(__file__).resolve().parent / "nltk_data"
_FLAG_BITS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.UNICODE | re.VERBOSE

Rule = tuple[Any, str]


@cache
def use_shipped_nltk_data() -> None:
    """Put the shipped data first on NLTK's search path (before any NLTK module needs it)."""
    import nltk

    if str(NLTK_DATA) not in nltk.data.path:
        nltk.data.path.insert(0, str(NLTK_DATA))


def _plain(pattern: Any) -> Any:
    """The same pattern without NLTK's per-call timeout wrapper."""
    inner = getattr(pattern, "_rx", pattern)
    try:
        with warnings.catch_warnings():
            # NLTK joins Unicode character sets in hash order, so a class can hold "[:" or "--" that
            # ``re`` flags as a possible future set operation. It is literal today, as in ``regex``.
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile(inner.pattern, inner.flags & _FLAG_BITS)
    except re.error:
        return inner


def _rules(rules: Sequence[Rule]) -> list[Rule]:
    return [(_plain(pattern), substitution) for pattern, substitution in rules]


class _WordTokenizer:
    """``NLTKWordTokenizer.tokenize`` (default options) on plain patterns."""

    def __init__(self) -> None:
        from nltk.tokenize import NLTKWordTokenizer as Base

        contractions = [(_plain(p), r" \1 \2 ") for p in [*Base.CONTRACTIONS2, *Base.CONTRACTIONS3]]
        self.before = _rules([*Base.STARTING_QUOTES, *Base.PUNCTUATION, Base.PARENS_BRACKETS, Base.DOUBLE_DASHES])
        self.after = _rules(Base.ENDING_QUOTES) + contractions

    def tokenize(self, text: str) -> list[str]:
        for pattern, substitution in self.before:
            text = pattern.sub(substitution, text)
        text = f" {text} "
        for pattern, substitution in self.after:
            text = pattern.sub(substitution, text)
        return text.split()


class _NistTokenizer:
    """``NISTTokenizer.international_tokenize`` (default options) on plain patterns."""

    def __init__(self) -> None:
        from nltk.tokenize.nist import NISTTokenizer as Base

        self.strip = _rules([Base.STRIP_SKIP, Base.STRIP_EOL_HYPHEN])
        self.rules = _rules(Base.INTERNATIONAL_REGEXES)

    def tokenize(self, text: str) -> list[str]:
        for pattern, substitution in self.strip:
            text = pattern.sub(substitution, text)
        text = unescape(text)
        for pattern, substitution in self.rules:
            text = pattern.sub(substitution, text)
        return text.split()


@cache
def _tokenizers() -> tuple[Callable[[str], list[str]], _WordTokenizer, _NistTokenizer]:
    use_shipped_nltk_data()
    from nltk.tokenize.punkt import PunktTokenizer

    return PunktTokenizer("english").tokenize, _WordTokenizer(), _NistTokenizer()


@lru_cache(maxsize=4096)
def _tokenize_cached(text: str) -> tuple[str, ...]:
    sentences, words, nist = _tokenizers()
    if not text.isascii():
        return tuple(nist.tokenize(text))
    return tuple(token for sentence in sentences(text) for token in words.tokenize(sentence))


def nltk_tokenize(text: str) -> tuple[str, ...]:
    """The peer's ``nltk_tokenize``; recent strings are cached so BLEU, GLEU and METEOR share work."""
    return _tokenize_cached(text)
