"""Settings of the research engine, one section per stage: planning, follow-ups, retrieval, selection,
coverage, chains, next hops, the evidence order, stopping; the bridge beam's are :mod:`deepcite.config.bridge`'s."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deepcite.config.bridge import BridgeSettings
from deepcite.config.section import Section


class PlanningSettings(Section):
    """How a question becomes aspects, sub-questions and each round's queries."""

    max_question_chars: int = 2000  # a longer question or search query is refused, on every surface
    # importance of the main aspect of a question part, of each side of a comparison, and of secondary
    # aspects (an "advantages" or "uses" clause beside the main one)
    main_aspect_importance: float = 1.0
    side_aspect_importance: float = 0.9
    secondary_aspect_importance: float = 0.6
    hyde_enabled: bool = False
    # LLM-proposed aspects: duplicates (same terms) dropped, at most `llm_max_aspects` kept, and each must share
    # `llm_min_shared_terms` stemmed terms with the question (a next sub-question or next-hop query: with the
    # question, the uncovered aspects or the passages shown); an LLM plan with none left falls back to the
    # heuristic one, as does a plan whose aspects together name less than `llm_min_question_share` of the
    # question's stemmed terms (SmolLM2-135M planned "first" for "Who was the first president of the association
    # which published …": a plan of one word of the question, whose hops took the research's rounds)
    llm_max_aspects: int = Field(default=6, ge=1)
    llm_min_shared_terms: int = Field(default=1, ge=0)
    llm_min_question_share: float = Field(default=0.5, ge=0.0, le=1.0)
    max_queries_per_round: int = 24
    max_query_chars: int = 500
    # bridge hops follow entities of the best `bridge_parents_per_hop` passages not yet bridged from (each
    # passage's title and up to `bridge_names_per_passage` names)
    bridge_parents_per_hop: int = 1
    bridge_names_per_passage: int = 6
    bridge_entities_in_label: int = 4  # entities named in a bridge hop's sub-question text
    # with a collection's entity graph: bridge queries per round from high-PPR entities the evidence does not
    # yet cover, walking from the question's entities and the best `graph_seed_passages` evidence passages
    # (0: none; 3 cost recall@5 on MuSiQue train)
    graph_bridge_entities: int = 0
    graph_seed_passages: int = 5


class FollowupSettings(Section):
    """How offline follow-up (bridge) queries are read from evidence, and which are noise that never runs
    (research/followup.py; the word lists are in research/followup_words.py)."""

    # a passage title is followed as an entity only when it reads as a name: at most `title_max_words` words,
    # no sentence end, and (from `sentence_case_min_words` words on) less than `sentence_case_share` of its
    # content words in lower case ("Kiss and Tell (1945 film)" is a name; a paper's sentence-case title is not)
    title_max_words: int = 8
    sentence_case_min_words: int = 4
    sentence_case_share: float = 0.5
    # noun phrases read from a passage when its names give no follow-up: runs of phrase_min_words to
    # phrase_max_words content words that share a word with the question and add one; at most
    # phrases_per_passage, those nearest the start of the passage first
    phrase_min_words: int = 2
    phrase_max_words: int = 4
    phrases_per_passage: int = 3
    # a name sharing no word with the question is followed only from a passage holding at least this share of
    # the question's terms (a hop from a passage that barely bears on the question drifts to another document)
    bridge_min_question_share: float = Field(default=0.25, ge=0.0, le=1.0)
    # in a document (a file, a publication), names are read only from the sentences holding at least this share
    # of the question's terms: a name elsewhere in the passage (a cited author, a heading, a dataset of another
    # section) bridges to nothing the question asks (0: every sentence)
    document_name_min_question_share: float = Field(default=0.25, ge=0.0, le=1.0)
    # a passage holding this many reference-entry years ("Xiong. 2022. QAFactEval …") is a reference list: no
    # follow-up is read from it (its names are cited works' authors and titles)
    reference_list_min_entries: int = Field(default=3, ge=1)


