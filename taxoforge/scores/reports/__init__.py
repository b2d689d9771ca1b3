"""What a scoring run hands to people: the leaderboard, its tables and its figures.

:mod:`.leaderboard` aggregates per-sample scores into a leaderboard (model × dataset ×
prompt by default, with the bootstrap intervals and the breakdown columns); :mod:`.tables`
writes it, and a comparison, as Markdown, LaTeX and CSV; :mod:`.figures` draws the figures
a paper takes as they are (one column wide; PNG, PDF and SVG).
"""
