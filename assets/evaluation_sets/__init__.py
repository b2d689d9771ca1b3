"""The evaluation-sets domain: multiple-choice question sets drawn from a snapshot, one partition
per difficulty (``assets.py``)."""