class ResearchRetrievalSettings(Section):
    """How each round searches: modes, depth, fusion of the round's lists, the optional reranker."""

    modes: list[Literal["bm25", "dense", "hybrid"]] = Field(default_factory=lambda: ["hybrid"])
    k_per_query: int = 20
    bridge_modes: list[Literal["bm25", "dense", "hybrid"]] = Field(default_factory=lambda: ["bm25"])
    bridge_k: int = 3  # hits per bridge query (an entity searched by name)
    # the entity graph's ranked list (`graph_k` hits) beside each sub-question's searches, when the collection
    # has a graph. Off by default: it lifts multi-hop recall but costs about 2.5x the research time (README,
    # multi-hop); ``eval multihop`` measures it on. The round's lists are fused by RRF with search.rrf_k.
    use_graph: bool = False
    graph_k: int = 20
    # names to pages: a query of one entity's name also searches (BM25) the pages its name names by the
    # collection's alias table (retrieval/graph/aliases.py), at most `name_pages` of them (0: off)
    name_pages: int = 2
    # the pages' anchor text in the research's searches (graph.anchor_weight; plain search reads it). Off: on the
    # train samples (one run each, 725f06f) it moved MuSiQue recall@5 / @10 / all@10 from 0.788 / 0.858 / 0.710 to
    # 0.764 / 0.848 / 0.680 and HotpotQA from 0.965 / 0.990 / 0.980 to 0.960 / 0.980 / 0.960: the beam already
    # reaches the pages it finds, and the pages it lifts crowd the question's own passages out of a round
    anchor_text: bool = False
    rerank_enabled: bool = False
    reranker_model: str | None = None
    rerank_top_n: int = 30
    rerank_batch_size: int = 32


class SelectionSettings(Section):
    """Which passages a round keeps, and how the evidence pack is ordered and capped."""

    max_docs_per_round: int = 10
    # the first round's (the question's own search's) next `first_round_tail` passages after its selection, in
    # the same MMR order, join the pack at the end (0: none): no hop reads them, coverage and the stop decision do
    # not count them; the page of a later hop the question's words find often ranks 11-20 (issue 49's train
    # misses). Chosen on the train samples, one run each: 0 / 5 / 10 gave MuSiQue recall@5 / @10 / all@10
    # 0.797 / 0.855 / 0.710, 0.797 / 0.863 / 0.730, 0.797 / 0.863 / 0.730 and HotpotQA 0.975 / 0.990 / 0.980,
    # the same, 0.975 / 0.995 / 0.990 (docs/benchmarks/multihop.md, nineteenth session; profile no_first_round_tail)
    first_round_tail: int = Field(default=10, ge=0)
    max_total_docs: int = 30
    # the final pack's order (research.ranking) also weighs the rounds' selected passages the trim to
    # `max_total_docs` left out (by pack score: a late hop's passages score low), up to `order_pool` passages in
    # all (the first round's tail not among them), and keeps its first `max_total_docs` (at most
    # `max_total_docs`: off). 40 since issue 49's twenty-seventh session, chosen on the train samples only: two
    # chains whose last passage the beam had selected in round 3 or 4 and the trim cut ("Meramec River",
    # "Protestantism") rank 8th; MuSiQue train 0.852 / 0.898 / 0.780 -> 0.847 / 0.9075 / 0.800 recall@5 / @10 /
    # all@10 (one passage 5th -> 6th), the same at 45-60, 0.847 / 0.9025 / 0.790 at 35; with the tail weighed too
    # 0.847 / 0.905 / 0.790 at 40-50 and 0.852 / 0.895 / 0.770 at 35; HotpotQA train 0.980 / 0.995 / 0.990
    # unchanged at 40 and 60. Profile before_order_pool is 0 (docs/benchmarks/multihop.md)
    order_pool: int = Field(default=40, ge=0)
    # a long document's answer often sits in its third to tenth best passage (a table row beside the prose that
    # names it, a passage the question's other parts' searches also reach): at 6 per document (chosen on the 88
    # and the first blind set: research hit@5 0.784 at 2, 0.886 at 4, 0.898 at 6) the pack filled up with other
    # documents' passages while plain search's top 10 held the answer; 12 (the answer's context, answer.context.
    # max_chunks) chosen on the dev sets: answer phrase in the context, the 88 0.898 -> 0.977, reader words
    # 0.722 -> 0.861, blind4 0.676 -> 0.803;
    # the multi-hop pools and PubMedQA (one paragraph or section a document) do not change
    # (docs/benchmarks/answer-decision.md, seventeenth session)
    per_document_cap: int = 12
    # a question about the source itself ("Who wrote the report?", deepcite/front_matter.py): the first passage
    # (title page, byline, first slide) of each of the pack's first `front_matter_docs` documents joins the pack
    # from place `front_matter_place` on, inside the answer's context (0: off); plain search ranked a report's
    # byline past the 50th passage (docs/benchmarks/answer-decision.md, twenty-seventh session)
    front_matter_docs: int = Field(default=3, ge=0)
    front_matter_place: int = Field(default=4, ge=1)
    mmr_lambda: float = 0.7
    must_preserve_boost: float = 0.1
    # MMR runs over the round's best `pool` candidates; the best passage of each query not yet represented
    # gets `spread_bonus` on its relevance
    pool: int = 30
    spread_bonus: float = 0.2
    title_match_bonus: float = 0.15  # a passage titled after the entity or aspect its query was about
    # a bridge candidate's relevance: cosine to (question + parent) + `title_match_bonus` when its title names
    # the entity + `bridge_residual_weight` * its share of the best score of the question words the parent lacks
    bridge_residual_weight: float = 0.3
    # the pack's order: a passage selected at `rank` in round r scores round_decay**(r-1) / (rank_k + rank)
    rank_k: float = 1.0
    round_decay: float = 0.7


