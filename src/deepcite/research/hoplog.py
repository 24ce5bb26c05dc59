"""Per-hop log lines written for people: the aspects, each hop's sub-question, what it found, the decision."""

from __future__ import annotations

from deepcite.models import ChainStep, RoundReport, coverage_percent
from deepcite.research.state import BridgeHop, HopChoice, ResearchPlan


def format_plan(plan: ResearchPlan) -> str:
    """One line naming the aspects found, the planned sub-questions and a decomposed question's steps."""
    aspects = "; ".join(f"{a.aspect} ({a.aspect_type}, {a.importance:.1f})" for a in plan.aspects)
    terms = (
        f" | must keep: {', '.join(plan.intake.must_preserve_terms)}"
        if plan.intake.must_preserve_terms
        else ""
    )
    chain = f" | chain: {' -> '.join(plan.chain)}" if plan.chain else ""
    steps = f" | steps the beam follows: {' -> '.join(plan.steps)}" if plan.steps else ""
    return f"plan: {len(plan.aspects)} aspects: {aspects}{terms}{chain}{steps}"


def format_chain_step(step: ChainStep, hop: int) -> str:
    """One line per chain hop: its query, the answer entities it found, and its passages' titles."""
    answers = ", ".join(step.answers) or "none"
    titles = "; ".join(title for _, title in step.passages) or "none"
    return f"chain hop {hop} (round {step.round}): {step.query!r} -> answer {answers} | passages: {titles}"


def format_bridge_hop(hop: BridgeHop) -> str:
    """One line per beam hop: each chain it followed (the candidates of the hops before, then the one followed),
    the page found naming it or "nothing found", its support and whether it stayed; then what the next hop
    follows, read from the passages found for the winners, or the next-best candidates tried after a hop that
    found nothing to go on, and those of the first reading tried again after a first hop of weak support."""
    links = "; ".join(
        f"{' -> '.join(link.path)}: {repr(link.title) if link.title is not None else 'nothing found'} "
        f"(support {link.support:.2f}, {'kept' if link.kept else 'dropped'})"
        for link in hop.links
    )
    names = ", ".join(hop.next) or "none"
    following = f"found nothing to go on, next-best: {names}" if hop.retry else f"next: {names}"
    if hop.second:
        following += f" (weak first hop, tried again: {', '.join(hop.second)})"
    return f"bridge hop (round {hop.round}): {links} | {following}"


def format_next_hop(choice: HopChoice) -> str:
    """One line for the LLM's reading after a round: answered, or the next query and its entity; and the
    passages (numbered as it was shown them) it read facts from."""
    facts = (
        f"; facts from passages {', '.join(str(i + 1) for i in choice.supporting)}"
        if choice.supporting
        else ""
    )
    if choice.answered:
        return f"next hop (LLM, after round {choice.round}): the evidence answers the question{facts}"
    entity = f" about {choice.entity}" if choice.entity else ""
    return f"next hop (LLM, after round {choice.round}): {choice.next_query!r}{entity}{facts}"


def format_hop(report: RoundReport, evidence_total: int) -> str:
    """One line per hop: sub-question, documents found, coverage, what is still uncovered, the decision, and the
    follow-ups it did not run as noise."""
    uncovered = "; ".join(report.uncovered_aspects) or "none"
    skipped = "; ".join(f"{q.text!r} ({q.reason})" for q in report.skipped_queries)
    return (
        f"hop {report.round}: {report.subquestion!r} -> {report.candidates_after_fusion} candidates, "
        f"{len(report.selected)} selected ({report.new_evidence} new, {evidence_total} in evidence) | "
        f"coverage {coverage_percent(report.weighted_coverage)}% | "
        f"uncovered: {uncovered} | {report.decision}: {report.reason}"
        + (f" | not run, noise: {skipped}" if skipped else "")
    )
