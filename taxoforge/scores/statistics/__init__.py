"""How far a score can be trusted, and whether one system beats another.

:mod:`.confidence` — percentile-bootstrap 95 % intervals of the leaderboard's accuracy,
hP, hR and hF; :mod:`.paired` — paired tests of two systems' per-item scores on the same
items; :mod:`.compare` — scoring runs compared on the items they share (``taxoforge
compare``), through those tests; :mod:`.sensitivity` — the same answers scored against
several trees, and how much the choice of tree moves the leaderboard.
"""