class CoverageSettings(Section):
    """How well the evidence covers each aspect: keywords and embedding similarity (or an LLM grader)."""

    enabled: bool = True  # off: coverage never stops the rounds (evidence quality does)
    threshold: float = 0.5  # an aspect scoring at least this is covered
    weighted_threshold: float = 0.70
    core_importance: float = 0.8  # aspects at least this important must all be covered
    # an aspect's score: keyword_weight * keyword score + (1 - keyword_weight) * embedding similarity
    keyword_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    # the best aspect-passage cosine is mapped from [cosine_floor, cosine_ceiling] onto [0, 1]
    cosine_floor: float = 0.25
    cosine_ceiling: float = 0.75
    # a passage's lead sentence is looked for in its first this many characters before the whole text
    lead_window_chars: int = 600
    # an LLM grader's score replaces an aspect's heuristic score only where it is lower: the LLM can keep the
    # research going, not end it before the offline grade would (SmolLM2-135M graded every aspect 1.0 and cut
    # MuSiQue research to its minimum hops); True lets its score raise the heuristic's too
    llm_may_raise: bool = False


class ChainSettings(Section):
    """Composed questions ("the spouse of the performer of Green") run as an ordered chain of hops. Off by
    default: on MuSiQue train it cost recall@5 (README, multi-hop)."""

    enabled: bool = False  # a question is parsed into at most research.stopping.max_hops hops
    beam: int = 2  # answer entities of a hop carried into the next hop's queries
    answer_passages: int = 3  # a hop's best passages its answer entity is taken from
    # an answer entity scores 1/rank of its passage, times `title_weight` for a passage title, plus
    # `near_weight` when it stands within `near_window` words of a relation word of the hop's query, plus
    # `known_weight` when it is the title of a document in the collection
    title_weight: float = 0.5
    near_weight: float = 2.0
    near_window: int = 12
    known_weight: float = 1.0
    # the best passage of each hop is pinned in the pack at `pin_factor` times the first hop's best score
    pin_factor: float = 0.9


class NextHopSettings(Section):
    """LLM-chosen next hops (research/nodes/choose_next_hop.py, IRCoT/HippoRAG style): after each round's
    selection the LLM reads the question and the evidence so far and says whether it is answered, and if not,
    the next query and the entity it is about; that query joins the next round's queries. Off by default;
    runs only with an LLM configured. A failed or invalid reply changes nothing (a warning in the pack)."""

    enabled: bool = False
    evidence_passages: int = 8  # best evidence passages shown to the LLM (title and text)
    passage_chars: int = 400  # each shown passage's text cut to this many characters
    token_budget: int = 1500  # the evidence listing trimmed to fit this many tokens (llm.chars_per_token)


