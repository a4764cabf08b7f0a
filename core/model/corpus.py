"""The training corpus: documents labelled by domain, a held-out split by document, byte streams.

Two sources, chosen with build_corpus(source):
  "stdlib"     the shipped corpus, assets/corpus (read with its sha256 checked, never the running
               interpreter's files): Python standard-library source (code), the interpreter's
               pydoc topics (English technical prose), generated records and arithmetic; made
               once by `python -m core.model.corpus_extract`
  "templates"  the generated corpus of core/model/corpus_templates.py (four templated
               domains; kept for quick experiments and as the easy contrast)
The records (Document, Corpus, DOMAINS), the split and the streams are
core/model/corpus_documents.py's; the unigram / bigram / zlib baselines are
core/model/corpus_baselines.py's (both exported here too).
"""

from __future__ import annotations

from core.errors import check_choice
from core.model.corpus_baselines import bigram_bpb, unigram_bpb, zlib_bpb
from core.model.corpus_documents import DOMAINS, Corpus, Document, corpus_from
from core.model.corpus_shipped import read_documents
from core.model.corpus_templates import templated_corpus

__all__ = ["DOMAINS", "SOURCES", "Corpus", "Document", "bigram_bpb", "build_corpus",
           "unigram_bpb", "zlib_bpb"]

SOURCES = ("stdlib", "templates")
# NOTE: the corpus the shipped assets/model was trained on; "stdlib" once it is retrained.
DEFAULT_SOURCE = "stdlib"


def build_corpus(source: str = DEFAULT_SOURCE) -> Corpus:
    """The corpus of a source (see the module docstring); the same bytes on every machine."""
    check_choice("source", source, SOURCES)
    if source == "templates":
        return templated_corpus()
    return corpus_from(list(read_documents()))
