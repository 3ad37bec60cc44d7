"""METEOR's WordNet lookups from many threads at once (a server's workers, a run's concurrent items)
give what they give one at a time: NLTK's reader seeks and reads one stream per data file and
asserts where it landed, so unguarded lookups raised empty ``AssertionError``s."""

import sys
import threading

import pytest

from assay.evaluators.nlp import scores
from assay.evaluators.nlp.tokenize import use_shipped_nltk_data

WORDS = (
    "dog cat run jump house car tree walk talk speak fast slow red blue green happy sad light dark open "
    "close water fire earth wind book read write play game sing song dance dogs running houses qzxv"
).split()


def names(synsets):
    return [[lemma.name() for lemma in synset.lemmas()] for synset in synsets]


@pytest.fixture
def switch_often():
    """Threads handed the interpreter every microsecond, so lookups interleave mid-read."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@pytest.mark.parametrize("kind", [scores._MemoWordNet, scores._ExactWordNet])
def test_lookups_from_eight_threads_at_once_give_the_serial_lookups(kind, switch_often):
    use_shipped_nltk_data()
    serial = kind(scores._english_wordnet())
    expected = {word: names(serial.synsets(word)) for word in WORDS}
    assert expected["dog"] and expected["house"] and expected["qzxv"] == []
    shared = kind(scores._english_wordnet())  # a reader of its own, nothing read or memoised yet
    problems: list[str] = []

    def look_up(start: int) -> None:
        try:
            for word in WORDS[start:] + WORDS[:start]:
                if names(shared.synsets(word)) != expected[word]:
                    problems.append(f"{word}: wrong synsets")
        except Exception as exc:  # noqa: BLE001 - each failure is reported below
            problems.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=look_up, args=(start,)) for start in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == []
