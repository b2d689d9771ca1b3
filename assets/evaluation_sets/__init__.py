"""The evaluation-sets domain: multiple-choice question sets drawn from a snapshot, one partition
per difficulty (``assets.py``)."""

#: The asset group ``evaluation_sets`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "Multiple-choice question sets drawn from a snapshot, one partition per difficulty."
)
