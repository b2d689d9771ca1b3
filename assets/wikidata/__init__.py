"""The Wikidata domain: the subclass-of taxonomy of seed entities and the label sets linked to it.

``assets.py``       the graph (over SPARQL, or one pass over a truthy dump), tree, labels, links and
                    their checks
``dump_spark.py``   the reading of the whole dump on Spark (``wikidata_dump_graph``), by hand
``rebuilds.py``     what the two rebuilds need (seeds and a contact address; a dump file)
``schedules.py``    their jobs and weekly schedules
"""

#: The asset group ``wikidata`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "Wikidata's subclass-of taxonomy of seed entities (OVEN), over SPARQL or from the weekly dump, "
    "and label sets linked to it."
)
