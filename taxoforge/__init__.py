"""taxoforge: taxonomies from messy knowledge sources, and hierarchical scoring of VLM answers."""
__version__ = "0.1.0"
