"""How ``eval answers`` scores a summary against a reference: citations and the unknown phrase never count."""

from deepcite.answer.prompts import UNKNOWN
from deepcite.evaluation.answer_figures import plain, rouge_l


def test_citations_and_the_unknown_phrase_are_not_scored() -> None:
    reference = "Statins lowered the risk of stroke in older adults."
    cited = f"Statins lowered the risk of stroke in older adults [1]. {UNKNOWN}"
    assert plain(cited) == reference
    assert rouge_l(cited, reference).fmeasure == 1.0


def test_rouge_l_rewards_the_longest_common_subsequence() -> None:
    reference = "Statins lowered the risk of stroke in older adults."
    near = rouge_l("Statins lowered stroke risk [2].", reference)
    far = rouge_l("The trial enrolled 400 patients [2].", reference)
    assert 0.0 < far.fmeasure < near.fmeasure < 1.0
    assert near.precision > near.recall  # four of its five words follow the reference's order
