"""The SPARQL query files (``wikidata/*.rq``) of the design card's top-level ``sql/`` folder.

``taxoforge/sql`` is a symbolic link to this folder, so the files install as the package
``taxoforge.sql``: setuptools follows the link when it builds the sdist and the wheel, and an
editable install or a checkout reads them through it. The library loads them with
:mod:`importlib.resources` (``taxoforge.sources.wikidata.queries``).
"""
