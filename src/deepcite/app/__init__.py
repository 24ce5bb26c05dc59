"""The application layer: the services the :class:`~deepcite.engine.Engine` composes, each of one job.

``resources`` builds the shared objects once; ``assembly`` is the only wiring of a research agent and the
answer stage; ``corpus`` holds collections, ingest, documents and originals; ``answers`` searches, researches
and answers; ``saved`` keeps answers; ``practitioners`` finds practitioners.
"""
