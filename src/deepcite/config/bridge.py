"""Settings of the research's bridge beam: reading a hop's answer from its passages and following the best of
them, hop by hop (research/bridge.py, research/nodes/read_bridge.py)."""

from __future__ import annotations

from pydantic import Field

from deepcite.config.section import Section


class BridgeSettings(Section):
    """Read the bridge and keep a beam (research/bridge.py, research/nodes/read_bridge.py): after the first hop,
    the candidate answers of the hop read from its best passages by the relation the question names; the best
    `beam` of them are followed, each with its own queries (its name, and its name with the question's words
    its passage lacks); the next round's evidence scores them and the losers drop. Up to `max_depth` such
    hops, within the question's hop cap. On by default since issue 31: on the train samples (60 questions
    each, with names to pages) it moved recall@5 / @10 / all@10 on MuSiQue from 0.739 / 0.817 / 0.650 to 0.739 /
    0.822 / 0.650 and on HotpotQA from 0.925 / 0.967 / 0.933 to 0.942 / 0.992 / 0.983, at about 0.07 s more a
    question (beam 4 or max_depth 1 cost MuSiQue recall@5; its first reading held the first hop's answer in 42
    of 60 MuSiQue questions, the plain bridge hop's names in 38)."""

    enabled: bool = True
    beam: int = Field(default=3, ge=1)  # bridge candidates kept and followed
    # beam hops per question (each one research round): a three-hop chain's last hop and a four-hop chain's third
    # are followed from the passages found for the hop before. 3 since issue 49's twenty-third session (with
    # demonyms on), chosen on the train samples only: MuSiQue train 0.836 / 0.888 / 0.760 -> 0.838 / 0.888 / 0.770
    # recall@5 / @10 / all@10 (a four-hop chain reaches Trajan through the Roman Empire), HotpotQA train 0.980 /
    # 0.995 / 0.990 unchanged; earlier (issue 49, fifteenth and twenty-first sessions) 3 cost a HotpotQA train
    # question and 2 was kept. Profile before_beam_depth3 is 2 (docs/benchmarks/multihop.md)
    max_depth: int = Field(default=3, ge=0)
    passages: int = Field(default=3, ge=1)  # a hop's best passages the candidates are read from
    min_ratio: float = 0.3  # a candidate is kept when it scores at least this share of the best one
    # hits of a candidate's name query (0: research.retrieval.bridge_k, as every other follow-up of a name)
    name_k: int = Field(default=0, ge=0)
    # a name scores 1/rank of its passage times: 1 + `near_weight` x its nearness to a relation word of the
    # question (within `near_window` words) + `lead_weight` in the passage's first sentence (the apposition
    # after a title); a passage's title `title_weight`; plus `agree_weight` per further passage naming it and
    # `page_weight` when it names a page of the collection
    near_weight: float = 2.0
    near_window: int = 8
    lead_weight: float = 3.0
    title_weight: float = 0.5
    agree_weight: float = 0.5
    page_weight: float = 1.0
    # a name in the disambiguation of a title whose head the question names ("Jerry Lee Lewis" of "It'll Be Me
    # (Jerry Lee Lewis song)": the song's singer) scores this, read from every passage of the hop (0: off). 4.0
    # with skip_own_aliases (issue 49, twenty-first session, chosen on the train samples: see skip_own_aliases)
    qualifier_weight: float = 4.0
    # the first reading: a passage weighs 1/rank x (`unnamed_weight` + (1 - `unnamed_weight`) x the share of the
    # question's names it mentions, each counted 1 / log2(2 + passages mentioning it), of those any read passage
    # mentions), over the best passage's; 1.0: off. The first hop's answer stands on the page of a name the
    # question gives. 0.6 since issue 49's twenty-eighth session, chosen on the train samples only: MuSiQue train
    # 0.856 / 0.915 / 0.820 -> 0.856 / 0.920 / 0.830 recall@5 / @10 / all@10 (0.7 the same; 0.5 0.8575 / 0.915 /
    # 0.820; 0.8 lower), HotpotQA train unchanged at 0.6 (0.980 / 0.995 / 0.990). Profile before_unnamed_weight is
    # 1.0 (docs/benchmarks/multihop.md)
    unnamed_weight: float = Field(default=0.6, ge=0.0, le=1.0)
    # the sum is divided by log2(2 + passages of the collection mentioning the name) ** `specificity` (0: off;
    # 1 cost the first hop's answer in 8 of 60 MuSiQue train questions: bridges are often countries and states)
    specificity: float = 0.0
    # after a beam hop, a followed candidate whose best passage's relevance falls under `drop_ratio` of the best
    # candidate's drops out; its passages' pack scores are multiplied by `loser_decay`. 0.6 since issue 49's
    # twenty-second session (with support_reading_weight, which makes the winner the first hop's answer more
    # often; chosen on the train samples only): MuSiQue train 0.826 / 0.888 / 0.760 -> 0.829 / 0.888 / 0.760 at
    # 0.5-0.65 (0.3: 0.824 / 0.883 / 0.750; 0.8: unchanged), HotpotQA train 0.980 / 0.995 / 0.990 at 0.3-0.8;
    # profile before_loser_decay is 1.0 (docs/benchmarks/multihop.md)
    drop_ratio: float = 0.8
    loser_decay: float = 0.6
    # a followed candidate's support: its best passage's relevance + this x the share of the question's
    # remaining words (those the passage it was read from lacks) that passage holds
    support_residual_weight: float = 1.0
    # plus this x the candidate's reading score (its share of its reading's best, times the support share of the
    # winner it was read from): what the passage before said of it, beside what its own queries found; nothing
    # when they found no passage naming it (0: off; profile before_support_reading). 2.0 since issue 49's
    # twenty-second session, chosen on the train samples only: the first reading's candidate that is the first
    # hop's answer stayed among the winners in 57 of the 71 MuSiQue train questions where the beam held it, from
    # 49 (a hub such as "United States" or a name matching the question's last words, "Jacksons International
    # Airport", outscored it); MuSiQue train 0.827 / 0.883 / 0.750 -> 0.826 / 0.888 / 0.760, flat over 1.5-2.0,
    # HotpotQA train 0.980 / 0.995 / 0.990 at 1.0-3.0 (docs/benchmarks/multihop.md)
    support_reading_weight: float = Field(default=2.0, ge=0.0)
    # that reading score is divided by log2(2 + passages of the collection mentioning the candidate) ** this (0:
    # off), unless the question wants a country or a continent on the way (`support_spare_nations`:
    # answer_types.bridges_a_nation; there the chain goes through a name every passage mentions): a hub read from
    # several passages of the hop ("United States" against Wilmington) keeps less of its reading's lead and
    # wins by what its own queries found. 0.5 since issue 49's twenty-fifth session, chosen on the train samples
    # only: the first hop's answer stays among the winners in 60 of MuSiQue train's 100 questions, from 58 (none
    # lost), MuSiQue train 0.841 / 0.8875 / 0.770 -> 0.841 / 0.891 / 0.770 (one passage; 1.0 the same), HotpotQA
    # train 0.980 / 0.995 / 0.990 unchanged question by question; without sparing the nations 0.833 / 0.883 /
    # 0.760 (a four-hop chain through Britain lost). Profile before_support_specificity is 0
    # (docs/benchmarks/multihop.md)
    support_specificity: float = Field(default=0.5, ge=0.0)
    support_spare_nations: bool = True
    # the question's words that any passage of a candidate's chain holds (the one it was read from and those the
    # hops before it were read from, back to the first) are spent: no relation words of the reading that follows
    # it, and not among the remaining words its support counts (off: only the passage it was read from, so a
    # third hop's reading took the first hop's words, answered two passages back, for its relation). On since
    # issue 49's twenty-fourth session, chosen on the train samples only: MuSiQue train recall@5 0.835 -> 0.841
    # (two chains of three and four hops, no question lower), @10 and all@10 unchanged, HotpotQA train unchanged
    # question by question. The follow-up query keeps the words of the passage it was read from only: the chain's
    # words there cost MuSiQue train 0.835 / 0.888 / 0.770 -> 0.823 / 0.873 / 0.740. Profile before_spent_chain
    # is off (docs/benchmarks/multihop.md)
    spent_chain: bool = True
    residual_k: int = Field(default=5, ge=0)  # hits of a candidate's name-plus-question-words query (0: none)
    # a composed question decomposed into relation steps (research/chain.py): round 1 also searches the innermost
    # step ("performer of Green"), each reading takes its relation words from its own step, and a candidate's
    # follow-up searches the next step with its name in the slot ("Who is the spouse of Hask & Omo", `step_k`
    # hits; with `step_residual` also its name with the question's remaining words); a question of n steps gets up
    # to min(n - 1, `decompose_max_depth`) beam hops (at least `max_depth`). Only a linear chain is followed, and
    # none with a step before the last longer than `step_max_words` (a misread clause). Off by default: chosen on
    # train (MuSiQue recall@5 / all@10 0.723 / 0.640 -> 0.749 / 0.690, HotpotQA train equal), it did not hold on the
    # held-out sets (MuSiQue dev 0.645 / 0.587 -> 0.642 / 0.543, HotpotQA-500 0.899 / 0.958 -> 0.893 / 0.954;
    # docs/benchmarks/multihop.md); the `decompose` evaluation profile measures it
    decompose: bool = False
    decompose_max_depth: int = Field(default=3, ge=0)
    # the chain's length sets the beam's depth without its step queries: a question the rules (or the LLM,
    # `llm_decompose`) read as a chain of n steps gets up to min(n - 1, `decompose_max_depth`) beam hops (at least
    # `max_depth`), so a three- or four-hop chain is followed to its end, each hop's candidates read from the
    # passages found for the candidate before. Off: on the train samples it changed no figure (the rules read two
    # of MuSiQue train's five four-hop questions as four steps or more; docs/benchmarks/multihop.md)
    chain_depth: bool = False
    # a candidate read from its own page goes on from that page too (a bridge hop never selects the passage its
    # candidate was read from again, so the next reading misses it)
    own_page: bool = False
    # while the beam has a candidate left to follow, rounds without new evidence do not stop the research
    # (research.stopping.no_novelty_streak). Off, with own_page: the two with chain_depth (profile chain_follow)
    # moved MuSiQue train 0.788 / 0.858 / 0.710 -> 0.793 / 0.854 / 0.700 and HotpotQA train 0.965 / 0.990 / 0.980
    # -> 0.965 / 0.985 / 0.970
    finish_chain: bool = False
    # candidates of each reading kept past the beam's width (0: none): when a beam hop finds nothing to go on
    # (no followed candidate's name is in a passage its queries found, or the winners' passages give no new
    # candidate), the next round follows the next-best of them instead of leaving the chain. Off: 3 cost MuSiQue
    # train recall@5 0.788 -> 0.785 (a three-hop question), with or without chain_follow
    reserve: int = Field(default=0, ge=0)
    # a second try at the first hop: after the first beam hop, when the best followed candidate's support falls under
    # `retry_support` (its queries found little naming it that holds the question's other words), the first
    # reading's next `retry_width` candidates join the beam beside the winners' next reading and are followed next
    # round at depth 1 (0: off); a first hop whose candidates found nothing at all still ends the beam (`reserve`).
    # 1.5 since issue 49's twenty-sixth session, chosen on the train samples only: MuSiQue train 0.841 / 0.891 /
    # 0.770 -> 0.846 / 0.891 / 0.770 recall@5 / @10 / all@10 ("The state where Henry Worrall died": Kansas, fifth
    # in the first reading, is tried after "United States" wins with 1.30), the first hop's answer held 0.75 ->
    # 0.78; 1.75 the same, 1.25 no change, 2.0 cost two chains of three and four hops; with the candidates that
    # found nothing retried too 0.843; HotpotQA train 0.980 / 0.995 / 0.990 unchanged. Profile before_retry is 0
    # (docs/benchmarks/multihop.md)
    retry_support: float = Field(default=1.5, ge=0.0)
    retry_width: int = Field(default=3, ge=0)
    # the names the question gives are tried then too, each followed like a candidate read from the round's best
    # passage with this reading score (its share of the first reading's best; 0: off): a name's own page may hold
    # the first hop's answer where the round's passages did not ("Hans Edler", "Brother"). 1.0 since issue 49's
    # twenty-sixth session, chosen on the train samples only: MuSiQue train 0.846 / 0.891 / 0.770 -> 0.852 / 0.898
    # / 0.780 (the two questions above, none lower; 1.5 the same, 0.5 0.848 / 0.891 / 0.770; tried also where the
    # first hop's candidates found nothing 0.843 / 0.898 / 0.780), HotpotQA train unchanged
    retry_names: float = Field(default=1.0, ge=0.0)
    step_k: int = Field(default=5, ge=1)
    step_residual: bool = True
    step_max_words: int = Field(default=15, ge=1)
    step_passages_first: bool = False  # the first reading takes the innermost step's passages first
    # a relation noun's cue words count as relation words too ("birthplace": "born"; research/bridge.py). Off: +0.013
    # / +0.004 recall@5 on MuSiQue train / dev, -0.001 on HotpotQA-500 (docs/benchmarks/multihop.md)
    relation_cues: bool = False
    # a name the passage's own page is known by (its title's other forms, the lead name of its first sentence,
    # the names in parentheses or after "also known as": research.ranking.alias_max_words /
    # alias_lead_chars) is no candidate read from that passage: "Peter Phillip Bonetti" on the page "Peter
    # Bonetti" restates the page, it answers nothing. On since issue 49's twenty-first session with
    # qualifier_weight 4.0, chosen on the train samples only (recall@5 / @10 / all@10 MuSiQue 0.810 / 0.871 / 0.740
    # -> 0.815 / 0.883 / 0.750, the first reading holding an earlier hop's answer 0.70 -> 0.75; HotpotQA 0.980 /
    # 0.995 / 0.990 unchanged; profile before_own_aliases is the old reading). With min_ratio 0.5 and name_k 5
    # too (profile beam_reading) MuSiQue train gains more and HotpotQA train loses a question (all@10 0.980):
    # those two stay off (docs/benchmarks/multihop.md)
    skip_own_aliases: bool = True
    # a demonym is read as the place it names ("a Chinese journalist": China; research/demonyms.py) when the
    # question wants a country, a continent or any place (research/answer_types.py, wants_a_nation), scoring the
    # better of the two where the place is read too. On since issue 49's twenty-third session, chosen on the train
    # samples only: MuSiQue train 0.829 / 0.888 / 0.760 -> 0.836 / 0.888 / 0.760 recall@5 / @10 / all@10 (two
    # three-hop chains through "Mexican" and "Swedish"); without the question's wanting a nation 0.831 / 0.883 /
    # 0.750 ("Portuguese" beat a city of birth); HotpotQA train 0.980 / 0.995 / 0.990 unchanged; profile
    # before_demonyms is off (docs/benchmarks/multihop.md)
    demonyms: bool = True
    # the answer's type (research/answer_types.py): the kinds of answer the question's own words name ("the country
    # where", "in what county", "the director of", an opening "who" / "where") against what each candidate's own
    # page calls it (its lead sentence, kept at ingest: graph.leads, at most `type_lead_words` words after the
    # copula; else its title's type noun): a candidate that fits scores x (1 + `type_weight`), one whose page is
    # clearly something else (a district where a country is wanted, a place where only people are) x 1 / (1 +
    # `type_mismatch_weight`); a page or a question whose type does not read is neutral (both 0: off). Off by
    # default: on the train samples mismatch 1.0 raised the first reading's hold on the first hop's answer (MuSiQue
    # 0.68 -> 0.72) and moved no recall; type_weight 0.25-1.0 cost MuSiQue recall@5 0.005-0.015; the evaluation
    # profile `beam_types` measures it (docs/benchmarks/multihop.md)
    type_weight: float = Field(default=0.0, ge=0.0)
    type_mismatch_weight: float = Field(default=0.0, ge=0.0)
    type_lead_words: int = Field(default=10, ge=1)
    # with an LLM configured, its decomposition replaces the rules' (one more LLM call a question; off: the LLM
    # path's calls and budget stay as they were until it is measured with a real model)
    llm_decompose: bool = False
