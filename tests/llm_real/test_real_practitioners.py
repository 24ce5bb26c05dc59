"""Practitioner intent from the real llama.cpp server (SmolLM2): the three analyses (insights, general and
clinical intent) each send a request the server accepts; each comes back as a validated record from the model,
or, when the model's JSON does not fit the record, from the offline analysis with the reason said. The model
must have been asked for all three and have written at least one (analyses run offline without asking fail)."""

from __future__ import annotations

import pytest

from deepcite.config import PractitionerAnalysisSettings, PractitionerSettings
from deepcite.practitioners.analysis import run_analyses
from deepcite.practitioners.catalogue import Catalogue
from deepcite.practitioners.offline import Conversation
from deepcite.practitioners.schemas import ClinicalIntent, GeneralIntent, Insights

pytestmark = pytest.mark.real_llm


async def test_intent_analyses_with_the_model(make_client) -> None:
    catalogue = Catalogue.load()
    # the model's answers are what is tested, however busy the machine
    settings = PractitionerSettings(analysis=PractitionerAnalysisSettings(timeout_s=1200.0))
    client = make_client()
    analyses = await run_analyses(
        Conversation(
            "I keep getting palpitations and my heart races when I climb stairs", location="Portland"
        ),
        catalogue=catalogue,
        settings=settings,
        cities=["PORTLAND"],
        specialties=["CARDIOVASCULAR DISEASE", "CARDIAC ELECTROPHYSIOLOGY", "PULMONARY DISEASE"],
        llm=client,
    )
    assert len(client.calls) >= 3  # each analysis asked the model
    assert any(use.source == "llm" for use in analyses.used.values()), analyses.used
    assert isinstance(analyses.insights, Insights)
    assert isinstance(analyses.general, GeneralIntent) and isinstance(analyses.clinical, ClinicalIntent)
    for use in analyses.used.values():
        if use.source == "offline":  # never a refused request or a timeout: only a reply that did not fit
            reason = use.fallback_reason or ""
            assert not any(w in reason for w in ("did not answer", "rejected", "still failing", "404")), (
                reason
            )
