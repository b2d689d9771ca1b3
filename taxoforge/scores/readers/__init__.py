"""Model-output files → the canonical rows a scoring run reads.

:mod:`.files` reads JSONL, JSON, CSV/TSV, Parquet and xlsx through the bounded
:mod:`taxoforge.files.records` into one table of canonical columns (``id``, ``image``,
``question``, ``output``, ``label``, ``model``, ``dataset``, ``prompt`` …), every row keeping
its file and line; :mod:`.harness_layouts` tells, from a file's columns and name, the layout
it comes in — lmms-eval, VLMEvalKit (its dataset names in ``vlmevalkit_datasets.txt``),
VLM4Bio, generic — and where each canonical column, the model, the dataset and the options
of a multiple-choice question are. What a user names — files, folders, globs — becomes the
sources a run reads in :mod:`.sources` (one per model and dataset: a prediction file and its
judge table together, score and status files skipped with their reasons, links read once,
the latest run of each), by the rules of :mod:`.run_folders`: what each file an evaluation
harness leaves in a folder is, told from its name, its run folder and the run's own record
(VLMEvalKit's ``status.json``, lmms-eval's ``*_results.json``).
"""
