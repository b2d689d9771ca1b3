"""Gold sets of the mapping-quality benchmark (:mod:`benchmarks.bench_mapping_fidelity`),
each built by code from real trees and real data — never hand-compiled to pass.

An :class:`Item` is one answer with what a careful reader expects: the nodes it may map to
(``gold``; several where a name is shared) or an abstention (``abstain``). Sets:

* :func:`template_items` — every name of every node (or a seeded sample) in realistic answer
  templates, grouped in families (module constants :data:`SINGULAR`, :data:`PLURAL`);
* :func:`table9_items` — Table 9 of Snæbjarnarson et al. 2025 [1] rows (``benchmarks/data/snaebjarnarson2025_table9.tsv``):
  the paper's mapped node is the gold;
* :func:`vlm4bio_items` — VLM4Bio multiple-choice answers (shared data): the option the
  model chose gives the gold species for the free text after the letter;
* :func:`refusal_items`, :func:`hedge_items` — refusal-cue and hedge templates crossed with
  node names, task words and organism words (:data:`REFUSALS`, :data:`HEDGES`);
* :func:`real_refusal_items` — real model outputs from the shared VLM4Bio and OVEN files,
  labelled by hand under a written rule (``benchmarks/data/real_refusals_and_hedges.tsv``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

__all__ = ["Item", "SINGULAR", "PLURAL", "REFUSALS", "HEDGES", "TASK_WORDS", "ORGANISM_WORDS", "template_items",
           "table9_rows", "table9_items", "vlm4bio_items", "refusal_items", "hedge_items", "real_refusal_items",
           "label_set_tie_items", "DATA"]

DATA = Path(__file__).resolve().parent / "data"

# template families: {n} the name, {a} its indefinite article, {N} the name upper-cased, {p} its plural
SINGULAR = {
    "bare": "{n}",
    "article": "{a} {n}",
    "sentence": "This is {a} {n}.",
    "hedge": "I think it's {a} {n}.",
    "looks_like": "It looks like {a} {n}",
    "upper_case": "{N}",
    "answer_prefix": "The answer is: {n}",
    "hedge_with_refusal_cue": "Probably {a} {n}, but I'm not sure.",
}
PLURAL = {
    "plural_bare": "{p}",
    "plural_sentence": "There are two {p} in the picture.",
    "plural_these": "These are {p}.",
    "plural_several": "Several {p}",
}
# What a model is asked for, and what it is looking at (refusals are crossed with both)
TASK_WORDS = ["species", "breed", "genus", "family", "type", "kind", "name", "scientific name", "common name",
              "variety", "exact species", "model"]
ORGANISM_WORDS = ["animal", "bird", "fish", "plant", "insect", "butterfly", "dog", "flower", "tree", "mushroom",
                  "snake", "object", "creature", "organism"]
REFUSALS = [
    "I'm sorry, but I can't determine the {task} from this image.",
    "Cannot be determined from the image.",
    "The image does not provide enough detail to identify the {organism}.",
    "I am unable to identify the {task} of the {organism} in this picture.",
    "It is not possible to determine the {task} of this {organism} from the photo.",
    "Sorry, I cannot tell which {organism} this is.",
    "I don't know what {organism} this is.",
    "The {task} is unknown.",
    "Unknown {task}.",
    "I'm not sure.",
    "I have no idea.",
    "N/A",
    "Unknown",
    "None",
    "",
    "The {organism} is too blurry to identify.",
    "There is not enough information in the image to determine the {task}.",
    "I cannot identify the {task} with certainty.",
    "Unfortunately, I can't tell the {task} of this {organism}.",
    "It is difficult to say what {task} of {organism} this is.",
]
HEDGES = [
    "It might be {a} {n}, I don't know for sure.",
    "I'm not sure, but it looks like {a} {n}.",
    "Possibly {a} {n}, but I can't be certain.",
    "It could be {a} {n}; the image is not clear enough to be sure.",
    "I think it is {a} {n}, although I'm not completely sure.",
    "Probably {a} {n}, but I'm not sure.",
    "I'm not 100% sure, but this appears to be {a} {n}.",
    "Hard to tell, but I'd guess {n}.",
    "I cannot be certain, but it resembles {a} {n}.",
    "The image is blurry; my best guess is {a} {n}.",
    "Sorry, I can't be sure, but it may be {a} {n}.",
    "It is difficult to identify the {task}, but it seems to be {a} {n}.",
]
# Words of the refusal and hedge templates themselves: a node name holding one of them ("Unknown
# Soldier", "Sure-footed …") would make a generated item mean something else, so such names
# are left out of the refusal and hedge sets (the rule is about the templates, not the mapper).
_CUE_WORDS = frozenset("""sorry sure certain certainty unknown idea determine determined identify tell say guess
blurry clear difficult hard possibly probably might maybe not no none nothing unable cannot can't cant don't
dont know unfortunately enough information detail n/a""".split())
_NAME_KINDS_WITHOUT_PLURAL = ("scientific", "infrageneric", "synonym", "qid")


@dataclass
class Item:
    """One gold answer: ``gold`` node ids (empty when an abstention is expected)."""

    set: str  # gold set
    family: str  # template family / subset
    text: str  # the model output as scored
    gold: frozenset = frozenset()
    abstain: bool = False
    question: str | None = None
    shared: bool = False  # the name is shared by several nodes (any of them counts)
    source: str = ""  # where a real item came from (file:line) or the name it was built from
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------------- templates
def _article(engine, name: str) -> str:
    return engine.a(name).split(" ", 1)[0].lower()


def _plural(engine, name: str, kind: str | None) -> str | None:
    """An English plural of ``name`` (``inflect``, independent of taxoforge's base forms), or
    None for names without one: scientific names and identifiers, proper names (capitalised
    names that are not vernacular names), names with digits, names already plural."""
    if kind in _NAME_KINDS_WITHOUT_PLURAL or not name[:1].isalpha() or any(c.isdigit() for c in name):
        return None
    if kind != "vernacular" and re.match(r"[A-Z]", name):
        return None
    if engine.singular_noun(name) is not False:  # already plural
        return None
    return engine.plural_noun(name)


def tree_names(tables, sample: int | None, seed: int) -> list[tuple[str, str, str]]:
    """``(node_id, name, kind)`` of every name of every node (identifiers such as synset ids
    are not names), display labels included (kind ``label`` unless the names table gives the
    same name another kind); a seeded sample of ``sample`` rows when given."""
    tax = tables.taxonomy()
    names = tables.names
    if "kind" in names.columns:
        names = names.filter(pl.col("kind").is_null() | (pl.col("kind") != "synset"))
    else:
        names = names.with_columns(pl.lit(None, pl.String).alias("kind"))
    names = names.select("node_id", "name", pl.col("kind").fill_null("name"))
    labels = pl.DataFrame({"node_id": tax.ids.tolist(), "name": tax._labels, "kind": ["label"] * len(tax)},
                          schema={"node_id": pl.String, "name": pl.String, "kind": pl.String})
    rows = (pl.concat([names, labels]).drop_nulls(["node_id", "name"]).filter(pl.col("name").str.strip_chars() != "")
            .with_columns((pl.col("kind") == "label").alias("_lab")).sort("node_id", "name", "_lab", "kind")
            .unique(["node_id", "name"], keep="first", maintain_order=True).select("node_id", "name", "kind").rows())
    if sample is not None and sample < len(rows):
        rng = np.random.default_rng(seed)
        rows = [rows[i] for i in sorted(rng.choice(len(rows), sample, replace=False))]
    return rows


def label_set_tie_items(tables, index) -> list[Item]:
    """Names of the linked classes of a tree (``tables.links``: ImageNet-1k's 1,000 classes)
    that other nodes of the tree also carry ("monitor", "chest", "plate", "scope"): each such
    name, bare, as the answer for its class — the gold is the class itself, and only it. Family
    ``one class``: the other nodes carrying the name are no class (the label set can decide);
    ``several classes``: other classes carry it too (no label set can: "crane" the bird and
    the machine)."""
    linked = tables.links.filter(pl.col("status") == "linked") if tables.links.height else tables.links
    classes = set(linked["node_id"].drop_nulls().to_list()) if linked.height else set()
    if not classes:
        return []
    tax = index.taxonomy
    names = (tables.names.filter(pl.col("node_id").is_in(sorted(classes)) & (pl.col("kind") != "synset"))
             .select("node_id", "name").unique().sort("node_id", "name"))
    items = []
    for nid, name in names.iter_rows():
        nodes = index.nodes_named(name)
        if len(nodes) < 2:
            continue
        ids = {str(tax.ids[v]) for v in nodes.tolist()}
        family = "several classes" if len(ids & classes) > 1 else "one class"
        items.append(Item("label_set_ties", family, name, frozenset({nid}), source=name))
    return items


def template_items(tables, index, sample: int | None = None, seed: int = 0) -> list[Item]:
    """Every name (or a seeded sample) in the :data:`SINGULAR` templates and, where it has an
    English plural, the :data:`PLURAL` ones. Right: the name's node, or any node having the
    same name (same key once words are in base form; for plurals also the nodes whose own name
    is the plural, e.g. *brakes*)."""
    import inflect

    engine = inflect.engine()
    tax = index.taxonomy
    items = []
    for nid, name, kind in tree_names(tables, sample, seed):
        own = str(nid)
        named = {str(tax.ids[x]) for x in index.nodes_named(name).tolist()} | {own}
        art = _article(engine, name)
        for fam, tpl in SINGULAR.items():
            items.append(Item("templates", fam, tpl.format(n=name, a=art, N=name.upper()), frozenset(named),
                              shared=len(named) > 1, source=name))
        p = _plural(engine, name, kind)
        if p:
            also = named | {str(tax.ids[x]) for x in index.nodes_named(p).tolist()}
            for fam, tpl in PLURAL.items():
                items.append(Item("templates", fam, tpl.format(p=p), frozenset(also), shared=len(also) > 1, source=name))
    return items


# ---------------------------------------------------------------------- Snæbjarnarson et al. 2025 [1], Table 9
def table9_rows() -> pl.DataFrame:
    """The transcription of Table 9 of Snæbjarnarson et al. 2025 [1] (``benchmarks/data/snaebjarnarson2025_table9.tsv``)."""
    return pl.read_csv(DATA / "snaebjarnarson2025_table9.tsv", separator="\t", comment_prefix="#", infer_schema=False,
                       quote_char=None)


def _taxon_node(tables, name: str, rank: str, within: str | None) -> list[str]:
    nodes = tables.nodes.filter((pl.col("label") == name) & (pl.col("rank") == rank))["node_id"].to_list()
    if within and len(nodes) > 1:
        tax = tables.taxonomy()
        nodes = [n for n in nodes if any(tax.label(a) == within for a in tax.ancestors(n))]
    return nodes


def table9_taxa(tables) -> list[str]:
    """Node ids of every taxon Table 9's rows name as the paper's mapping (for building a tree
    that holds them)."""
    out = []
    for r in table9_rows().iter_rows(named=True):
        for spec in [f"{r['taxon']}:{r['rank']}", r["also"]]:
            if spec and spec != "None:None" and ":" in spec:
                name, rank = spec.rsplit(":", 1)
                out += _taxon_node(tables, name, rank, r["within"])
    return sorted(set(out))


def table9_items(tables) -> tuple[list[Item], list[dict]]:
    """Items of Table 9's rows whose paper node is legible and in the tree; the other rows
    with the reason they are not evaluated."""
    items, skipped = [], []
    for r in table9_rows().iter_rows(named=True):
        where = {"row": int(r["row"]), "answer": r["answer"], "paper_node": r["paper_node"]}
        if r["status"] != "ok":
            skipped.append({**where, "reason": r["status"]})
            continue
        gold = set(_taxon_node(tables, r["taxon"], r["rank"], r["within"]))
        if len(gold) != 1:
            skipped.append({**where, "reason": f"taxon {r['taxon']} ({r['rank']}) is "
                            + ("not in the tree" if not gold else f"ambiguous in the tree: {sorted(gold)}")})
            continue
        if r["also"]:
            name, rank = r["also"].rsplit(":", 1)
            gold |= set(_taxon_node(tables, name, rank, r["within"]))
        items.append(Item("table9", "snaebjarnarson2025_table9", r["answer"], frozenset(gold),
                          source=f"row {r['row']}", extra={"row": int(r["row"]), "paper_node": r["paper_node"],
                                                           "taxon": r["taxon"], "model": r["model"]}))
    return items, skipped


# ---------------------------------------------------------------------- VLM4Bio
_LETTER = re.compile(r"^\s*(?:the\s+answer\s+is\s*:?\s*)?\(?([A-Za-z])\)\s*(.*?)\s*$", re.IGNORECASE | re.DOTALL)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def vlm4bio_items(root: Path, resolve) -> tuple[list[Item], dict]:
    """From every ``*.jsonl`` under ``root`` (VLM4Bio results): an answer ``<letter>) <text>``
    whose text is one of the question's options gives the gold species (that option, resolved
    by ``resolve(labels) -> {label: node id or None}``) for mapping the free ``<text>`` —
    family ``free_text`` (mapped with the question as context, no letter) — and for the whole
    output as scoring reads it (family ``as_scored``: letter, options and text). Rows that
    give no gold are counted by reason."""
    from taxoforge.scores.mapping.parse import parse_options

    rows = []
    for f in sorted(root.rglob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                rows.append((f"{f.relative_to(root.parent.parent)}:{n}", json.loads(line)))
    reasons: dict[str, int] = {}
    pending = []
    for where, r in rows:
        out, q = r.get("output"), r.get("question")
        opts = parse_options(q)
        m = _LETTER.match(out or "")
        if not isinstance(out, str) or not m or not opts:
            reasons["no letter and options"] = reasons.get("no letter and options", 0) + 1
            continue
        text = m.group(2).rstrip(". ")
        if not text:
            reasons["letter only (no free text)"] = reasons.get("letter only (no free text)", 0) + 1
            continue
        chosen = [k for k, v in opts.items() if _norm(v) == _norm(text)]
        if not chosen:
            reasons["free text is none of the options"] = reasons.get("free text is none of the options", 0) + 1
            continue
        conflict = chosen[0] != m.group(1).upper()
        pending.append((where, q, out, m.group(2), opts[chosen[0]], conflict))
    nodes = resolve([p[4] for p in pending])
    items = []
    for where, q, out, text, option, conflict in pending:
        node = nodes.get(option.strip())
        if node is None:
            reasons["chosen option resolves to no species of the tree"] = \
                reasons.get("chosen option resolves to no species of the tree", 0) + 1
            continue
        extra = {"option": option, "letter_text_conflict": conflict}
        items.append(Item("vlm4bio", "free_text", text, frozenset({node}), question=q, source=where, extra=extra))
        items.append(Item("vlm4bio", "as_scored", out, frozenset({node}), question=q, source=where, extra=extra))
    return items, {"rows": len(rows), "with_gold": len(items) // 2, "without_gold": reasons,
                   "letter_text_conflicts": sum(1 for p in pending if p[5])}


# ---------------------------------------------------------------------- refusals and hedges
def _usable(name: str) -> bool:
    words = set(re.findall(r"[\w'/]+", name.casefold()))
    return bool(words) and not (words & _CUE_WORDS)


def refusal_items(tables, n_names: int = 30, seed: int = 0) -> list[Item]:
    """:data:`REFUSALS` × task words × organism words (:data:`ORGANISM_WORDS` and ``n_names``
    sampled node names: "Sorry, I cannot tell which golden retriever this is." — a name in a
    refused clause is no answer, docs/method.md#mapping-an-answer-to-a-node). Expected: abstained."""
    names = [n for _, n, _ in tree_names(tables, None, seed) if _usable(n)]
    rng = np.random.default_rng(seed)
    picked = [names[i] for i in sorted(rng.choice(len(names), min(n_names, len(names)), replace=False))]
    out, seen = [], set()
    for tpl in REFUSALS:
        tasks = TASK_WORDS if "{task}" in tpl else [None]
        for org_kind, orgs in (("organism_word", ORGANISM_WORDS), ("node_name", picked)):
            for org in (orgs if "{organism}" in tpl else [None]):
                for task in tasks:
                    text = tpl.format(task=task, organism=org)
                    if text in seen:
                        continue
                    seen.add(text)
                    fam = "refusal_" + ("with_" + org_kind if org is not None else "plain")
                    out.append(Item("refusals", fam, text, abstain=True, source=tpl))
    return out


def hedge_items(tables, index, n_names: int = 200, seed: int = 0) -> list[Item]:
    """:data:`HEDGES` × ``n_names`` sampled node names (× task words where the template has
    one). Expected: an answer (not abstained), mapped to the name's node (or a node sharing
    the name)."""
    import inflect

    engine = inflect.engine()
    tax = index.taxonomy
    rows = [r for r in tree_names(tables, None, seed) if _usable(r[1])]
    rng = np.random.default_rng(seed + 1)
    rows = [rows[i] for i in sorted(rng.choice(len(rows), min(n_names, len(rows)), replace=False))]
    out = []
    for j, (nid, name, _kind) in enumerate(rows):
        named = frozenset({str(tax.ids[x]) for x in index.nodes_named(name).tolist()} | {str(nid)})
        art = _article(engine, name)
        for k, tpl in enumerate(HEDGES):
            task = TASK_WORDS[(j + k) % len(TASK_WORDS)]
            out.append(Item("hedges", f"hedge_{k + 1:02d}", tpl.format(n=name, a=art, task=task), named,
                            shared=len(named) > 1, source=name))
    return out


def real_refusal_items(shared_root: Path | None, resolve=None) -> tuple[list[Item], dict]:
    """The hand-labelled real outputs (``benchmarks/data/real_refusals_and_hedges.tsv``): each
    text is read from its shared file and line (nothing of the shared data is copied into the
    repository). ``refusal`` → expected abstained; ``hedged`` → expected an answer (and, where
    ``resolve`` resolves the named candidate, mapped to it — reported, not a target)."""
    labels = pl.read_csv(DATA / "real_refusals_and_hedges.tsv", separator="\t", comment_prefix="#",
                         infer_schema=False, quote_char=None)
    info = {"labelled": labels.height, "by_label": {k: int(v) for k, v in labels.group_by("label").len().sort("label").iter_rows()}}
    if shared_root is None:
        return [], {**info, "status": "skipped", "reason": "shared reference data absent"}
    cache: dict[str, list[str]] = {}
    items, missing = [], []
    use = labels.filter(pl.col("label").is_in(["refusal", "hedged"]))
    nodes = resolve([x for x in use["named"].to_list() if x]) if resolve else {}
    for r in use.iter_rows(named=True):
        path = shared_root / r["file"]
        if not path.exists():
            missing.append(r["file"])
            continue
        lines = cache.setdefault(r["file"], path.read_text(encoding="utf-8").splitlines())
        rec = json.loads(lines[int(r["line"]) - 1])
        text = rec[r["field"]]
        node = nodes.get(r["named"]) if r["named"] else None
        items.append(Item("real_refusals_and_hedges", r["label"], text, frozenset({node}) if node else frozenset(),
                          abstain=r["label"] == "refusal", question=rec.get("question"),
                          source=f"{r['file']}:{r['line']}:{r['field']}", extra={"named": r["named"]}))
    if missing:
        info["missing_files"] = sorted(set(missing))
    return items, info
