"""The three analyses as LLM calls with a JSON schema; each reply is parsed, validated and trimmed.

A reply must follow the JSON Schema it was asked for (every required key, no other key, the enums), then
the pydantic model; an intent that names no term at all is no analysis either. A reply that is not usable
raises (LLMError, ValueError or pydantic's ValidationError); the caller
(:mod:`deepcite.practitioners.analysis`) then falls back to the offline analysis and says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, get_args

from deepcite.config import PractitionerSettings
from deepcite.errors import LLMError
from deepcite.llm.client import LLMClient, Message
from deepcite.llm.json import extract_json, validate_reply
from deepcite.practitioners.catalogue import Catalogue, Specificity
from deepcite.practitioners.offline import Conversation
from deepcite.practitioners.schemas import ClinicalIntent, GeneralIntent, Insights, Urgency

_LIST = {"type": "array", "items": {"type": "string"}}

INSIGHTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "symptoms": _LIST,
        "preferences": _LIST,
        "urgency": {"type": "string", "enum": list(get_args(Urgency))},
        "specialty": {"type": ["string", "null"]},
        "location": {"type": ["string", "null"]},
        "population": {"type": ["string", "null"]},
        "summary": {"type": "string"},
    },
    "required": ["symptoms", "preferences", "urgency", "specialty", "location", "population", "summary"],
    "additionalProperties": False,
}

GENERAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string"},
        "specificity": {"type": "string", "enum": list(get_args(Specificity))},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "expansion_terms": _LIST,
        "negative_terms": _LIST,
        "anchor_phrases": _LIST,
        "likely_subspecialties": _LIST,
    },
    "required": [
        "goal",
        "specificity",
        "confidence",
        "expansion_terms",
        "negative_terms",
        "anchor_phrases",
        "likely_subspecialties",
    ],
    "additionalProperties": False,
}

CLINICAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "primary_intent": {"type": "string"},
        "expansion_terms": _LIST,
        "negative_terms": _LIST,
        "likely_subspecialties": _LIST,
    },
    "required": ["primary_intent", "expansion_terms", "negative_terms", "likely_subspecialties"],
    "additionalProperties": False,
}

_INSIGHTS_TASK = (
    "You read a patient's conversation with a practitioner-finder service. Extract: symptoms (the patient's "
    "own words), preferences (e.g. female practitioner, language, hours), urgency (crisis, emergency, "
    "urgent or routine), the single specialty that fits best, the location the patient mentions (or null), "
    "the population the care is for ('child' or 'older adult', or null; a later message overrides an earlier "
    "one), and a one-sentence summary. Answer with one JSON object only."
)
_GENERAL_TASK = (
    "Classify a patient's request for a medical practitioner. goal: what they want, in a few words. "
    "specificity: named_procedure (they name a procedure), confirmed_diagnosis (they state a diagnosis they "
    "have), symptom (they describe symptoms) or general (vague). confidence: 0..1 that you understood the "
    "need. expansion_terms: words a matching practitioner's profile would contain (specialty names, "
    "procedures, conditions). anchor_phrases: 1-3 exact phrases that identify the best-fitting specialists. "
    "negative_terms: words marking practitioners who do NOT fit (leave empty if unsure). "
    "likely_subspecialties: specialty names. Answer with one JSON object only."
)
_CLINICAL_TASK = (
    "Map a patient's request to a clinical intent. primary_intent: the best id from the list below, or a "
    "short snake_case id of your own. expansion_terms: clinical words a matching practitioner's profile "
    "would contain. negative_terms: words marking practitioners who do NOT fit. likely_subspecialties: "
    "specialty names as the directory writes them (list below). Answer with one JSON object only."
)


def parse_json_reply(text: str) -> Any:
    """The JSON value in an LLM reply. The one place to swap the tolerant JSON parser."""
    return extract_json(text)


def _object(reply: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The reply's JSON object, checked against the ``schema`` it was asked for (LLMError naming what fails)."""
    return validate_reply(parse_json_reply(reply), schema)


def _require_terms(data: dict[str, Any], keys: Sequence[str], what: str) -> dict[str, Any]:
    """LLMError when every one of ``keys`` is an empty list: an intent without a term finds no one."""
    if not any(data.get(key) for key in keys):
        raise LLMError(f"the LLM's {what} names no terms ({', '.join(keys)} all empty)")
    return data


def _trim(data: dict[str, Any], keys: Sequence[str], limit: int) -> dict[str, Any]:
    for key in keys:
        if isinstance(data.get(key), list):
            data[key] = data[key][:limit]
    return data


def _messages(task: str, conversation: Conversation) -> list[Message]:
    return [
        {"role": "system", "content": task},
        {"role": "user", "content": f"Conversation:\n{conversation.transcript()}"},
    ]


async def llm_insights(
    llm: LLMClient, conversation: Conversation, settings: PractitionerSettings
) -> Insights:
    """Insights from the LLM (``location`` given by the caller wins over the model's guess)."""
    reply = await llm.achat(_messages(_INSIGHTS_TASK, conversation), schema=INSIGHTS_SCHEMA)
    data = _trim(
        _object(reply, INSIGHTS_SCHEMA), ("symptoms", "preferences"), settings.analysis.max_llm_terms
    )
    insights = Insights.model_validate(data)
    if conversation.location:
        insights.location = conversation.location
    return insights


async def llm_general(
    llm: LLMClient, conversation: Conversation, settings: PractitionerSettings
) -> GeneralIntent:
    """General intent from the LLM."""
    reply = await llm.achat(_messages(_GENERAL_TASK, conversation), schema=GENERAL_SCHEMA)
    keys = ("expansion_terms", "negative_terms", "anchor_phrases", "likely_subspecialties")
    data = _require_terms(
        _object(reply, GENERAL_SCHEMA), ("expansion_terms", "anchor_phrases"), "general intent"
    )
    return GeneralIntent.model_validate(_trim(data, keys, settings.analysis.max_llm_terms))


async def llm_clinical(
    llm: LLMClient,
    conversation: Conversation,
    settings: PractitionerSettings,
    catalogue: Catalogue,
    specialties: Sequence[str],
) -> ClinicalIntent:
    """Clinical intent from the LLM, told the catalogue's intent ids and the directory's specialties."""
    messages = _messages(_CLINICAL_TASK, conversation)
    ids = ", ".join(intent.id for intent in catalogue.intents)
    messages[0]["content"] += f"\nKnown intents: {ids}\nDirectory specialties: {'; '.join(specialties)}"
    reply = await llm.achat(messages, schema=CLINICAL_SCHEMA)
    keys = ("expansion_terms", "negative_terms", "likely_subspecialties")
    data = _require_terms(
        _object(reply, CLINICAL_SCHEMA), ("expansion_terms", "likely_subspecialties"), "clinical intent"
    )
    return ClinicalIntent.model_validate(_trim(data, keys, settings.analysis.max_llm_terms))
