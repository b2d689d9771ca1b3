"""The operations domain: what keeps a deployment honest.

``assets.py``     ``ops_smoke``, a self-test that takes a second, and its job
``schedules.py``  ``ops_heartbeat``: the self-test every minute (off by default)
``sensors.py``    ``run_failure_log``: every failed run logged and appended to a file
"""

#: The asset group ``operations`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "Deployment self-test (`ops_smoke`), its heartbeat and the run-failure log."
)
