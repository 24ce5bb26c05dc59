"""The entity graph of a collection (built at ingest) and Personalized PageRank retrieval over it.

``extract`` finds what passages mention and what questions name; ``store`` keeps the graph in SQLite beside
the collection; ``ppr`` walks it. :class:`deepcite.retrieval.collection.Collection` builds the graph as it
ingests and answers ``mode="graph"`` searches with it.
"""

from deepcite.retrieval.graph.ppr import GraphEntity, GraphWalk, GraphWalker, RankedPassage
from deepcite.retrieval.graph.store import EntityGraph, GraphStats

__all__ = ["EntityGraph", "GraphEntity", "GraphStats", "GraphWalk", "GraphWalker", "RankedPassage"]
