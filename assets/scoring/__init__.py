"""The scoring domain: model-output files dropped into a folder, scored against a snapshot.

``folders.py``      which taxonomy a file is scored against (its folder's ``taxonomy.txt``, a folder
                    named after a taxonomy, else the default); no Dagster in it
``assets.py``       the scoring assets (``<name>_scores`` downstream of ``<name>_snapshot``, and
                    ``model_output_scores``) and their ``scored_fraction`` check
``jobs.py``         one scoring job per scoring asset
``sensors.py``      ``model_outputs_sensor``: each new or changed file → one scoring run
``definitions.py``  the scoring assets, jobs and sensor of the configured taxonomies
"""

#: The asset group ``scoring`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "Model-output files scored against a snapshot (hP/hR/hF, leaderboard, figures), one partition per "
    "file; rescored when the snapshot changes."
)