class EvidenceRankingSettings(Section):
    """The evidence pack's final order (``research/linking.py``): relevance to the whole question plus the
    score of linked passages, so a chain's bridge passage ranks beside the passage naming it. Tuned on the
    MuSiQue and HotpotQA train sets (README, multi-hop)."""

    enabled: bool = True
    dense_weight: float = 1.0  # x cosine of passage and question
    title_weight: float = 0.6  # the question names the passage's title
    pack_weight: float = 3.0  # x 1 / (pack_k + rank in the rounds' order)
    pack_k: float = 1.0
    # x the score of a passage it shares a title link with. 0.5 -> 0.6 with question_name_weight 1.0 (issue 49,
    # twentieth session; chosen on the train samples): MuSiQue 0.810 / 0.868 / 0.730 -> 0.810 / 0.871 / 0.740,
    # HotpotQA 0.975 / 0.995 / 0.990 -> 0.980 / 0.995 / 0.990 (recall@5 / @10 / all@10)
    link_weight: float = 0.6
    # a title or alias link lifts the page a passage names by `link_weight` x that passage's score, and the
    # passage naming the page by `backlink_weight` x that much: a chain runs from a passage to the page of a name
    # it states, while the passages naming a page are often only other passages about its subject (1: both alike).
    # Chosen on the train samples (issue 49, one run each): MuSiQue recall@5 / @10 / all@10 0.788 / 0.858 / 0.710 at
    # 1.0 -> 0.797 / 0.860 / 0.710 at 0.3, 0.797 / 0.855 / 0.710 at 0.5 and 0.6; HotpotQA 0.965 / 0.990 / 0.980 ->
    # 0.970 at 0.3, 0.975 at 0.5 and 0.6 (@10 and all@10 unchanged), 0.955 / 0.985 / 0.970 at 0
    backlink_weight: float = Field(default=0.5, ge=0.0)
    # the page of the first hop's answer (the page titled after the beam's best candidate read after round 1,
    # research.bridge) is placed no lower than this in the pack's order (0: off): the chain's second passage,
    # which shares few words with the question, beside the passages that share them. At 5, on the train samples:
    # HotpotQA recall@5 0.965 -> 0.975, MuSiQue unchanged; with backlink_weight 0.5 it changes neither: off
    first_answer_page_within: int = Field(default=0, ge=0)
    shared_name_weight: float = 0.1  # x the score of a passage mentioning a name it mentions
    # each place of the order goes to the best passage by its score plus this for each name of the question
    # (graph/extract.py's name_keys: "Signmark", "Euro") it mentions or is the page of that no passage above it does
    # (0: off): the pack's top holds the page of every entity the question names before a second passage on one.
    # At 1.0 on the train samples (issue 49, twentieth session; profile before_question_names is the order without
    # it): MuSiQue recall@5 / @10 / all@10 0.797 / 0.863 / 0.730 -> 0.810 / 0.868 / 0.730, HotpotQA 0.975 / 0.995 /
    # 0.990 unchanged (0.5: MuSiQue 0.808)
    question_name_weight: float = Field(default=1.0, ge=0.0)
    # and this for each hop of the research's beam it stands for that no passage above it does (0: off): a hop's
    # answer is the candidate of its depth whose evidence scored best (its support), and a passage one of that
    # candidate's queries found stands for the hop, so the top holds one passage per hop of the chain before a
    # second one of any. At 0.3 on the train samples (issue 49, twenty-first session; profile before_hop_cover is
    # the order without it): MuSiQue recall@5 / @10 / all@10 0.815 / 0.883 / 0.750 -> 0.823 / 0.883 / 0.750 (0.6
    # the same), HotpotQA 0.980 / 0.995 / 0.990 unchanged
    hop_weight: float = Field(default=0.3, ge=0.0)
    # and this for each hop whose answer's own page it is (titled by it) that no passage above it is (0: off). At 0.2
    # on the train samples (issue 49, twenty-first session; on recorded packs 0.15-0.3 gain, 0.25 and up cost a
    # question on the packs of before skip_own_aliases; profile before_hop_page is the order without it): MuSiQue
    # 0.823 / 0.883 / 0.750 -> 0.827 / 0.883 / 0.750 (0.15 the same), HotpotQA 0.980 / 0.995 / 0.990 unchanged
    hop_page_weight: float = Field(default=0.2, ge=0.0)
    iterations: int = 2  # rounds of link lifting (2 carries a score two links down a chain)
    # names to pages (retrieval/graph/aliases.py): a passage's title keys are its page's aliases (the title, its
    # head before a comma, the lead name of its first `alias_lead_chars` characters and the names beside it, at
    # most `alias_max_words` words each); a passage naming one of them is title-linked, and one naming a longer
    # form of one of at least `alias_prefix_min_words` words ("West Chicago High School" and the page "West
    # Chicago, Illinois") is linked by `alias_link_weight` x the page's score (0: off)
    alias_link_weight: float = 0.3
    # a page whose title is an aspect of a name ("History of Maryland", "Arrondissement of Mouscron": what follows the
    # first of `subject_link_words` in its head, research/linking.py title_subject) is linked to a passage naming that
    # name by `subject_link_weight` x that passage's score, damped like a title link through a name many passages
    # mention (`link_specificity`; 0: off): the next hop's page of a chain is often such a page, and the passage
    # before names its subject, not its title. 0.8 since issue 49's twenty-seventh session, chosen on the train
    # samples only: MuSiQue train 0.847 / 0.9075 / 0.800 -> 0.8525 / 0.912 / 0.820 recall@5 / @10 / all@10 (0.6:
    # 0.8525 / 0.910 / 0.810, 1.0: 0.8475 / 0.915 / 0.830, 1.5: 0.831 / 0.915 / 0.830; without the damping 0.6 cost
    # recall@5, 0.831 / 0.918 / 0.830: "Territories of the United States", "Geological history of Earth"), HotpotQA
    # train 0.980 / 0.995 / 0.990 unchanged at 0.6 and 1.0. Profile before_subject_links is 0. "in" joins "of" since
    # the same session ("Meet Me in St. Louis": St. Louis), chosen on the train samples only: MuSiQue train 0.8525 /
    # 0.912 / 0.820 -> 0.856 / 0.915 / 0.820 (one passage 7th -> 2nd, none out of the top 5), HotpotQA train
    # unchanged; "at" and "from" add nothing. Profile before_subject_in is ["of"] (docs/benchmarks/multihop.md)
    subject_link_weight: float = Field(default=0.8, ge=0.0)
    subject_link_words: list[str] = Field(default_factory=lambda: ["of", "in"])
    # a passage the LLM choosing next hops (research.next_hop) said states a fact the answer needs
    reader_weight: float = 1.0
    alias_prefix_min_words: int = Field(default=2, ge=1)
    alias_max_words: int = 6
    alias_lead_chars: int = 300
    # the beam's bridges (research.bridge): two passages that both name a bridge candidate the beam read (the
    # chain's next passage names the entity the passage before it answered) are linked by `bridge_link_weight`
    # (0: off; otherwise such a shared name counts `shared_name_weight`), divided by (n - 1) ** `bridge_link_spread`
    # for a name n passages of the pack share and by (log2(2 + m) / 2) ** `bridge_link_specificity` for one m
    # passages of the collection mention (a name every passage mentions links nothing). At 0.5, in one run each,
    # MuSiQue train recall@5 / all@10 0.723 / 0.640 -> 0.758 / 0.700 and dev 0.645 / 0.587 -> 0.688 / 0.609;
    # HotpotQA-500 recall@5 0.899 -> 0.900, all@10 0.958 -> 0.956 (one question of 500); the evaluation profile
    # `before_bridge_links` measures the pack without them (docs/benchmarks/multihop.md)
    bridge_link_weight: float = 0.5
    bridge_link_spread: float = 1.0
    bridge_link_specificity: float = 1.0
    # hubs: a title or alias link through a name n passages of the pack mention is divided by (n - 1) **
    # `link_spread`, and through one m passages of the collection mention by (log2(2 + m) / 2) **
    # `link_specificity` (never under `shared_name_weight`; 0: off): every passage naming "United States" is
    # no chain to the page "United States". At specificity 1.5, in one run each (1b665cf), MuSiQue dev recall@5 /
    # @10 / all@10 0.688 / 0.804 / 0.609 -> 0.708 / 0.853 / 0.696, HotpotQA-500 0.900 / 0.976 / 0.956 -> 0.926 /
    # 0.976 / 0.954 (one question of 500); the evaluation profile `before_hub_links` measures the pack without it
    link_spread: float = Field(default=0.0, ge=0.0)
    link_specificity: float = Field(default=1.5, ge=0.0)
    # each hop's own question (research/likelihood.py): a question that decomposes into hops (research/chain.py,
    # at most `hop_likelihood_max_hops`) is asked hop by hop, each later hop with the beam's answer of the hop
    # before in its slot, and the pack's final order's first `hop_likelihood_passages` passages (title and the first
    # `hop_likelihood_passage_chars` characters) are scored by the likelihood of each hop's question and of the
    # whole question after them under a small local LM (UPR; SmolLM2-135M in-process, the `local-llm` extra, on
    # `hop_likelihood_threads` threads), each question's likelihoods z-scored over the passages; a passage's best,
    # z-scored again, x `hop_likelihood_weight` is added to its relevance (the passages below take the lowest).
    # `hop_likelihood`: "off" (the default) never scores; "on" scores and requires the `local-llm` extra (a
    # ConfigError without it); "auto" scores where the extra is installed and goes without it where it is not (said
    # once in the log). A question that does not decompose is never scored. Weight 1.0 chosen in each of five folds
    # of the train samples on recorded packs (issue 49, thirty-first session). Off by default: on the same folds
    # no other number of passages (5-8, 12, 15) nor a shorter reading (250 characters) gains, and it costs the LM's
    # reading of ten passages per composed question, 7 s against 0.2 under load on two shared cores (thirty-second
    # session). The evaluation profile `hop_likelihood` ("on") measures it (docs/benchmarks/multihop.md)
    hop_likelihood: Literal["auto", "on", "off"] = "off"
    hop_likelihood_weight: float = Field(default=1.0, ge=0.0)
    hop_likelihood_passages: int = Field(default=10, ge=1)
    hop_likelihood_max_hops: int = Field(default=4, ge=2)
    hop_likelihood_passage_chars: int = Field(default=1500, ge=1)
    hop_likelihood_threads: int = Field(default=1, ge=1)


