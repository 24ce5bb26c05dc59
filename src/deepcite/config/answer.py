"""Settings of the grounded answer stage: lengths, context, budgets, the citation check, the extractive
writer and its finding scores."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from deepcite.config.section import Section


class AnswerLengthSettings(Section):
    """How many sentences each part of an answer has."""

    summary_min_sentences: int = 3
    summary_max_sentences: int = 5
    subanswer_max_sentences: int = 4
    long_answer_sentences_per_aspect: int = 3
    # the extractive long answer's sections share at least this many sentences (a one-section answer is longer
    # than the quick summary)
    long_answer_min_sentences: int = 6
    # … and a long answer of one section (the question itself) at least this many: where the summary missed a
    # fact, the sentence stating it often ranked 7th to 12th (one question more on each tuning set, the 88 and
    # the first blind set, than at 6; docs/benchmarks/documents.md)
    long_answer_one_section_sentences: int = Field(default=12, ge=1)
    # the extractive long answer opens with up to this many of the sentences the opening model ranks next after
    # the quick summary's, as many as fit in the words its sections leave: the likeliest answers neither had room
    # for. Dev sets (blind4-14, the 88, reader words; 1,785 answerable), the answer in the summary or the long
    # answer 0 -> 8: 1,206 -> 1,270, no set lower (docs/benchmarks/answer-decision.md, twenty-ninth session)
    long_answer_ranked_sentences: int = Field(default=8, ge=0)
    # most sentences of the extractive quick summary: a question asking for a fact (an amount, a name, a date, a
    # definition …) often has its answer in the second or third best sentence (docs/benchmarks/documents.md); 4
    # within the summary's 120 words: reader-worded dev questions 0.361 -> 0.389, the 88 0.807 -> 0.818, 5 no
    # more (docs/benchmarks/answer-decision.md)
    extractive_summary_sentences: int = Field(default=4, ge=1)
    # … of a yes/no question: its finding and the sentences that carry it on. 3 since the twenty-fifth session:
    # a reader's yes/no question over documents is stated by a sentence the opening model ranks second or third
    # as often as by its first (dev: 14 more summaries state the answer over 705, 4 more verdicts right of 189,
    # a later sentence that denies can open); PubMedQA train's ROUGE-L against the authors' two-sentence
    # conclusions 0.2154 -> 0.2096 (4 sentences: 0.2019; docs/benchmarks/answer-decision.md)
    extractive_yes_no_summary_sentences: int = Field(default=3, ge=1)
    # after those (not for a yes/no question), up to this many more sentences the opening model ranks next, each
    # only while the summary stays within ``summary_max_sentences`` and ``decision.summary_max_words``: room the
    # first four leave is not left empty. Dev sets (1,785 answerable) 0 -> 1: the summary states the answer
    # 978 -> 994, no set lower, median words +7-14 (docs/benchmarks/answer-decision.md, twenty-ninth session)
    extractive_summary_room_sentences: int = Field(default=1, ge=0)


class AnswerContextSettings(Section):
    """The evidence an answer is written from (``ResponseContext``) and how long the server keeps it."""

    max_chunks: int = 12
    max_subquery_chunks: int = 6  # evidence per sub-question handed to its sub-answer
    ttl_s: float = 3600.0
    max_count: int = 1000
    cleanup_interval_s: float = 60.0


class AnswerBudgetSettings(Section):
    """Time and tokens: a question's (or a regeneration's) whole time; LLM calls stop ``offline_reserve_s``
    before it runs out, and what is left unanswered is written offline (the response's ``degraded`` says so)."""

    # a question's whole time, research and answer: LLM steps that cannot finish within their share of it run
    # offline with a note (llm/speed.py), so a slow local model costs at most this long
    request_s: float = 30.0
    offline_reserve_s: float = 5.0
    tokens: int = 6000  # whole LLM request: prompt (passages trimmed to fit) + llm.max_output_tokens
    # research's LLM calls (plan, coverage grade, next hop, HyDE) end once this share of the request's LLM
    # time is spent, so the answer's parts keep the rest (llm/deadline.py)
    research_share: float = Field(default=0.5, ge=0.0, le=1.0)
    # the sub-answers (written before the summary and the long answer) end once this share of the answer's
    # LLM time left when they start is spent, so the summary keeps the rest
    subanswer_share: float = Field(default=0.3, ge=0.0, le=1.0)
    # the passages an LLM part is shown, best first: at most this many, each cut to passage_chars characters
    # (at a sentence end when one is near); fewer when the model's measured pace cannot read more in the time
    # its stage has left (llm/speed.py)
    summary_passages: int = Field(default=6, ge=1)
    long_answer_passages: int = Field(default=8, ge=1)
    subanswer_passages: int = Field(default=3, ge=1)
    passage_chars: int = Field(default=900, ge=100)


class CitationSettings(Section):
    """The citation check (answer/citations.py, answer/support.py; tuned by benchmarks/citation_support.py): a
    range marker spanning more than ``max_range_width`` ids is dropped whole; a cited passage must support its
    sentence: verbatim when ``verbatim_lexical`` of the sentence's terms is in it, else ``lexical_weight *
    lexical + (1 - lexical_weight) * cosine`` to the passage's closest sentence must reach ``support_threshold``;
    ``judge = "llm"`` asks the LLM judge where it answers. An unsupported sentence is replaced or dropped."""

    max_range_width: int = 5
    verbatim_lexical: float = 0.9
    lexical_weight: float = Field(default=0.3, ge=0.0, le=1.0)
    support_threshold: float = 0.58
    judge: Literal["none", "llm"] = "none"
    # the LLM judge answers built-in control pairs (plainly supported, plainly unsupported) before its verdicts
    # count; one it gets wrong and the judge is not used (answer/support.py)
    judge_controls: bool = True
    # a judge's "supported" never overrules a combined score this far below support_threshold
    judge_veto_margin: float = Field(default=0.15, ge=0.0)
    unsupported_policy: Literal["replace", "drop"] = "replace"
    # a citation's quote: the passage sentence that supports its claim best, widened by a neighbour while
    # that adds claim terms, up to this many sentences (answer/support.py)
    quote_max_sentences: int = Field(default=2, ge=1)
    # ... and at most this many characters: no widening past it, and a "sentence" longer than that (a passage
    # with no sentence ends, a table's text) is narrowed to the window of words holding the most claim terms
    quote_max_chars: int = Field(default=600, ge=40)


class AnswerGuardSettings(Section):
    """Checks an LLM-written part passes before it is shipped (answer/guards.py); a part that fails is written
    by the offline writer instead, and the response says which part and why. Structure: no heading, line or
    sentence of at least ``repeat_min_words`` words twice, no empty section, at most ``length_factor`` times
    the sentences the prompt asked for and ``max_sentence_chars`` characters per allowed sentence. Grounding:
    at least ``min_kept_share`` of its sentences keep a citation after the citation check, unless the offline
    writer's part keeps no larger share."""

    enabled: bool = True
    repeat_min_words: int = Field(default=3, ge=1)
    length_factor: float = Field(default=2.0, gt=0.0)
    max_sentence_chars: int = Field(default=400, ge=1)
    min_kept_share: float = Field(default=0.5, ge=0.0, le=1.0)


class AnswerKindSettings(Section):
    """The writer's answer to the question asked (answer/question_kind.py, answer/lead_guard.py): a summary
    sentence's value for the question is ``(1 - cue_weight) * value + cue_weight * cue``, where the cue says how
    much the sentence has the shape of the answer the question asks for (a number with its unit for "how many",
    "is a/refers to" for "what is", a comparative naming both sides for a comparison). The opening is the most
    valuable sentence whose cue reaches ``cue_min`` and whose relevance reaches ``cue_min_relevance``, when one
    does; when none does for a question answered by its cue alone (an amount) and ``say_not_stated``, the
    summary says the sources do not state it before the closest sentences. Tuned on the project's own
    questions (eval/real_docs_questions.jsonl) and PubMedQA train questions."""

    enabled: bool = True
    cue_weight: float = Field(default=0.15, ge=0.0, le=1.0)
    # and the share of the question's word pairs it holds ("paper queue", "not address"), by this weight
    phrase_weight: float = Field(default=0.2, ge=0.0, le=1.0)
    # a yes/no question (or one asking for findings without a cue): its findings-first value blended with the
    # share of the question's word pairs it holds, by this weight
    findings_phrase_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    # … and for a sentence whose section says nothing of its role (no results/methods label: a web page, a
    # report), by this weight instead
    unlabelled_phrase_weight: float = Field(default=0.3, ge=0.0, le=1.0)
    # and, for a question that does not ask for findings, its own support without its study's share
    own_weight: float = Field(default=0.3, ge=0.0, le=1.0)
    # the kinds of question whose answer is a figure: their quoted sentences keep parenthesised statistics
    # ("(92% vs. 70%)"), which extractive.elide_statistics leaves out of every other answer
    statistics_kept_for: frozenset[Literal["amount", "comparison"]] = frozenset({"amount", "comparison"})
    # an amount or a name: the table row that fits the question this well (answer/table_rows.py: 1 names the
    # question's name and the measure asked, 0.5 the name and a number) ends the summary
    row_min_fit: float = Field(default=0.5, ge=0.0, le=1.0)
    # a table row may open the summary when it holds this share of the question's terms (with its caption's)
    row_open_coverage: float = Field(default=0.34, ge=0.0, le=1.0)
    row_fit_weight: float = 0.2  # rows are ranked by their value for the question plus this times their fit
    # … plus this times the share of the question's terms the row and its table's caption hold
    row_coverage_weight: float = 0.3
    # … less this when the row's table caption names things and the question none of them (another table)
    row_caption_mismatch: float = 0.3
    # an amount: a sentence stating a figure no sentence chosen before states is never skipped as redundant
    new_figure_not_redundant: bool = True
    cue_min: float = Field(default=0.5, ge=0.0, le=1.0)
    cue_min_relevance: float = Field(default=0.3, ge=0.0, le=1.0)
    say_not_stated: bool = True
    # the cue of an amount: a number the question does not hold and no part of a date, with its unit or as a
    # percentage; bare; or written as a word. A question asking for a unit ("how much time", "how much did it
    # cost") takes a number in that unit as the cue, and any other number as this much (below cue_min: it does
    # not answer "how much time" with "21 million passages")
    number_with_unit_cue: float = 1.0
    bare_number_cue: float = 0.6
    unasked_unit_cue: float = Field(default=0.3, ge=0.0, le=1.0)
    # a number written as a word ("twelve newspapers", "nine global variables") answers "how many" as a bare
    # number does (0.4, under cue_min, until the twentieth session: 7 dev answers written in words could not open)
    word_number_cue: float = 0.6
    # the cue of a comparison: a comparative, plus this when it names a word of each side of the question
    comparative_cue: float = 0.6
    both_sides_cue: float = 0.4
    # a sentence never leads when it opens with a section number and heading words (looked for in this many
    # words), or from `lead_min_words_capitalised` words on has this share of capitalised words, or no verb
    lead_heading_max_words: int = 6
    lead_min_words_capitalised: int = 3
    lead_max_capitalised_share: float = Field(default=0.7, ge=0.0, le=1.0)
    # … or reads as code: at least `lead_code_min_marks` marks of code (a call with arguments, an assignment,
    # "<-", "==", braces, a snake_case or camelCase name), and at least `lead_code_share` of them a word
    lead_code_min_marks: int = Field(default=3, ge=1)
    lead_code_share: float = Field(default=0.25, ge=0.0)
    # a question about the source itself (who wrote it, when it was published): a sentence of a document's
    # front matter (among the first `front_matter_sentences` of its first passage) that bears the cue gains
    # this much value, and may open the summary though it is a byline or a date line without a verb
    front_matter_sentences: int = Field(default=3, ge=0)
    front_matter_weight: float = Field(default=0.5, ge=0.0, le=1.0)


class ExtractiveSettings(Section):
    """The extractive writer, findings first (answer/extractive.py; the module docstring has the formulas): a
    sentence's value for a target is (1 - finding_weight) * relevance + finding_weight * finding score, among
    sentences whose support clears support_threshold. Tuned on PubMedQA train questions
    (benchmarks/answers_tuning.py)."""

    # a sentence's support for a target: lexical_weight * lexical + (1 - lexical_weight) * cosine
    lexical_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    # a sentence may be quoted when its support reaches support_threshold; its relevance counts from
    # relevance_floor (0 there, 1 for the best sentence), so a sentence in between ranks by what it says itself
    # and by the cue of the answer asked for. Apart since the ninth session: one bar at 0.3 let weak findings
    # open answers ("What is FAISS …?" opened with "The second example is one where BM25 does better"); 0.3 to
    # quote and 0.35 to rank quotes a venue line a "when and where" question asks for and changes no opening
    # of the 88 (docs/benchmarks/documents.md). 0.25 since the twenty-fifth session: a reader's words share few
    # with the sentence that answers, whose support was 0.2-0.3 in 34 of two dev sets' 326 questions, so it was
    # never quoted (dev: summaries +7, false abstentions -24 over 705, unanswerable "not stated" -5 of 72;
    # docs/benchmarks/answer-decision.md)
    support_threshold: float = 0.25
    relevance_floor: float = 0.35
    redundancy_threshold: float = 0.8
    min_sentence_tokens: int = 3  # evidence sentences with fewer stemmed terms are never quoted
    # a "sentence" of more words than this that holds quotation marks is quoted by the sentences inside them
    # (text.quoted_sentences): the splitter keeps a quotation whole, and a novel's paragraph of dialogue was
    # one sentence that the summary's contract cut and the citation check then replaced (0 turns it off)
    quotation_split_words: int = Field(default=40, ge=0)
    # a "sentence" that runs this many "Label: value" pairs together (a report's "Skewed: right Outliers: None Gap:
    # None") is quoted by its pairs (text.labelled_parts; 0 turns it off)
    label_split_min_labels: int = Field(default=3, ge=0)
    # a sentence ending in a colon ("… started by running the command:") is quoted with the sentence after it (the
    # command, a list's first item) when the two hold at most this many words (Chunk.answer_sentences; 0 never)
    lead_in_run_on_words: int = Field(default=40, ge=0)
    # per answer part, most lexically similar first; 0 embeds all. 0 since the twentieth session: a reader's words
    # share few terms with the sentence that answers, which then went unembedded (dev: 5 more summaries state
    # the answer over 9 sets; the writer's time 1.7x, docs/benchmarks/answer-decision.md)
    max_embedded_sentences: int = 0
    finding_weight: float = 0.3
    descriptive_finding_weight: float = 0.1  # for what/how questions, which a description answers
    elide_statistics: bool = (
        True  # quoted sentences leave out parenthesised statistics (the source keeps them)
    )
    sentence_relevance_weight: float = (
        0.5  # relevance: this much from the sentence alone, the rest with its study
    )
    study_support_share: float = 0.9  # a sentence earns this share of its study's support (sentences, title)
    # a sentence that refers back ("it", "they" among its first neighbour_reference_words words) has
    # at least this share of the support of the sentence before it in its passage, which names what it
    # speaks of ("… a Wasm file that can run by itself … Disassembling it, it's very minimal - just 87 bytes!")
    neighbour_support_share: float = Field(default=0.8, ge=0.0, le=1.0)
    neighbour_reference_words: int = Field(default=4, ge=0)
    # the first `asked_reach` sentences after a question the source asks (a FAQ's question heading, "Is DOL going
    # to show up at my shop?"), its answer, have at least `asked_support_share` of its support (0: off)
    asked_support_share: float = Field(default=0.8, ge=0.0, le=1.0)
    asked_reach: int = Field(default=2, ge=0)
    lexical_idf: bool = True  # weigh a target's terms by their rarity among the evidence's sentences
    opening_min_finding: float = 0.5  # the opening sentence is a finding this strong when any relevant one is
    opening_min_relevance: float = 0.5  # … and this relevant (0 at relevance_floor, 1 for the best sentence)
    decisive_bonus: float = 0.1  # yes/no questions: value added to a sentence that states an effect or a test
    continue_ratio: float = (
        0.75  # a further sentence joins when its value reaches this share of the opening's
    )
    # … and the places left under the summary's sentence limit go to the next sentences the opening model ranks
    # (answer.opening.ranks_rest), below that share: a stating sentence the model ranks second or third shows.
    # Not a question answered yes or no ("Is A better than B?" too): its verdict and the sentence that carries it
    # on are the summary (PubMedQA's two-sentence conclusions)
    fill_ranked: bool = True
    # a sentence of another study than the opening one joins only when its support for the question reaches
    # this share of the opening sentence's support (no padding from studies about something else)
    other_study_ratio: float = 1.0


class FindingSettings(Section):
    """A sentence's finding score (answer/findings.py): the prior of its section's role, plus ``cue_bonus`` per
    kind of finding cue (at most ``cue_cap``), minus an aim or method penalty."""

    prior_finding: float = 0.6
    prior_aim: float = 0.0
    prior_background: float = 0.1
    prior_method: float = 0.15
    prior_unknown: float = 0.35
    cue_bonus: float = 0.15
    cue_cap: float = 0.45
    aim_penalty: float = 0.5
    method_penalty: float = 0.25


class AnswerDecisionSettings(Section):
    """The answer stage's decision before it writes (answer/decision.py): whether the evidence states what was
    asked, the sentence that does, and a yes/no question's verdict. The summary's contract: at most
    ``summary_max_words`` words (citations aside) in at most ``AnswerLengthSettings.summary_max_sentences``
    sentences; the long answer at most ``long_answer_max_words``. Thresholds chosen on the dev sets
    (eval/real_docs_questions.jsonl, eval/real_docs_reader_words.jsonl, eval/real_docs_unanswerable.jsonl and
    the first blind set; docs/benchmarks/answer-decision.md)."""

    enabled: bool = True
    # the evidence states the answer when a chosen sentence's own fit to the question (lexical_weight *
    # lexical + (1 - lexical_weight) * cosine, without its study's share) reaches this …
    min_fit: float = Field(default=0.25, ge=0.0, le=1.0)
    # … and, for a question that asks no verdict, the evidence offers an opening: the opening model's best score
    # among the sentences that may open plus evidence_candidates_weight x log(1 + their number) reaches this
    # (answer/opening.py, opening_evidence; None: not read). Off by default: the weight was fitted on the dev sets
    # (unanswerable against answerable; left one set out AUC 0.70) and 2.56, the 0.04 quantile of their
    # answerable questions, says "not stated" for 49 of their 132 unanswerable questions instead of 30 at 0.052
    # false abstention instead of 0.027; on the held-out sets it caught 3 more of 69 unanswerable questions for
    # 12 more of 583 answerable ones (docs/benchmarks/answer-decision.md, thirty-first session)
    min_opening_evidence: float | None = None
    evidence_candidates_weight: float = 1.248
    # … and, for a kind of question whose answer has a mark of its own (a number for an amount, a date for a
    # time), a sentence chosen bears that cue (kinds.cue_min)
    require_cue_for: frozenset[str] = frozenset({"amount", "time"})
    # … and for an amount asked in a unit (money, a duration, a length, a mass, a data size), a number in it
    require_unit_asked: bool = True
    # … and for a "how many <noun>" question, a chosen sentence names the noun (asked_units.names_counted): "16 for
    # the example of the MSP430" does not say how many credits a course is worth. Off: chosen on dev (blind20 4 -> 6
    # of 24 unanswerable "not stated", blind19 one more false abstention), the held-out run then gave no more
    # unanswerable question "not stated" and 3 more of 152 answerable ones (docs/benchmarks/answer-decision.md,
    # thirty-fourth session)
    require_counted_noun: bool = False
    # … and for a question that names a year ("Who ran IBM in 2010?"), a chosen sentence's passage names it.
    # Off: chosen on dev (2 of 9 unanswerable more abstained, no false abstention), the held-out run then gave
    # 5 false abstentions on answerable questions (a year a document's title holds, "the 2013 Top 10") for 2
    # right ones (docs/benchmarks/answer-decision.md)
    require_years_asked: bool = False
    # … and for a question that names something (a capitalised word after its first, a word with a digit, a year:
    # "Canada", "O'Reilly", "T5", "2017"), the context (its passages, their titles and file names) mentions each.
    # A name nothing found mentions cannot be what the evidence states ("Is it legal to keep a wild duck as a pet
    # in Canada?" over a page on ducks that never names Canada). Chosen on dev: 4 of 22 unanswerable questions
    # answered before say not stated (and a year: 1 of 5 more), 2 of 308 stated answers turn to not stated
    require_names_asked: bool = True
    # a yes/no question: the sources disagree when a sentence of another document, fitting the question at
    # least this share of the opening's fit, says the opposite (0 turns the check off) …
    disagree_fit_ratio: float = Field(default=0.95, ge=0.0, le=1.0)
    # … and fits it at least this much itself, as a sentence that states an answer does (the median fit of the
    # chosen sentences that state the labelled answer of a yes/no question on the dev sets, 0.49; others 0.39):
    # "They have been with this company for four years" does not dispute "Does the company have its own
    # lawyers?" because both fit a weak opening alike …
    disagree_min_fit: float = Field(default=0.5, ge=0.0, le=1.0)
    # … and is one of the summary's sentences, so the reader sees both sides (False: any sentence of the context)
    disagree_shown_only: bool = True
    # a yes/no question: the first chosen sentence after the opening that says the opposite of what the question
    # asks and fits it at least this share of the opening's fit opens instead (above 1 turns it off). Chosen on
    # the dev sets' cached contexts: 0.8 gave the verdict right 46 -> 49 of 95 and the first sentence stating
    # the answer 30 -> 33, no "yes" question turned (docs/benchmarks/answer-decision.md, twenty-first session)
    denial_open_fit_ratio: float = Field(default=0.8, ge=0.0)
    # an amount or a name: the table row that fits the question (kinds.row_min_fit) opens the summary, as the
    # unit that states it, instead of ending it
    row_leads: bool = True
    # a line without a verb or of mostly capitalised words (a table row, a date line: "Parameter: Simulation Time |
    # Value: 100 sec", "July 19, 2024") may open the summary when it bears the cue of the answer asked for
    # (kinds.cue_min) and its relevance reaches this (1 for the context's best sentence; above 1 turns it off)
    fragment_open_relevance: float = Field(default=0.7, ge=0.0)
    # … and for a yes/no question, which has no cue, a line without a verb at that relevance alone (a slide's
    # "Lighter weight than VMs"; not a line of capitals: "ON WRIT OF CERTIORARI … JUSTICE SOTOMAYOR delivered …")
    fragment_opens_yes_no: bool = True
    summary_max_words: int = Field(default=120, ge=10)
    long_answer_max_words: int = Field(default=400, ge=20)
    # the sentences a not-stated summary quotes after saying so: the closest evidence, marked as such
    not_stated_closest: int = Field(default=2, ge=0)
    # … also when none is supported enough to be chosen (extractive.support_threshold), from those whose support
    # reaches this: a near miss in other words than the question's is shown (the dev sets' 0.21-0.30), off-topic
    # evidence is not (a stroke question over a vitamin D abstract: 0.03)
    closest_min_support: float = Field(default=0.15, ge=0.0, le=1.0)


class AnswerOpeningSettings(Section):
    """The quick summary's first sentence (answer/opening.py): of the sentences that may open it, the one with
    the highest linear score over what the writer knows of each (the weights below, one per feature). Fitted by
    logistic regression (scikit-learn, C 0.3, balanced classes) on whether the sentence states the answer phrase,
    over the dev sets' research contexts: the 88, the reader-words set and blind sets 1-5 (430 questions with a
    sentence that may open); left-one-set-out it chose a stating sentence for 0.521 of them against 0.447 for the
    writer's own order, and 0.500 without the table row's share of the question's terms (``row_coverage``;
    ``benchmarks/opening_model.py``; docs/benchmarks/answer-decision.md, eighteenth session). A multi-part
    question keeps one opening per part, as before."""

    enabled: bool = True
    # the summary's further sentences follow the model's ranking too (each valuable enough:
    # extractive.continue_ratio), not the writer's value order
    ranks_rest: bool = True
    value: float = 3.493  # the sentence's value for the question (extractive.py, with_cue)
    below_best: float = 3.405  # its value minus the best value among the sentences that may open
    relevance: float = 2.199
    support: float = -4.383
    alone: float = -0.399  # its own support without its study's share
    fit: float = 2.003  # its own fit to the question (lexical and embedding)
    finding: float = -0.812
    row_fit: float = 1.1  # a table row's fit (answer/table_rows.py)
    phrase: float = 1.985  # the question's word pairs it holds
    cued: float = 0.075  # it bears the cue of the answer asked for (kinds.cue_min)
    may_lead: float = -0.781  # no lead fault (answer/lead_guard.py)
    table_row: float = -4.047
    context_rank: float = 2.051  # 1 / its passage's number in the context
    front_matter: float = -0.036
    role_known: float = -0.079
    log_words: float = -0.331  # log(1 + its words)
    decisive: float = -0.159  # it states an effect, a comparison or a test
    row_coverage: float = 4.626  # a table row's share of the question's terms, with its caption's


class AnswerReaderSettings(Section):
    """The sentence reader (answer/reader.py): a cross-encoder fine-tuned from MiniLM-L6 that reads the question
    and a sentence together and scores whether the sentence states the answer. It re-reads the opening model's
    ``top_k`` best candidates; its probability, times ``weight``, is added to their opening score. Its recipe and
    weight were chosen training on half of the dev sets and measuring on the other half (thirty-first session); the
    shipped layers are trained on all eighteen dev sets, every layer, two epochs at 1e-4 with five negatives a
    question (``benchmarks/sentence_reader.py``; docs/benchmarks/answer-decision.md, forty-second session)."""

    enabled: bool = True
    # the model whose word embeddings the reader keeps (its trained layers ship with deepcite)
    base_model: str = "all-MiniLM-L6-v2"
    top_k: int = Field(default=10, ge=1)  # the opening model's best candidates the reader re-reads
    weight: float = Field(default=6.0, ge=0.0)  # its probability's weight in the opening score
    max_tokens: int = Field(default=96, ge=16)  # question and sentence together, the sentence truncated
    cache_size: int = Field(default=20_000, ge=1)  # (question, sentence) scores kept


class AnswerSettings(Section):
    """The grounded answer stage, one section per concern."""

    length: AnswerLengthSettings = Field(default_factory=AnswerLengthSettings)
    context: AnswerContextSettings = Field(default_factory=AnswerContextSettings)
    budget: AnswerBudgetSettings = Field(default_factory=AnswerBudgetSettings)
    citations: CitationSettings = Field(default_factory=CitationSettings)
    guards: AnswerGuardSettings = Field(default_factory=AnswerGuardSettings)
    extractive: ExtractiveSettings = Field(default_factory=ExtractiveSettings)
    kinds: AnswerKindSettings = Field(default_factory=AnswerKindSettings)
    findings: FindingSettings = Field(default_factory=FindingSettings)
    decision: AnswerDecisionSettings = Field(default_factory=AnswerDecisionSettings)
    opening: AnswerOpeningSettings = Field(default_factory=AnswerOpeningSettings)
    reader: AnswerReaderSettings = Field(default_factory=AnswerReaderSettings)
    embedding_cache_size: int = (
        20_000  # sentence vectors kept by the extractive writer and the citation check
    )
