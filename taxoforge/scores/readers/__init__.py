"""Model-output files → the canonical rows a scoring run reads.

:mod:`.files` reads JSONL, JSON, CSV/TSV, Parquet and xlsx through the bounded
:mod:`taxoforge.files.records` into one table of canonical columns (``id``, ``image``,
``question``, ``output``, ``label``, ``model``, ``dataset``, ``prompt`` …), every row keeping
its file and line; :mod:`.harness_layouts` tells, from a file's columns and name, the layout
it comes in — lmms-eval, VLMEvalKit (its dataset names in ``vlmevalkit_datasets.txt``),
VLM4Bio, generic — and where each canonical column, the model, the dataset and the options
of a multiple-choice question are.
"""
