"""The query files (``wikidata/*.rq``). This folder installs as the package ``taxoforge.sql``
(``setup.py`` maps it), so the library reads the files with :mod:`importlib.resources` in an
editable install and from a wheel alike."""