class StoppingSettings(Section):
    """When the rounds stop (decided by the ``should_continue`` node)."""

    min_hops: int = 3
    max_hops: int = 10  # the one cap on research rounds (hops); a request may ask for fewer
    no_novelty_streak: int = 2  # stop after this many rounds without new evidence
    # > 0: a round brings new evidence only when it changes the pack's top this-many passages (its final
    # order, research.ranking); 0: any newly selected passage counts. 10 cut MuSiQue train's hops from 8.8 to
    # 5.2 at the same recall (README, multi-hop)
    novelty_top_k: int = 10
    quality_stop_score: float = (
        0.5  # with coverage off: stop once the best question-evidence cosine reaches it
    )


class ResearchSettings(Section):
    """The research engine, one section per stage: planning, retrieval, selection, coverage, stopping."""

    planning: PlanningSettings = Field(default_factory=PlanningSettings)
    retrieval: ResearchRetrievalSettings = Field(default_factory=ResearchRetrievalSettings)
    selection: SelectionSettings = Field(default_factory=SelectionSettings)
    coverage: CoverageSettings = Field(default_factory=CoverageSettings)
    stopping: StoppingSettings = Field(default_factory=StoppingSettings)
    chain: ChainSettings = Field(default_factory=ChainSettings)
    bridge: BridgeSettings = Field(default_factory=BridgeSettings)
    next_hop: NextHopSettings = Field(default_factory=NextHopSettings)
    ranking: EvidenceRankingSettings = Field(default_factory=EvidenceRankingSettings)
    followup: FollowupSettings = Field(default_factory=FollowupSettings)
    vector_cache_size: int = 50_000  # passage vectors kept across questions by one ResearchAgent
