"""The NLP metrics, numerically identical to azure-ai-evaluation 1.18 (reference §2).

BLEU and GLEU are NLTK's sentence-level algorithms rewritten over integer counts, which is
several times faster than NLTK's ``Fraction`` arithmetic and gives the same floats. METEOR calls
NLTK's own implementation with a memoised stemmer and WordNet. ROUGE is Google's rouge_score.
"""

from __future__ import annotations

import math
import re
import string
import threading
import warnings
from collections import Counter
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from assay.evaluators.nlp.tokenize import use_shipped_nltk_data

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _squad_tokens(text: str) -> list[str]:
    lowered = text.lower().translate(_PUNCTUATION)
    return _ARTICLES.sub(" ", lowered).split()


def f1(response: str, ground_truth: str) -> float:
    """SQuAD F1: lowercase, drop punctuation and articles, multiset token overlap."""
    predicted, reference = _squad_tokens(response), _squad_tokens(ground_truth)
    common = sum((Counter(predicted) & Counter(reference)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(reference)
    return 2 * precision * recall / (precision + recall)


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu(reference: Sequence[str], hypothesis: Sequence[str]) -> float:
    """NLTK ``sentence_bleu`` with smoothing method4 (k=5), weights ¼ each, no auto-reweigh."""
    hyp_len, ref_len = len(hypothesis), len(reference)
    numerators, denominators = [], []
    for n in range(1, 5):
        hyp_counts = _ngrams(hypothesis, n)
        ref_counts = _ngrams(reference, n)
        numerators.append(sum(min(count, ref_counts[gram]) for gram, count in hyp_counts.items()))
        denominators.append(max(1, sum(hyp_counts.values())))
    if numerators[0] == 0:
        return 0.0
    if hyp_len > ref_len:
        brevity = 1.0
    elif hyp_len == 0:
        brevity = 0.0
    else:
        brevity = math.exp(1 - ref_len / hyp_len)
    precisions: list[float] = []
    smoothing_step = 1
    for numerator, denominator in zip(numerators, denominators, strict=True):
        if numerator == 0 and hyp_len > 1:
            precisions.append(1 / (2**smoothing_step * 5 / math.log(hyp_len)) / denominator)
            smoothing_step += 1
        else:
            precisions.append(numerator / denominator)
    logs = (0.25 * math.log(p) for p in precisions if p > 0)
    return brevity * math.exp(math.fsum(logs))


def _everygrams(tokens: Sequence[str]) -> Counter[tuple[str, ...]]:
    counts: Counter[tuple[str, ...]] = Counter()
    for n in range(1, 5):
        counts.update(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return counts


def gleu(reference: Sequence[str], hypothesis: Sequence[str]) -> float:
    """NLTK ``sentence_gleu`` (Google BLEU, n=1..4)."""
    hyp_counts, ref_counts = _everygrams(hypothesis), _everygrams(reference)
    total = max(sum(hyp_counts.values()), sum(ref_counts.values()))
    if total == 0:
        return 0.0
    return sum((hyp_counts & ref_counts).values()) / total


class _Lemma:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Synonyms:
    """Stands in for a synset: NLTK's METEOR only asks a synset for its lemmas' names."""

    __slots__ = ("_lemmas",)

    def __init__(self, names: list[str]) -> None:
        self._lemmas = [_Lemma(name) for name in names]

    def lemmas(self) -> list[_Lemma]:
        return self._lemmas


_WORDNET_READS = threading.Lock()
"""Held while NLTK's WordNet reader reads, which one thread at a time may do: it seeks and reads a
data file's one stream (asserting where it landed) and opens the zip the corpus ships in through one
shared file object. METEOR runs in a server's worker threads and in a run's concurrent items; its
lookups are memoised, so only a word's first lookup waits here."""


class _MemoWordNet:
    """WordNet lookups for METEOR, memoised per word (the loaded reader is reused too)."""

    def __init__(self, wordnet: Any) -> None:
        self._wordnet = wordnet
        self.synsets = lru_cache(maxsize=65536)(self._synsets)

    def _synsets(self, word: str) -> list[_Synonyms]:
        with _WORDNET_READS:
            names = [lemma.name() for synset in self._wordnet.synsets(word) for lemma in synset.lemmas()]
        return [_Synonyms(names)] if names else []


class _MemoStemmer:
    def __init__(self, stemmer: Any) -> None:
        self.stem = lru_cache(maxsize=65536)(stemmer.stem)


def _english_wordnet() -> Any:
    """NLTK's WordNet reader, loaded in a second instead of four. On loading, NLTK maps the corpus
    onto itself through two passes over ``index.sense``, a table only its multilingual lookups read:
    skipped. And it reads the lemma index a line at a time through a seekable decoder: read whole
    here, into the same map. English synsets are unchanged (the METEOR golden values check it)."""
    import nltk
    from nltk.corpus.reader.wordnet import ADJ, ADJ_SAT, WordNetCorpusReader

    class EnglishWordNet(WordNetCorpusReader):  # type: ignore[misc]
        def map_wn(self, version: str = "wordnet") -> None:
            return None

        def _load_lemma_pos_offset_map(self) -> None:
            for suffix in self._FILEMAP.values():
                with self.open(f"index.{suffix}") as file:
                    lines = file.read().splitlines()
                for line in lines:
                    if line.startswith(" ") or not line.strip():
                        continue  # the license header
                    # lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
                    fields = line.split()
                    lemma, pos, synsets, pointers = fields[0], fields[1], int(fields[2]), int(fields[3])
                    start = 6 + pointers
                    offsets = [int(offset) for offset in fields[start : start + synsets]]
                    self._lemma_pos_offset_map[lemma][pos] = offsets
                    if pos == ADJ:
                        satellites = [offset for offset in offsets if offset in self.satellite_offsets]
                        self._lemma_pos_offset_map[lemma][ADJ_SAT] = satellites

    with warnings.catch_warnings(), _WORDNET_READS:  # loading reads the zip, as lookups may at the time
        warnings.simplefilter("ignore")  # "the multilingual functions are not available": not wanted here
        return EnglishWordNet(nltk.data.find("corpora/wordnet.zip/wordnet/"), None)


@cache
def _meteor_parts() -> tuple[Any, _MemoStemmer, _MemoWordNet]:
    use_shipped_nltk_data()
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import single_meteor_score

    return single_meteor_score, _MemoStemmer(PorterStemmer()), _MemoWordNet(_english_wordnet())


def meteor(
    reference: Sequence[str], hypothesis: Sequence[str], alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5
) -> float:
    """NLTK METEOR (alpha 0.9, beta 3, gamma 0.5 unless told) on pre-tokenised text."""
    single_meteor_score, stemmer, wordnet = _meteor_parts()
    return float(
        single_meteor_score(
            list(reference), list(hypothesis), stemmer=stemmer, wordnet=wordnet, alpha=alpha, beta=beta, gamma=gamma
        )
    )


class _ExactWordNet:
    """WordNet looked up as JavaScript's ``natural`` does: the synsets holding the word itself as a
    lemma, without NLTK's reduction of inflected forms (``dogs`` finds nothing)."""

    def __init__(self, wordnet: Any) -> None:
        self.wordnet = wordnet

    @lru_cache(maxsize=65536)  # noqa: B019 - one reader per process, kept for the process's life
    def synsets(self, word: str) -> list[Any]:
        with _WORDNET_READS:
            found = self.wordnet.synsets(word)
            return [s for s in found if any(lemma.name().lower() == word for lemma in s.lemmas())]


@cache
def _natural_meteor_parts() -> tuple[Any, _MemoStemmer, _ExactWordNet]:
    use_shipped_nltk_data()
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import single_meteor_score

    stemmer = _MemoStemmer(PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM))
    return single_meteor_score, stemmer, _ExactWordNet(_english_wordnet())


def natural_meteor(
    reference: Sequence[str], hypothesis: Sequence[str], alpha: float, beta: float, gamma: float
) -> float:
    """METEOR as promptfoo computes it (JavaScript's ``natural``): NLTK's alignment and score, with
    Porter's original stemmer and WordNet looked up by the exact word."""
    single_meteor_score, stemmer, wordnet = _natural_meteor_parts()
    return float(
        single_meteor_score(
            list(reference), list(hypothesis), stemmer=stemmer, wordnet=wordnet, alpha=alpha, beta=beta, gamma=gamma
        )
    )


ROUGE_TYPES = ("rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL")
_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


def _rouge_tokens(text: str) -> list[str]:
    """rouge_score's default tokenizer without stemming: lowercase, runs of [a-z0-9]."""
    return _NON_ALPHANUMERIC.sub(" ", text.lower()).split()


def _lcs_length(a: list[str], b: list[str]) -> int:
    """Longest common subsequence length, bit-parallel (Hyyrö 2004): one big-int step per token of b."""
    positions: dict[str, int] = {}
    for index, token in enumerate(a):
        positions[token] = positions.get(token, 0) | (1 << index)
    width = (1 << len(a)) - 1
    row = width
    for token in b:
        matches = row & positions.get(token, 0)
        row = ((row + matches) | (row - matches)) & width
    return len(a) - row.bit_count()


def _fmeasure(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def rouge(rouge_type: str, response: str, ground_truth: str) -> tuple[float, float, float]:
    """(precision, recall, f-measure) as Google's rouge_score 0.1.2 computes them, unstemmed.

    Written out (the same arithmetic) because rouge_score builds a full LCS table of lists per
    call; a property test checks every type against the library.
    """
    target, prediction = _rouge_tokens(ground_truth), _rouge_tokens(response)
    if rouge_type == "rougeL":
        if not target or not prediction:
            return 0.0, 0.0, 0.0
        common = _lcs_length(target, prediction)
        precision, recall = common / len(prediction), common / len(target)
        return precision, recall, _fmeasure(precision, recall)
    n = int(rouge_type[5:])
    target_grams, prediction_grams = _ngrams(target, n), _ngrams(prediction, n)
    common = sum(min(count, prediction_grams[gram]) for gram, count in target_grams.items())
    precision = common / max(sum(prediction_grams.values()), 1)
    recall = common / max(sum(target_grams.values()), 1)
    return precision, recall, _fmeasure(precision, recall)
